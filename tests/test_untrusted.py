"""JSON nested too deeply for Python is bad JSON like any other, wherever evoci reads it."""

from __future__ import annotations

import json

import pytest

from evoci.datasets import load_dataset
from evoci.errors import DatasetError
from evoci.settings import Paths
from evoci.swe_evo.predictions import load_predictions
from evoci.untrusted import json_loads

DEEP = "[" * 100_000 + "]" * 100_000


def test_deep_nesting_is_a_decode_error_and_the_rest_reads_as_json():
    with pytest.raises(RecursionError):
        json.loads(DEEP)  # what every caller used to meet
    with pytest.raises(json.JSONDecodeError, match="nested too deeply to read"):
        json_loads(DEEP)
    assert json_loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}
    assert json_loads(b"[1]") == [1]


def test_a_dataset_line_nested_too_deeply_is_a_bad_line_and_the_others_load(tmp_path):
    dataset = tmp_path / "tasks.jsonl"
    good = {"task_id": "t", "repo": "calc", "base_ref": "base", "oracle_ref": "oracle"}
    dataset.write_text(DEEP + "\n" + json.dumps(good) + "\n")
    data = load_dataset(str(dataset), Paths(home=tmp_path / "home"))
    assert [t.task_id for t in data.tasks] == ["t"]
    [error] = data.errors
    assert "not JSON (nested too deeply to read)" in str(error) and ":1:" in str(error)


def test_a_predictions_line_nested_too_deeply_is_named_as_bad_input(tmp_path):
    predictions = tmp_path / "output.jsonl"
    predictions.write_text(json.dumps({"instance_id": "i", "test_result": {"git_patch": ""}}) + "\n" + DEEP + "\n")
    with pytest.raises(DatasetError, match="nested too deeply to read"):
        load_predictions(predictions)
