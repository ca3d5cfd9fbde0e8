"""Choosing versions from a list: the newest or oldest a range allows, and sorting."""

import pytest

import semverkit as sk


def test_max_satisfying_picks_the_newest_allowed():
    found = sk.max_satisfying(["1.2.3", "1.9.0", "1.10.0", "2.0.0"], "^1.2")
    assert found == sk.Version(1, 10, 0)


def test_max_satisfying_returns_none_when_nothing_fits():
    assert sk.max_satisfying(["1.0.0", "1.1.0"], ">=2") is None


def test_max_satisfying_skips_prereleases():
    assert sk.max_satisfying(["1.9.0", "1.10.0-rc.1", "2.0.0"], "^1") == sk.Version(1, 9, 0)


def test_max_satisfying_can_include_prereleases():
    found = sk.max_satisfying(["1.9.0", "1.10.0-rc.1", "2.0.0"], "^1", include_prerelease=True)
    assert str(found) == "1.10.0-rc.1"


def test_min_satisfying_picks_the_oldest_allowed():
    assert sk.min_satisfying(["0.9.0", "1.4.0", "1.2.3"], ">=1.0") == sk.Version(1, 2, 3)


def test_accepts_version_and_range_objects():
    versions = [sk.Version(1, 0, 0), sk.Version(1, 1, 0)]
    assert sk.max_satisfying(versions, sk.Range.parse("<1.1")) == sk.Version(1, 0, 0)


def test_sort_versions():
    ordered = sk.sort_versions(["1.10.0", "1.2.0", "1.2.0-rc.1", "0.9.9"])
    assert [str(version) for version in ordered] == ["0.9.9", "1.2.0-rc.1", "1.2.0", "1.10.0"]


def test_sort_versions_newest_first():
    ordered = sk.sort_versions(["1.0.0", "3.0.0", "2.0.0"], reverse=True)
    assert [str(version) for version in ordered] == ["3.0.0", "2.0.0", "1.0.0"]


def test_invalid_candidate_raises():
    with pytest.raises(sk.InvalidVersion):
        sk.max_satisfying(["1.0.0", "one"], "*")


def test_public_api():
    assert sorted(sk.__all__) == [
        "InvalidRange",
        "InvalidVersion",
        "Range",
        "SemverError",
        "Version",
        "max_satisfying",
        "min_satisfying",
        "sort_versions",
    ]
    assert all(getattr(sk, name) for name in sk.__all__)
