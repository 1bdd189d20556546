"""Issue 8 item 7: what is wrong in memvault.yaml is said on stderr as `memvault.yaml:LINE: ...`, never silently.

`stats` and `doctor` warn; a credential in the settings is damage in `doctor` (exit 3). Values are never echoed.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
import sys
from pathlib import Path


def _key() -> str:
    rng = random.SystemRandom()
    return "sk-" + "proj-" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(40))


def _append(vault: Path, text: str) -> int:
    """Append lines to memvault.yaml; returns the line number of the first appended line."""
    cfg = vault / "memvault.yaml"
    old = cfg.read_text(encoding="utf-8")
    cfg.write_text(old + text, encoding="utf-8")
    return len(old.splitlines()) + 1


def test_template_settings_raise_no_warning(run):
    res = run("stats")
    assert "memvault.yaml" not in res.stderr
    assert run.json("stats")["settings_problems"] == []
    assert run.json("doctor")["warnings"] == []


def test_duplicate_llm_block_warns_in_stats_and_doctor_with_its_line(run, vault):
    first = _append(vault, "llm:\n  timeout: 30\n")
    res = run("stats")
    assert f"memvault.yaml:{first}: duplicate key 'llm' (first at line " in res.stderr
    assert run.json("stats")["llm"]["model"] == "qwen2.5:7b-instruct"  # what the warning is about
    doc = run("doctor", code=0)  # a warning, not damage
    assert f"memvault.yaml:{first}: duplicate key 'llm'" in doc.stderr


def test_unknown_key_and_wrong_types_warn_with_lines(run, vault):
    first = _append(vault, "serach:\n  limit: 5\n默认项目: 工作\nsearch_extra: 1\n")
    cfg = vault / "memvault.yaml"
    text = cfg.read_text(encoding="utf-8")
    text = text.replace("  limit: 10 ", "  limit: ten").replace("  sidechains: false", "  sidechains: 'no'")
    text = text.replace("  fact: {pinned: false}", "  fact: {pinned: 是}")
    cfg.write_text(text, encoding="utf-8")
    lines = text.splitlines()
    line_of = {name: next(i for i, x in enumerate(lines, 1) if x.startswith(name)) for name in
               ("  limit: ten", "  sidechains:", "  fact:")}
    res = run("stats")
    err = res.stderr
    assert f"memvault.yaml:{first}: unknown setting 'serach'" in err
    assert f"memvault.yaml:{first + 2}: unknown setting '默认项目'" in err
    assert f"memvault.yaml:{first + 3}: unknown setting 'search_extra'" in err
    assert f"memvault.yaml:{line_of['  limit: ten']}: 'search.limit' should be a whole number, not text" in err
    assert f"memvault.yaml:{line_of['  sidechains:']}: 'capture.sidechains' should be true/false, not text" in err
    assert f"memvault.yaml:{line_of['  fact:']}: 'kinds.fact.pinned' should be true/false" in err
    assert "工作" not in err and "ten" not in err.replace("should be", "")  # values are not echoed
    assert len(run.json("doctor")["warnings"]) == 6


def test_api_key_in_settings_is_damage_for_doctor_and_a_warning_for_stats(run, vault):
    key = _key()
    line = _append(vault, f"llm:\n  base_url: http://127.0.0.1:9/v1\n  api_key: {key}\n") + 2
    res = run("stats")
    assert f"memvault.yaml:{line}: 'llm.api_key' holds a credential" in res.stderr and key not in res.stderr
    doc = run("doctor", code=3)
    assert f"memvault.yaml:{line}: 'llm.api_key' holds a credential" in doc.stdout
    assert f"memvault.yaml:{line}: secret in clear (rule openai-api-key)" in doc.stdout
    assert key not in doc.stdout + doc.stderr
    data = json.loads(run("doctor", "--json", code=3).stdout)
    assert data["ok"] is False and key not in json.dumps(data)
    # --fix redacts the value; the line is then only an unknown setting (a warning), and the vault is healthy.
    fixed = run("doctor", "--fix", code=0)
    assert key not in (vault / "memvault.yaml").read_text(encoding="utf-8")
    assert f"memvault.yaml:{line}: unknown setting 'llm.api_key'" in fixed.stderr


def test_a_credential_in_a_block_a_duplicate_drops_is_still_reported(run, vault):
    """The first llm: block is thrown away by the YAML parser, but its line is still on disk (and in git)."""
    line = _append(vault, "llm:\n  api_key: plain-text-value-123\nllm:\n  model: m\n") + 1
    doc = run("doctor", code=3)
    assert f"memvault.yaml:{line}: 'llm.api_key' holds a credential" in doc.stdout
    assert "plain-text-value-123" not in doc.stdout + doc.stderr


def test_stats_subprocess_warns_on_stderr(vault):
    _append(vault, "unknown_thing: 1\n")
    res = subprocess.run([sys.executable, "-m", "memvault", "--vault", str(vault), "stats", "--json"],
                         capture_output=True, text=True)
    assert res.returncode == 0 and json.loads(res.stdout)["settings_problems"]
    assert "memvault: warning: memvault.yaml:" in res.stderr and "unknown setting 'unknown_thing'" in res.stderr


def test_llm_api_key_env_is_the_documented_name_in_file_and_env(run, vault):
    """docs/configuration.md: the key's variable is named by `llm.api_key_env` (env MEMVAULT_LLM_API_KEY_ENV overrides it)."""
    res = run("stats")
    assert "api_key_env" not in res.stderr  # the template's own key is a known setting
    assert run.json("stats")["llm"]["api_key"] == "env MEMVAULT_LLM_API_KEY (not set)"
    cfg = vault / "memvault.yaml"
    text = cfg.read_text(encoding="utf-8")
    lines = [x for x in text.splitlines() if x.lstrip().startswith(("api_key_env:", "api_api_key_env:"))]
    assert lines and lines[0].startswith("  api_key_env: MEMVAULT_LLM_API_KEY")
    cfg.write_text(text.replace(lines[0], "  api_key_env: MY_FILE_KEY", 1), encoding="utf-8")
    res = run("stats")
    assert "unknown setting" not in res.stderr
    assert run.json("stats")["llm"]["api_key"] == "env MY_FILE_KEY (not set)"
    got = run.json("stats", env={"MEMVAULT_LLM_API_KEY_ENV": "MY_ENV_KEY", "MY_ENV_KEY": "x"})
    assert got["llm"]["api_key"] == "env MY_ENV_KEY (set)"
