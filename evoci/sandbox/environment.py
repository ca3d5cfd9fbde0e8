"""Test environments: what a task's tests need installed, and local virtualenvs that have it.

``resolve_environment`` reads the oracle's dependency files (never executing them) and
lists pip requirements; ``LocalEnvironments`` builds one virtualenv per distinct list and
reuses it for every task, iteration and run that needs the same thing.

A built environment lives in ``<root>/<content hash>/``. The build holds a file lock,
so two threads or processes wanting the same environment build it once; a marker file
written last says the build finished, so an environment whose build was killed halfway
is detected and rebuilt. Virtualenvs hold absolute paths and cannot be moved, which is
why the build happens in place under the lock rather than in a folder renamed afterwards.
"""

from __future__ import annotations

import configparser
import fcntl
import importlib.metadata
import json
import logging
import os
import re
import shutil
import sys
import tomllib
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from evoci.domain import DEPENDENCY_FILES, EnvironmentSpec
from evoci.errors import EnvironmentBuildError, TaskSpecError
from evoci.sandbox.process import run_process
from evoci.sandbox.scrub import looks_secret, scrubbed_env

log = logging.getLogger(__name__)

# The packages the test node needs, pinned to evoci's own versions so pip reuses its cache.
HARNESS_PACKAGES = ("pytest", "pytest-json-report")
# Optional-dependency groups that hold what a project's tests need.
TEST_GROUPS = ("test", "tests", "testing", "dev")
MARKER = ".evoci-env.json"
BUILD_TIMEOUT_S = 1800.0
_BUILD_OUTPUT_LIMIT = 200_000
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def resolve_environment(files: Mapping[str, str], python: str | None = None) -> EnvironmentSpec:
    """The environment the oracle's dependency files describe (path → text, as in DEPENDENCY_FILES).

    ``python`` is the version the environment needs (None = evoci's own). For another version the
    harness packages are not pinned to evoci's own versions, which may not support it: pip picks
    the newest that does.
    """
    project_names: set[str] = set()
    found: list[str] = []
    for path in _in_reading_order(files):
        text = files[path]
        name = Path(path).name
        if name.endswith(".txt"):
            found += _from_requirements_txt(text)
        elif name == "pyproject.toml":
            found += _from_pyproject(path, text, project_names)
        elif name == "setup.cfg":
            found += _from_setup_cfg(path, text, project_names)
        elif name == "setup.py":
            log.info("%s is recorded but not executed; list its requirements in a requirements file", path)
    # A project's own name in its extras (`mypkg[test]`) is not on the index: the code is the workspace.
    requirements = [r for r in found if _normalized_name(r) not in project_names]
    return EnvironmentSpec(python=python, requirements=with_harness(requirements, python),
                           dependency_files=dict(files))


def with_harness(requirements: Iterable[str], python: str | None) -> tuple[str, ...]:
    """``requirements`` and the packages the test node needs (``HARNESS_PACKAGES``) that they do not name:
    pinned to evoci's own versions for evoci's Python, else whichever pip finds for ``python``."""
    requirements = list(requirements)
    named = {_normalized_name(r) for r in requirements}
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    pinned = python is None or ".".join(python.split(".")[:2]) == running
    for package in HARNESS_PACKAGES:
        if _normalized(package) not in named:  # the project's own constraint wins over our pin
            requirements.append(f"{package}=={importlib.metadata.version(package)}" if pinned else package)
    return tuple(_unique(requirements))


@dataclass(frozen=True)
class BuiltEnvironment:
    """A ready virtualenv on this machine."""

    path: Path
    python: Path
    bin_dir: Path
    spec_hash: str


class LocalEnvironments:
    """Virtualenvs under ``root``, one per environment content hash, each built once."""

    def __init__(self, root: Path, *, build_timeout: float = BUILD_TIMEOUT_S):
        self.root = Path(root).absolute()
        self.build_timeout = build_timeout

    def ensure(self, spec: EnvironmentSpec) -> BuiltEnvironment:
        """The virtualenv for ``spec``, building it first if no finished one exists."""
        key = spec.content_hash
        target = self.root / key
        built = BuiltEnvironment(path=target, python=target / "bin" / "python", bin_dir=target / "bin", spec_hash=key)
        if _complete(built):
            return built
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f".{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released by the kernel if this process dies
            if _complete(built):  # someone else built it while we waited
                return built
            if target.exists():
                log.warning("environment %s is incomplete (a build was killed?); rebuilding it", target)
                shutil.rmtree(target)
            try:
                self._build(spec, target)
            except BaseException:
                shutil.rmtree(target, ignore_errors=True)
                raise
            _write_marker(target, spec)
        return built

    def _build(self, spec: EnvironmentSpec, target: Path) -> None:
        """Create the virtualenv at ``target`` and pip-install ``spec.requirements`` into it."""
        env = _build_env()
        venv = [str(_interpreter(spec.python)), "-m", "venv"]
        if not spec.requirements and not spec.pre_install:
            venv.append("--without-pip")  # nothing to install: skip pip's bootstrap
        self._run([*venv, str(target)], env, what="create the virtualenv")
        pip = [str(target / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off"]
        if spec.pre_install:  # build helpers first, in a pip run of their own
            self._run([*pip, *spec.pre_install], env, what="install the pre-install requirements")
        if spec.requirements:
            self._run([*pip, *spec.requirements], env, what="install the requirements")

    def _run(self, cmd: list[str], env: dict[str, str], *, what: str) -> None:
        result = run_process(
            cmd, cwd=self.root, env=env, timeout=self.build_timeout, output_limit=_BUILD_OUTPUT_LIMIT
        )
        if result.ok:
            return
        ended = "timed out" if result.timed_out else f"exited with {result.exit_code}"
        tail = "\n".join((result.stdout + "\n" + result.stderr).strip().splitlines()[-40:])
        raise EnvironmentBuildError(
            f"could not {what} ({' '.join(cmd[:4])} … {ended}):\n{tail}\n"
            "Check that the requirements exist for this Python and that the package index is "
            "reachable (pip's settings and proxy variables are passed through); a broken entry "
            "in the oracle's dependency files must be fixed in the task."
        )


def _in_reading_order(files: Mapping[str, str]) -> list[str]:
    order = {name: i for i, name in enumerate(DEPENDENCY_FILES)}
    return sorted(files, key=lambda p: (order.get(p, len(order)), p))


def _from_requirements_txt(text: str) -> Iterator[str]:
    """Requirement lines; options (-r, -e, --index-url …), local paths and URLs are skipped.

    A ``-r other.txt`` include is not followed: the files in DEPENDENCY_FILES are each read anyway.
    """
    for line in text.replace("\\\n", " ").splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if not line or line.startswith("-") or line.startswith((".", "/", "file:")):
            continue
        if "://" in line:  # a direct URL reference: evoci fetches nothing remote by itself
            continue
        yield line.split(" --", 1)[0].strip()  # per-line options such as --hash=…


def _from_pyproject(path: str, text: str, project_names: set[str]) -> list[str]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise TaskSpecError(f"{path} is not valid TOML ({exc}); fix the file in the oracle commit") from exc
    project = data.get("project", {})
    if "name" in project:
        project_names.add(_normalized(str(project["name"])))
    found = [str(r) for r in project.get("dependencies", [])]
    for groups in (project.get("optional-dependencies", {}), data.get("dependency-groups", {})):
        for group in TEST_GROUPS:
            # dependency-groups may also hold {include-group = "…"} tables; only strings are requirements
            found += [r for r in groups.get(group, []) if isinstance(r, str)]
    return found


def _from_setup_cfg(path: str, text: str, project_names: set[str]) -> list[str]:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        raise TaskSpecError(f"{path} cannot be read ({exc}); fix the file in the oracle commit") from exc
    if parser.has_option("metadata", "name"):
        project_names.add(_normalized(parser.get("metadata", "name")))
    values = [parser.get("options", key, fallback="") for key in ("install_requires", "tests_require")]
    if parser.has_section("options.extras_require"):
        values += [parser.get("options.extras_require", g, fallback="") for g in TEST_GROUPS]
    return [line for value in values for line in _lines(value)]


def _lines(value: str) -> Iterator[str]:
    for line in value.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            yield line


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _normalized_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return _normalized(match.group(1)) if match else requirement


def _unique(items: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        key = " ".join(item.split())
        if key not in seen:
            seen.add(key)
            out.append(key)
    return out


def _interpreter(version: str | None) -> Path:
    """The Python that creates the virtualenv: evoci's own, a pyenv one, or ``python<version>`` on PATH."""
    running = f"{sys.version_info.major}.{sys.version_info.minor}"
    wanted = ".".join((version or running).split(".")[:2])
    if wanted == running:
        return Path(sys.executable)
    # pyenv's own folder first: its shims on PATH fail unless that version is selected globally.
    found = _pyenv_interpreter(wanted) or shutil.which(f"python{wanted}")
    if found is None:
        raise EnvironmentBuildError(
            f"this task needs Python {wanted}, but evoci runs on {running}, no 'python{wanted}' is on PATH and "
            f"pyenv ({_pyenv_root()}) has no {wanted}.x: install Python {wanted} (`pyenv install {wanted}`) or use the docker sandbox"
        )
    return Path(found)


def _pyenv_root() -> Path:
    return Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")


def _pyenv_interpreter(wanted: str) -> str | None:
    """The newest ``<pyenv root>/versions/<wanted>.N`` interpreter (CPython only), if pyenv has one."""
    versions = _pyenv_root() / "versions"
    candidates = []
    for folder in versions.glob(f"{wanted}.*") if versions.is_dir() else ():
        patch = folder.name[len(wanted) + 1:]
        python = folder / "bin" / f"python{wanted}"
        if patch.isdigit() and python.exists():
            candidates.append((int(patch), python))
    return str(max(candidates)[1]) if candidates else None


def _build_env() -> dict[str, str]:
    """A scrubbed environment plus what pip needs to reach its index (settings, proxies, CA files)."""
    passed = {
        name: value
        for name, value in os.environ.items()
        if name.startswith(("PIP_", "PYENV_"))
        or name.lower() in ("http_proxy", "https_proxy", "no_proxy", "all_proxy")
        or name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE")
    }
    # pip's index URL may carry credentials in a PIP_* variable: pip needs them, the tests never see them.
    passed = {k: v for k, v in passed.items() if k.startswith("PIP_") or not looks_secret(k)}
    return scrubbed_env(extra={**passed, "PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"})


def _complete(built: BuiltEnvironment) -> bool:
    """Finished (marker present) and still usable (its interpreter link is not broken)."""
    return (built.path / MARKER).exists() and built.python.exists()


def _write_marker(target: Path, spec: EnvironmentSpec) -> None:
    """Written last, atomically: its presence means the environment is complete."""
    record = {"spec_hash": spec.content_hash, "python": spec.python, "pre_install": list(spec.pre_install),
              "requirements": list(spec.requirements)}
    tmp = target / f"{MARKER}.tmp"
    tmp.write_text(json.dumps(record, indent=2))
    os.replace(tmp, target / MARKER)
