"""Which SWE-Bench-CL curriculum a run reads, and the name its run id is derived from.

``swe-bench-cl-demo`` is the built-in demo (built under evoci's home); anything else is a
curriculum JSON file (``loader``). The name holds a hash of the curriculum's content, the
environments file and the protocol settings (matrix, attempts, memory, embedding model),
so a changed issue or setting is a new run and never merges into old results.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evoci.domain import stable_hash
from evoci.settings import Paths
from evoci.swe_bench_cl.loader import CLDataset, load_swe_bench_cl

DEMO = "swe-bench-cl-demo"


def is_cl_dataset(source: str) -> bool:
    """``swe-bench-cl-demo``, or a JSON file that holds sequences of continual-learning tasks."""
    if source == DEMO:
        return True
    path = Path(source)
    if not path.is_file():
        return False
    with path.open(errors="replace") as f:
        head = f.read(1 << 20)
    return '"sequences"' in head and '"continual_learning"' in head


def load_cl_dataset(source: str, settings: list[Any], *, repos: str | None = None, environments: str | None = None,
                    home: str | None = None) -> tuple[CLDataset, str]:
    """The dataset and its run name ``<stem>-<hash of content and settings>``."""
    paths = Paths(home=Path(home).absolute()) if home else Paths.default()
    if source == DEMO:
        from evoci.swe_bench_cl.demo import build_cl_demo

        source = str(build_cl_demo(paths.home / DEMO))
    data = load_swe_bench_cl(source, repos_dir=repos, environments=environments)
    identity = [data.content_hash, *(s.model_dump(mode="json") if hasattr(s, "model_dump") else s for s in settings)]
    return data, f"{data.name}-{stable_hash(identity, 8)}"
