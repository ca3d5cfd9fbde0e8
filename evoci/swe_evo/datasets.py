"""Which SWE-EVO dataset a run reads, and the name its run id is derived from.

``swe-evo-demo`` is the built-in demo (built under evoci's home); anything else is a
records file or folder (``loader``). The name includes a hash of the records' content and,
in prediction mode, the predictions file's, so a changed record or prediction is a new run
and never merges into old results.
"""

from __future__ import annotations

from pathlib import Path

from evoci.domain import RunConfig, stable_hash
from evoci.errors import DatasetError
from evoci.settings import Paths
from evoci.swe_evo.loader import EvoDataset, load_swe_evo
from evoci.swebench.specs import load_specs

DEMO = "swe-evo-demo"


def load_evo_dataset(source: str, config: RunConfig, *, repos: str | None = None,
                     home: str | None = None, environments: str | None = None) -> tuple[EvoDataset, str]:
    """The dataset and its run name ``<stem>-<content hash>``.

    ``environments`` is a side file of environment specs (``evoci.swebench.specs``); its content
    hash joins the run name, so a run under other specs never merges into this one.
    """
    paths = Paths(home=Path(home).absolute()) if home else Paths.default()
    if source == DEMO:
        from evoci.swe_evo.demo import build_swe_evo_demo

        source = str(build_swe_evo_demo(paths.home / "swe-evo-demo"))
    specs = load_specs(environments)
    data = load_swe_evo(source, repos_dir=repos, specs=specs)
    if not data.instances and not data.errors:
        raise DatasetError("the dataset holds no SWE-EVO record — pass a .json/.jsonl file or a folder of .json records",
                           path=source)
    identity = [data.content_hash, config.programmer.options.get("sha256")]
    if specs.side_file_hash:  # only then, so runs without a side file keep their names
        identity.append(specs.side_file_hash)
    return data, f"{data.name}-{stable_hash(identity, 8)}"
