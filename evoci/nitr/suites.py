"""Where NITR probes come from: evoci's built-in suite, or a checkout in the public layout.

    nitr                the built-in suite (evoci's own probes, shipped in the package)
    nitr:<path>         a NITR checkout (cases/, docs/, evaluator/), e.g. a clone of the public suite
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from evoci.domain import stable_hash

if TYPE_CHECKING:
    from evoci.nitr.loader import NitrSuite

BUILTIN = "builtin"
PROBES = Path(__file__).parent / "probes"


def is_nitr_source(source: str) -> bool:
    return source == "nitr" or source.startswith("nitr:")


def _path(source: str) -> str:
    return source.split(":", 1)[1] if source.startswith("nitr:") else source


def suite_root(source: str) -> Path:
    """The checkout's folder for ``builtin``, ``nitr``, ``nitr:<path>`` or a bare path."""
    path = _path(source)
    return PROBES if path in (BUILTIN, "nitr", "") else Path(path).absolute()


def suite_name(source: str) -> str:
    """A short, stable name for the record: ``nitr`` for the built-in suite, ``nitr-<folder>`` otherwise."""
    root = suite_root(source)
    return "nitr" if root == PROBES else f"nitr-{root.name}"


def run_dataset_name(source: str, suite: "NitrSuite") -> str:
    """The name run ids derive from: the suite's name plus the identity of the probes selected.

    A changed probe (starter code, TASK, spec, evaluator) or another selection gives another
    run id, so new results never merge into old ones; the same probes resume the same run.
    """
    identity = stable_hash(sorted((p.probe_id, p.content_hash) for p in suite.probes), 8)
    return f"{suite_name(source)}-{identity}"


def selected_suite(source: str, select: dict[str, list[str]] | None = None) -> "NitrSuite":
    """The suite's probes that ``select`` keeps; an InputError when there is nothing to run.

    A selection that matches no probe (a typo such as ``dimension=D10``) would otherwise record
    an empty run and exit 0, as would a checkout without a case.
    """
    from evoci.errors import InputError
    from evoci.nitr.loader import load_suite

    suite = load_suite(suite_root(source), select)
    if suite.probes:
        return suite
    if any(select.values() if select else ()):
        asked = ", ".join(f"{k}={','.join(v)}" for k, v in sorted(select.items()) if v)
        unusable = f" ({len(suite.errors)} unusable case(s) not counted)" if suite.errors else ""
        raise InputError(f"--select {asked} matches no probe of {suite_name(source)}{unusable} — "
                         "check the values (id, language, dimension D1–D9, granularity micro/multi-step)")
    if not suite.errors:
        raise InputError(f"{suite_root(source)} holds no NITR case — pass a checkout with cases/<NNN>.<slug>/ folders")
    return suite
