"""Which versions a range allows, and how range text is read."""

import pytest

import semverkit as sk


def allows(spec, version):
    return sk.Version.parse(version) in sk.Range.parse(spec)


# Comparators


def test_greater_or_equal():
    assert allows(">=1.2.0", "1.2.0")
    assert allows(">=1.2.0", "1.3.0")
    assert not allows(">=1.2.0", "1.1.9")


def test_comma_means_and():
    assert allows(">=1.0.0,<2.0.0", "1.5.0")
    assert not allows(">=1.0.0,<2.0.0", "2.0.0")
    assert not allows(">=1.0.0,<2.0.0", "0.9.0")


def test_missing_numbers_count_as_zero():
    assert allows(">=1.0,<2", "1.0.0")
    assert allows(">=1.0,<2", "1.9.9")
    assert not allows(">=1.0,<2", "2.0.0")


def test_exact_and_not_equal():
    assert allows("=1.2.3", "1.2.3")
    assert not allows("=1.2.3", "1.2.4")
    assert not allows("!=1.2.3", "1.2.3")
    assert allows("!=1.2.3", "1.2.4")


def test_bare_full_version_is_exact():
    assert allows("1.2.3", "1.2.3")
    assert not allows("1.2.3", "1.2.4")


def test_contains_accepts_strings():
    assert "1.5.0" in sk.Range.parse(">=1")


def test_whitespace_around_operators_and_commas():
    assert allows(" >= 1.2 , < 2 ", "1.5.0")


def test_prerelease_comparator_allows_later_prereleases_of_that_version():
    assert allows(">=1.2.3-beta.1", "1.2.3-beta.2")


# Reading range text


@pytest.mark.parametrize("text", [">>1", "=>1.0", "1.2.3.4", ">=1.0,", "1.2.3-"])
def test_rejects_malformed_ranges(text):
    with pytest.raises(sk.InvalidRange):
        sk.Range.parse(text)


def test_invalid_range_names_the_text():
    with pytest.raises(sk.InvalidRange, match=r"'>=1\.0,<<2'"):
        sk.Range.parse(">=1.0,<<2")


def test_str_spells_out_every_comparator():
    assert str(sk.Range.parse(">=1.0,<2")) == ">=1.0.0,<2.0.0"
