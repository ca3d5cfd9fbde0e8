import pytest

from kvconf import convert, parse


@pytest.mark.parametrize("text, expected", [("n = 3", 3), ("n = -12", -12)])
def test_integers(text, expected):
    assert parse(text)["n"] == expected


@pytest.mark.parametrize("word", ["yes", "True", "on"])
def test_true_words(word):
    assert convert(word) is True


def test_quoted_strings_keep_their_spaces():
    assert parse('greeting = "  hi  "') == {"greeting": "  hi  "}


def test_plain_words_stay_strings():
    assert convert("blue") == "blue"
