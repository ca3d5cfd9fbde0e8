"""Parsing, formatting and SemVer precedence of Version."""

import pytest

import semverkit as sk


def v(text):
    return sk.Version.parse(text)


# Parsing and formatting


def test_parse_release():
    version = v("1.2.3")
    assert (version.major, version.minor, version.patch) == (1, 2, 3)
    assert version.prerelease == () and version.build == ()


def test_str_round_trips():
    assert str(v("10.20.30")) == "10.20.30"


@pytest.mark.parametrize("text", ["1.2", "1.2.3.4", "a.b.c", "", "1.2.3-", "1.2.3+", "1.2.3-a..b"])
def test_rejects_malformed_versions(text):
    with pytest.raises(ValueError):
        v(text)


def test_parse_prerelease_and_build():
    version = v("1.0.0-alpha.1+build.5")
    assert version.prerelease == ("alpha", 1)
    assert version.build == ("build", "5")


def test_str_keeps_prerelease_and_build():
    assert str(v("1.0.0-rc.1+exp.sha.5114f85")) == "1.0.0-rc.1+exp.sha.5114f85"


@pytest.mark.parametrize("text", ["01.2.3", "1.02.3", "1.2.03", "1.2.3-01"])
def test_rejects_leading_zeros(text):
    with pytest.raises(sk.InvalidVersion):
        v(text)


def test_invalid_version_names_the_text():
    with pytest.raises(sk.InvalidVersion, match=r"'1\.2'"):
        v("1.2")


def test_invalid_version_is_a_value_error():
    assert issubclass(sk.InvalidVersion, ValueError)


def test_constructor_rejects_negative_numbers():
    with pytest.raises(ValueError):
        sk.Version(1, -1, 0)


# Precedence


def test_release_numbers_compare_as_numbers():
    assert v("1.10.0") > v("1.9.0")
    assert v("2.0.0") > v("1.99.99")


def test_equal_versions_hash_alike():
    assert len({v("1.2.3"), v("1.2.3"), sk.Version(1, 2, 3)}) == 1


def test_prerelease_sorts_before_its_release():
    assert v("1.0.0-alpha") < v("1.0.0")


def test_precedence_example_from_the_spec():
    # SemVer 2.0.0 §11.4, in ascending order.
    expected = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    shuffled = [expected[i] for i in (5, 0, 7, 3, 1, 6, 2, 4)]
    assert [str(x) for x in sorted(map(v, shuffled))] == expected


def test_numeric_identifiers_compare_as_numbers():
    assert v("1.0.0-rc.2") < v("1.0.0-rc.10")


def test_build_metadata_is_ignored_in_precedence():
    assert v("1.0.0+a") == v("1.0.0+b")
    assert hash(v("1.0.0+a")) == hash(v("1.0.0+b"))
    assert not v("1.0.0+a") < v("1.0.0+b")
