import pytest

from kvconf import ParseError, parse


def test_pairs():
    assert parse("a = 1\nb=two") == {"a": "1", "b": "two"}


def test_blank_lines_and_comments_are_skipped():
    assert parse("\n# note\n  \nname = x\n") == {"name": "x"}


def test_later_keys_win():
    assert parse("a = 1\na = 2") == {"a": "2"}


def test_missing_equals_is_an_error():
    with pytest.raises(ParseError) as info:
        parse("ok = 1\nbroken")
    assert info.value.line_number == 2


def test_sample_file():
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "sample.conf").read_text()
    assert parse(text)["name"] == "demo"
