"""Where NITR probes come from: evoci's built-in suite, or a checkout in the public layout.

    nitr                the built-in suite (evoci's own probes, shipped in the package)
    nitr:<path>         a NITR checkout (cases/, docs/, evaluator/), e.g. a clone of the public suite
"""

from __future__ import annotations

from pathlib import Path

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
    """A short, stable name for run ids: ``nitr`` for the built-in suite, ``nitr-<folder>`` otherwise."""
    root = suite_root(source)
    return "nitr" if root == PROBES else f"nitr-{root.name}"
