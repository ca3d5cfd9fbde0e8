"""Bumping versions: release numbers, prereleases, and bumping by name."""

import pytest

import semverkit as sk


def bumped(text, part, *args):
    return str(getattr(sk.Version.parse(text), f"bump_{part}")(*args))


def test_bump_patch():
    assert bumped("1.2.3", "patch") == "1.2.4"


def test_bump_minor_resets_patch():
    assert bumped("1.2.3", "minor") == "1.3.0"


def test_bump_major_resets_minor_and_patch():
    assert bumped("1.2.3", "major") == "2.0.0"


def test_bump_leaves_the_original_alone():
    version = sk.Version.parse("1.2.3")
    version.bump_major()
    assert str(version) == "1.2.3"


def test_bump_drops_build_metadata():
    assert bumped("1.2.3+build.7", "patch") == "1.2.4"


# A prerelease is released by the bump it was heading for.


def test_bump_patch_releases_a_prerelease():
    assert bumped("1.2.3-rc.1", "patch") == "1.2.3"


def test_bump_minor_releases_a_prerelease_of_that_minor():
    assert bumped("1.3.0-beta", "minor") == "1.3.0"
    assert bumped("1.3.1-beta", "minor") == "1.4.0"


def test_bump_major_releases_a_prerelease_of_that_major():
    assert bumped("2.0.0-rc.1", "major") == "2.0.0"
    assert bumped("2.1.0-rc.1", "major") == "3.0.0"


# Prereleases


def test_bump_prerelease_of_a_release_starts_the_next_patch():
    assert bumped("1.2.3", "prerelease") == "1.2.4-rc.0"


def test_bump_prerelease_increments_its_number():
    assert bumped("1.2.4-rc.0", "prerelease") == "1.2.4-rc.1"
    assert bumped("1.2.4-alpha.3", "prerelease") == "1.2.4-alpha.4"


def test_bump_prerelease_appends_a_number():
    assert bumped("1.2.4-beta", "prerelease") == "1.2.4-beta.0"


def test_bump_prerelease_can_switch_label():
    assert bumped("1.2.4-alpha.3", "prerelease", "beta") == "1.2.4-beta.0"


def test_finalize_drops_prerelease_and_build():
    assert str(sk.Version.parse("2.0.0-rc.1+build.7").finalize()) == "2.0.0"


# Bumping by name


@pytest.mark.parametrize(
    ("part", "expected"),
    [("major", "2.0.0"), ("minor", "1.3.0"), ("patch", "1.2.4"), ("prerelease", "1.2.4-rc.0")],
)
def test_bump_by_name(part, expected):
    assert str(sk.Version.parse("1.2.3").bump(part)) == expected


def test_bump_unknown_part_lists_the_choices():
    with pytest.raises(ValueError, match="choose one of: major, minor, patch, prerelease"):
        sk.Version.parse("1.2.3").bump("mnior")
