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
from evoci.errors import DatasetError
from evoci.settings import Paths
from evoci.swe_bench_cl.loader import CLDataset, load_swe_bench_cl

DEMO = "swe-bench-cl-demo"


def load_cl_dataset(source: str, settings: list[Any], *, repos: str | None = None, environments: str | None = None,
                    home: str | None = None) -> tuple[CLDataset, str]:
    """The dataset and its run name ``<stem>-<hash of content and settings>``."""
    paths = Paths(home=Path(home).absolute()) if home else Paths.default()
    if source == DEMO:
        from evoci.swe_bench_cl.demo import build_cl_demo

        source = str(build_cl_demo(paths.home / DEMO))
    data = load_swe_bench_cl(source, repos_dir=repos, environments=environments)
    if not data.sequences and not data.errors:
        raise DatasetError("the curriculum holds no sequence — pass a SWE-Bench-CL curriculum JSON", path=source)
    identity = [data.content_hash, *(s.model_dump(mode="json") if hasattr(s, "model_dump") else s for s in settings)]
    return data, f"{data.name}-{stable_hash(identity, 8)}"
