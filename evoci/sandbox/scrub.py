"""The environment variables a test or agent command may see.

The code under test is written by the agent being measured, and its test suite runs with
whatever it is given: an API key in the environment is an API key the agent's code can
print into a test log or send somewhere. So the environment is built from an **allow-list**
of names that locale, temp files and program lookup need, not by deleting known secrets
from everything the harness has (a deny-list misses the next ``FOO_DSN`` with a password in
it). Variables that still look like secrets are dropped even when their name is allowed.
Prefect's and evoci's own settings (``PREFECT_*``, ``EVOCI_*``) never reach a sandbox.

Callers add what a command really needs as ``extra``; extras are explicit decisions and
pass unchanged (an external agent CLI, for example, is handed its own API key that way).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

# Names a command may inherit from the harness's environment.
SAFE_NAMES = frozenset(
    {
        "PATH",
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "TERM",
        "TZ",
        "TMPDIR",
        "TEMP",
        "TMP",
        "SOURCE_DATE_EPOCH",
    }
)
SAFE_PREFIXES = ("LC_",)

# Prefixes of harness internals and of credentials for services evoci talks to.
_DENIED_PREFIXES = (
    "PREFECT_",
    "EVOCI_",
    "AWS_",
    "OPENAI_",
    "ANTHROPIC_",
    "AZURE_",
    "GOOGLE_",
    "GCP_",
    "HF_",
    "HUGGING_FACE_",
    "GITHUB_",
    "GH_",
    "DOCKER_",
)
_SECRET_PATTERN = re.compile(
    r"API_?KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|ACCESS_?KEY|AUTH|COOKIE|SESSION",
)


def looks_secret(name: str) -> bool:
    """True for names of credentials and of harness internals, which no sandbox may see."""
    upper = name.upper()
    return upper.startswith(_DENIED_PREFIXES) or bool(_SECRET_PATTERN.search(upper))


def is_safe_name(name: str) -> bool:
    """True for the names a command inherits: the allow-list, minus anything secret-looking."""
    return (name in SAFE_NAMES or name.startswith(SAFE_PREFIXES)) and not looks_secret(name)


def scrubbed_env(
    base: Mapping[str, str] | None = None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The allow-listed part of ``base`` (default: this process's environment), plus ``extra``."""
    source = os.environ if base is None else base
    env = {name: value for name, value in source.items() if is_safe_name(name)}
    env.update(extra or {})
    return env
