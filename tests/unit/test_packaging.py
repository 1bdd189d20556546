"""The package installs without a warning box (issue 21, item 11): setuptools >= 77 reads `project.license` as an
SPDX expression (the TOML-table form printed a deprecation box on every install), and the editable install of
`make demo` / `make test` uses a .pth file (the default import finder printed an "Editable installation" box)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_license_is_an_spdx_string_and_the_build_backend_reads_it():
    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert data["project"]["license"] == "MIT"
    assert any(req.replace(" ", "").startswith("setuptools>=7") and int(req.split(">=")[1].split(".")[0]) >= 77
               for req in data["build-system"]["requires"]), data["build-system"]["requires"]


def _backend(tmp_path: Path, hook: str) -> tuple[Path, subprocess.CompletedProcess]:
    """Call one build-backend hook as pip does, in a copy of the project, every warning shown: the folder it
    wrote to and the process (stdout's last line is the hook's answer)."""
    import setuptools

    assert int(setuptools.__version__.split(".")[0]) >= 77, "the test extra installs setuptools>=77"
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    (src / "memvault").mkdir()
    shutil.copy(ROOT / "memvault" / "__init__.py", src / "memvault")
    out = tmp_path / "out"
    out.mkdir()
    proc = subprocess.run(
        [sys.executable, "-W", "always", "-c",
         f"import sys; from setuptools import build_meta as b; print(b.{hook}(sys.argv[1]))", str(out)],
        cwd=src, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return out / proc.stdout.strip().splitlines()[-1], proc


def test_metadata_builds_with_no_warning(tmp_path):
    """The backend call pip makes on install: no deprecation warning, the license as an SPDX expression."""
    meta_dir, proc = _backend(tmp_path, "prepare_metadata_for_build_wheel")
    assert "deprecated" not in proc.stderr.lower() and "license" not in proc.stderr.lower(), proc.stderr[-2000:]
    assert "License-Expression: MIT" in (meta_dir / "METADATA").read_text(encoding="utf-8")


def test_the_editable_install_prints_no_box(tmp_path):
    """The backend call of `pip install -e .`: no "!!" box on stderr, and the wheel is a .pth to the checkout."""
    wheel, proc = _backend(tmp_path, "build_editable")
    assert "!!" not in proc.stderr and "Editable installation" not in proc.stderr, proc.stderr[-2000:]
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith(".pth") for n in names) and not any(n.endswith("finder.py") for n in names), names
