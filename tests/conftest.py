"""Shared fixtures: a clean environment, a fresh vault from the template, the CLI, and the fake LLM server."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_llm import fake_llm_server  # noqa: E402

from memvault.cli.app import app  # noqa: E402


@pytest.fixture(autouse=True)
def clean_env(monkeypatch, tmp_path_factory):
    """No MEMVAULT_*/OPENAI_* leaks in from the developer's shell; HOME is a throw-away folder."""
    for key in list(os.environ):
        if key.startswith(("MEMVAULT_", "OPENAI_", "ANTHROPIC_", "DEEPSEEK_")):
            monkeypatch.delenv(key, raising=False)
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var, value in (("GIT_AUTHOR_NAME", "memvault test"), ("GIT_AUTHOR_EMAIL", "test@memvault.invalid"),
                       ("GIT_COMMITTER_NAME", "memvault test"), ("GIT_COMMITTER_EMAIL", "test@memvault.invalid")):
        monkeypatch.setenv(var, value)
    yield


@pytest.fixture
def vault(tmp_path) -> Path:
    """A new vault copied from vault-template/."""
    target = tmp_path / "vault"
    shutil.copytree(ROOT / "vault-template", target)
    return target


class Runner:
    def __init__(self, vault_path: Path | None):
        self.vault = vault_path
        self.cli = CliRunner()

    def __call__(self, *args: str, input: str | bytes | None = None, code: int = 0, env: dict | None = None):
        argv = (["--vault", str(self.vault)] if self.vault else []) + list(args)
        result = self.cli.invoke(app, argv, input=input, env=env, catch_exceptions=False)
        assert result.exit_code == code, (
            f"exit {result.exit_code} != {code}\nstdout: {result.stdout}\nstderr: {result.stderr}"
        )
        return result

    def json(self, *args: str, **kw):
        import json

        return json.loads(self(*args, "--json", **kw).stdout)


@pytest.fixture
def run(vault) -> Runner:
    """Invoke the CLI on the `vault` fixture and check the exit code: run("stats", code=0)."""
    return Runner(vault)


@pytest.fixture
def fake_llm():
    with fake_llm_server() as server:
        yield server


@pytest.fixture
def write_protocol(vault):
    """The `vault` fixture with `distill.llm_protocol: write` (tests whose fake model writes every card)."""
    from write_protocol import use_write

    return use_write(vault)
