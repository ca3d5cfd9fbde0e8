"""Environment self-repair (SWE-CI curation, step 3): add what the oracle's tests failed to import.

A dependency file rarely lists everything a test suite imports. When the oracle's own tests
fail with ``ModuleNotFoundError``, the environment — not the code — is incomplete, so the
task-preparation node runs a bounded loop: run the oracle tests → ``missing_modules`` →
``repaired`` spec → rebuild → run again, at most ``DockerOptions.max_repairs`` times,
recording a ``RepairRecord`` per added distribution. A round that adds nothing stops the loop.

Import names often differ from distribution names (``import yaml`` is ``PyYAML``);
``DISTRIBUTIONS`` lists the common cases, and anything else is installed under its import
name (pip treats ``_`` and ``-`` alike). Standard-library modules and the codebase's own
packages (pass them as ``exclude``) are never installed: a project whose own package fails
to import is broken, and a same-named package from the index would only hide that.
Nothing here touches Docker; any sandbox can use it.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict

from evoci.domain import EnvironmentSpec, TestReport

# Import name → distribution name, where they differ.
DISTRIBUTIONS: dict[str, str] = {
    "yaml": "PyYAML",
    "_yaml": "PyYAML",
    "PIL": "Pillow",
    "cv2": "opencv-python",
    "sklearn": "scikit-learn",
    "skimage": "scikit-image",
    "bs4": "beautifulsoup4",
    "dateutil": "python-dateutil",
    "attr": "attrs",
    "dotenv": "python-dotenv",
    "jwt": "PyJWT",
    "jose": "python-jose",
    "magic": "python-magic",
    "slugify": "python-slugify",
    "multipart": "python-multipart",
    "docx": "python-docx",
    "pptx": "python-pptx",
    "serial": "pyserial",
    "usb": "pyusb",
    "socks": "PySocks",
    "Crypto": "pycryptodome",
    "OpenSSL": "pyOpenSSL",
    "nacl": "PyNaCl",
    "git": "GitPython",
    "github": "PyGithub",
    "fitz": "PyMuPDF",
    "zmq": "pyzmq",
    "MySQLdb": "mysqlclient",
    "psycopg2": "psycopg2-binary",
    "pkg_resources": "setuptools",
    "_cffi_backend": "cffi",
    "mpl_toolkits": "matplotlib",
    "google.protobuf": "protobuf",
    "ruamel": "ruamel.yaml",
    "odf": "odfpy",
    "gi": "PyGObject",
    "cairo": "pycairo",
    "wx": "wxPython",
    "Levenshtein": "python-Levenshtein",
    "_pytest": "pytest",
    "xdist": "pytest-xdist",
    # Plugins' import names, spelled as their distributions are published.
    "pytest_cov": "pytest-cov",
    "pytest_timeout": "pytest-timeout",
    "pytest_rerunfailures": "pytest-rerunfailures",
    "pytest_benchmark": "pytest-benchmark",
    "pytest_asyncio": "pytest-asyncio",
    "pytest_mock": "pytest-mock",
}
# pytest fixtures and command-line options that only a plugin provides → its import name.
PLUGIN_FIXTURES = {
    "mocker": "pytest_mock",
    "benchmark": "pytest_benchmark",
    "requests_mock": "requests_mock",
    "httpx_mock": "pytest_httpx",
    "event_loop": "pytest_asyncio",
}
PLUGIN_OPTIONS = {
    "--cov": "pytest_cov",
    "--timeout": "pytest_timeout",
    "-n": "xdist",
    "--numprocesses": "xdist",
    "--reruns": "pytest_rerunfailures",
    "--benchmark": "pytest_benchmark",
}
# Never installed from the index: test folders, the codebase layout, this harness's plugin.
_NEVER = frozenset({"tests", "test", "testing", "conftest", "src", "pytest_jsonreport"})

_NO_MODULE = re.compile(r"No module named ['\"]?([A-Za-z_][\w.]*)['\"]?")
_FIXTURE = re.compile(r"fixture '(\w+)' not found")
_OPTION = re.compile(r"unrecognized arguments: ([^\n]+)")
_ASYNC = re.compile(r"async def functions are not natively supported")
_REQUIREMENT_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


class RepairRecord(BaseModel):
    """One distribution added to a task's environment because module ``module`` was missing."""

    model_config = ConfigDict(frozen=True)

    module: str
    distribution: str
    attempt: int


def missing_modules(report: TestReport, *, exclude: Iterable[str] = ()) -> list[str]:
    """Top-level modules the report's errors say are missing, in order of appearance.

    Reads collection errors, per-test failure texts and the output tail; ``exclude`` names
    the codebase's own top-level packages.
    """
    texts = [*report.collection_errors.values(), *report.details.values(), report.output_tail]
    return missing_modules_in_text("\n".join(texts), exclude=exclude)


def missing_modules_in_text(text: str, *, exclude: Iterable[str] = ()) -> list[str]:
    """``missing_modules`` over any text (a pytest log, a traceback)."""
    skip = _NEVER | set(exclude)
    found: list[str] = []
    candidates = [_module_key(m) for m in _NO_MODULE.findall(text)]
    candidates += [PLUGIN_FIXTURES[f] for f in _FIXTURE.findall(text) if f in PLUGIN_FIXTURES]
    for args in _OPTION.findall(text):
        for arg in args.split():
            option = arg.split("=", 1)[0]
            key = next((k for k in PLUGIN_OPTIONS if option == k or option.startswith(f"{k}-")), None)
            if key:
                candidates.append(PLUGIN_OPTIONS[key])
    if _ASYNC.search(text):
        candidates.append("pytest_asyncio")
    for module in candidates:
        top = module.split(".")[0]
        if top in skip or top in sys.stdlib_module_names or (top.startswith("_") and module not in DISTRIBUTIONS):
            continue
        if module not in found:
            found.append(module)
    return found


def distribution_for(module: str) -> str:
    """The distribution that provides import name ``module`` (its top-level name when not listed)."""
    return DISTRIBUTIONS.get(module) or DISTRIBUTIONS.get(module.split(".")[0]) or module.split(".")[0]


def repaired(spec: EnvironmentSpec, modules: Iterable[str]) -> EnvironmentSpec:
    """``spec`` plus a requirement for each module's distribution it lacks (a new content hash if any)."""
    have = {_requirement_name(r) for r in spec.requirements}
    added: list[str] = []
    for module in modules:
        distribution = distribution_for(module)
        if canonicalize_name(distribution) not in have:
            have.add(canonicalize_name(distribution))
            added.append(distribution)
    if not added:
        return spec
    return spec.model_copy(update={"requirements": (*spec.requirements, *added)})


def repair_step(
    spec: EnvironmentSpec, report: TestReport, attempt: int, *, exclude: Iterable[str] = ()
) -> tuple[EnvironmentSpec, list[RepairRecord]]:
    """One repair round: the repaired spec and what was added (empty: nothing left to try)."""
    have = {_requirement_name(r) for r in spec.requirements}
    records: list[RepairRecord] = []
    for module in missing_modules(report, exclude=exclude):
        distribution = distribution_for(module)
        if canonicalize_name(distribution) not in have:
            have.add(canonicalize_name(distribution))
            records.append(RepairRecord(module=module, distribution=distribution, attempt=attempt))
    return repaired(spec, [r.module for r in records]), records


def _module_key(module: str) -> str:
    """The part of a dotted name the table is keyed on (``google.protobuf.x`` → ``google.protobuf``)."""
    for known in DISTRIBUTIONS:
        if "." in known and (module == known or module.startswith(known + ".")):
            return known
    return module.split(".")[0]


def _requirement_name(requirement: str) -> str:
    match = _REQUIREMENT_NAME.match(requirement)
    return canonicalize_name(match.group(1)) if match else requirement


def own_packages(root: Path) -> set[str]:
    """Top-level modules a codebase provides itself (never installed from an index)."""
    names = set()
    for base in (root, root / "src"):
        if not base.is_dir():
            continue
        for entry in base.iterdir():
            if entry.is_dir() and (entry / "__init__.py").exists():
                names.add(entry.name)
            elif entry.suffix == ".py":
                names.add(entry.stem)
    return names
