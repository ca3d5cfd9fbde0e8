"""The check before a run starts applies the claim's rule: a run id holds one config and one dataset."""

from __future__ import annotations

import pytest

from evoci.domain import RunConfig
from evoci.errors import DriftError
from evoci.identity import check_run
from evoci.store import Facts


def test_a_run_id_recorded_for_another_dataset_is_refused_before_the_run_starts(tmp_path):
    db, config = tmp_path / "evoci.duckdb", RunConfig()
    assert Facts(db).claim_run("r", protocol="swe-ci", dataset="calc", max_iterations=20,
                               config_hash=config.config_hash(), config=config.model_dump(mode="json")) is None
    check_run(db, "r", config, "calc")  # the same config and dataset: the run resumes
    with pytest.raises(DriftError, match=r"made with a different config or dataset \(dataset: calc → other"):
        check_run(db, "r", config, "other")
    with pytest.raises(DriftError, match=r"max_iterations: 20 → 5"):
        check_run(db, "r", config.model_copy(update={"max_iterations": 5}), "calc")
