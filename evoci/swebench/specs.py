"""Environment specs, SWE-bench style: repository × version → what the tests need installed.

SWE-bench-format records name no environment evoci can build (their ``image`` is a Docker
image that cannot be pulled here), so evoci keeps a table, as SWE-bench's harness does:
for a repository and a version, the Python version, the pip packages (pinned to the
period's releases), pip packages installed first (``pre_install``: build helpers that
later installs need), the pytest plugins the tests need loaded (grading runs with plugin
autoloading off) and the folders put on ``PYTHONPATH`` (the code under test is never
installed: the grading tree is imported from where it is).

The shipped table lives in ``environments/<owner>__<name>.json`` beside this module. A user
adds or overrides entries with a side file (``--environments FILE``) of the same shape::

    {"psf/requests": [{"versions": ["2.27"], "python": "3.9", "packages": ["pytest==6.2.5", …],
                       "pytest_plugins": ["pytest_httpbin.plugin"]}]}

An entry of the side file replaces the shipped entry for each version it lists; the records
are never touched, so their identity (content hash) stays the same.

The version a record is looked up by is the ``major.minor`` of its ``start_version`` (the
release whose code is tested), else its ``version`` field. Keys are matched exactly: the
official SWE-EVO harness matches them as substrings, which mapped public records to the
wrong environment (4 of 48 public records carry a ``version`` that is not their release's).
"""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evoci.domain import EnvironmentSpec, stable_hash
from evoci.errors import InputError
from evoci.sandbox.environment import with_harness

_VERSION = re.compile(r"^v?(\d+)\.(\d+)")


class RepoSpec(BaseModel):
    """What one repository at one version needs to run its tests."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    versions: tuple[str, ...] = Field(description="The version keys (major.minor) this entry serves.")
    python: str = Field(description="Python version, e.g. '3.9' (pyenv's or python3.9 on PATH).")
    pre_install: tuple[str, ...] = Field((), description="pip requirements installed before the packages.")
    packages: tuple[str, ...] = Field((), description="pip requirements, pinned to the period's releases.")
    pytest_plugins: tuple[str, ...] = Field((), description="Plugin modules loaded with -p (autoloading is off).")
    pythonpath: tuple[str, ...] = Field((".",), description="Folders of the grading tree put on PYTHONPATH.")
    git_checkout: bool = Field(False, description=(
        "Grade in a checkout: the grading tree gets a harness-made .git holding one commit of the clean base "
        "(tests that open the repository they run in need one)."))
    silent_network: bool = Field(False, description=(
        "Addresses beyond the sandbox's own loopback do not answer instead of being unreachable: a connection "
        "waits for its timeout, as tests of connect timeouts expect (evoci.sandbox.silent). Nothing leaves "
        "the sandbox either way."))
    note: str = ""

    @property
    def content_hash(self) -> str:
        # Keys added later are left out while off, so the specs written before them keep their identity (and caches).
        off = {name for name in ("git_checkout", "silent_network") if not getattr(self, name)}
        return stable_hash(self.model_dump(exclude={"versions", "note", *off}))

    def environment(self) -> EnvironmentSpec:
        """The environment to build: the spec's packages, and the test node's own runner packages
        (pytest, pytest-json-report) where the spec does not name them (the launcher needs both)."""
        return EnvironmentSpec(python=self.python, requirements=with_harness(self.packages, self.python),
                               pre_install=self.pre_install)


class SpecBook(BaseModel):
    """Every known spec, by repository and version key; where each came from."""

    specs: dict[str, dict[str, RepoSpec]] = Field(default_factory=dict)
    side_file_hash: str | None = None

    def lookup(self, repo: str, key: str | None) -> RepoSpec | None:
        return self.specs.get(repo, {}).get(key) if key else None


def version_key(start_version: str | None, version: str | None) -> str | None:
    """``major.minor`` of the start version ('v2.27.0' → '2.27', '1.0.0a1' → '1.0'), else ``version``."""
    for value in (start_version, version):
        match = _VERSION.match(str(value or "").strip())
        if match:
            return f"{match.group(1)}.{match.group(2)}"
    return str(version) if version else None


def load_specs(side_file: str | Path | None = None) -> SpecBook:
    """The shipped specs, with ``side_file``'s entries replacing them version by version."""
    book = SpecBook()
    folder = resources.files("evoci.swebench") / "environments"
    for item in sorted(folder.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".json"):
            _merge(book, json.loads(item.read_text()), f"evoci/swebench/environments/{item.name}")
    if side_file is not None:
        path = Path(side_file)
        if not path.is_file():
            raise InputError(f"environments file {side_file} not found — pass a JSON file of "
                             '{"owner/name": [{"versions": [...], "python": ..., "packages": [...]}]}')
        try:
            data = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise InputError(f"environments file {side_file} is not JSON ({exc.msg}, line {exc.lineno})") from None
        _merge(book, data, str(side_file))
        book.side_file_hash = stable_hash(data)
    return book


def is_spec_file(path: str | Path | None) -> bool:
    """Whether ``path`` is a spec side file (an object of repository → list of specs), not a file of records."""
    if path is None or not Path(path).is_file():
        return False
    try:
        data = json.loads(Path(path).read_text())
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False  # JSONL records
    return isinstance(data, dict) and bool(data) and all(
        isinstance(v, list) and all(isinstance(e, dict) and "versions" in e for e in v) for v in data.values())


def _merge(book: SpecBook, data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise InputError(f"{where}: the environments file must be a JSON object keyed by repository ('owner/name')")
    for repo, entries in data.items():
        if not isinstance(entries, list):
            raise InputError(f"{where}: {repo!r} must map to a list of specs, each with 'versions' and 'python'")
        for n, entry in enumerate(entries):
            try:
                spec = RepoSpec.model_validate(entry)
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
                raise InputError(f"{where}: spec {n} of {repo!r} is invalid ({problems})") from None
            for version in spec.versions:
                book.specs.setdefault(repo, {})[version] = spec
