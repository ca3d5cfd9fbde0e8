"""JSON nested too deeply for Python is bad JSON like any other, wherever evoci reads it."""

from __future__ import annotations

import json

import pytest

from evoci.errors import DatasetError
from evoci.settings import Paths
from evoci.swe_ci.datasets import load_dataset
from evoci.swe_evo.predictions import load_predictions
from evoci.untrusted import json_loads, path_problem, storable

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


def test_a_number_too_long_for_int_is_a_decode_error():
    long_number = '{"start_line": ' + "1" * 5000 + "}"
    with pytest.raises(ValueError, match="4300 digits"):
        json.loads(long_number)  # a plain ValueError: every caller let it through
    with pytest.raises(json.JSONDecodeError, match="Exceeds the limit"):
        json_loads(long_number)


def test_a_path_no_file_can_have_says_why():
    assert path_problem("src/calc.py") is None and path_problem("./src/" + "é" * 126 + ".py") is None
    assert path_problem("src/a\0.py") == "contains a NUL character"
    assert path_problem("src/\udcff.py") == "is not valid text (a lone surrogate)"
    assert path_problem("src/" + "é" * 128) == "has a name longer than 255 bytes"  # bytes, not characters
    assert path_problem("/".join(["b" * 200] * 30)) == "is longer than 4095 bytes"
    assert storable("text ✓") and not storable("x = '\udcff'")
