"""scrubbed_env: commands inherit locale and paths, never credentials or harness settings."""

from __future__ import annotations

import pytest

from evoci.sandbox.scrub import looks_secret, scrubbed_env

HOST = {
    "PATH": "/usr/bin",
    "HOME": "/home/me",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "TMPDIR": "/tmp",
    "TZ": "UTC",
    "OPENAI_API_KEY": "sk-live-123",
    "ANTHROPIC_API_KEY": "sk-ant-123",
    "AWS_ACCESS_KEY_ID": "AKIA",
    "GITHUB_TOKEN": "ghp_x",
    "HF_TOKEN": "hf_x",
    "PREFECT_API_KEY": "pnu_x",
    "PREFECT_API_URL": "http://prefect:4200/api",
    "EVOCI_DB": "/data/evoci.duckdb",
    "DATABASE_PASSWORD": "hunter2",
    "MY_SERVICE_SECRET_VALUE": "x",
    "PYTHONPATH": "/somewhere/else",
    "VIRTUAL_ENV": "/harness/venv",
}


def test_only_allow_listed_names_are_inherited():
    assert scrubbed_env(HOST) == {
        "PATH": "/usr/bin",
        "HOME": "/home/me",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TMPDIR": "/tmp",
        "TZ": "UTC",
    }


def test_extras_are_added_unchanged():
    env = scrubbed_env(HOST, extra={"PYTHONPATH": "src", "VIRTUAL_ENV": "/envs/abc"})
    assert env["PYTHONPATH"] == "src" and env["VIRTUAL_ENV"] == "/envs/abc"


def test_the_default_base_is_this_process_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-live-123")
    monkeypatch.setenv("LC_TIME", "C")
    env = scrubbed_env()
    assert "OPENAI_API_KEY" not in env and env["LC_TIME"] == "C"


def test_a_secret_looking_name_is_dropped_even_under_an_allowed_prefix():
    assert scrubbed_env({"LC_API_TOKEN": "x", "LC_CTYPE": "C"}) == {"LC_CTYPE": "C"}


@pytest.mark.parametrize(
    "name",
    ["OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_AUTH_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN",
     "HF_TOKEN", "PREFECT_API_KEY", "PREFECT_HOME", "EVOCI_HOME", "DB_PASSWORD", "GOOGLE_APPLICATION_CREDENTIALS",
     "STRIPE_SECRET", "SLACK_BOT_TOKEN", "MY_APIKEY"],
)
def test_secret_names_are_recognised(name):
    assert looks_secret(name)


@pytest.mark.parametrize("name", ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TZ"])
def test_safe_names_are_not_mistaken_for_secrets(name):
    assert not looks_secret(name)
