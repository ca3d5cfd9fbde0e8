"""What the demo history should score, worked out by hand from its commits and tests.

The oracle's tests (tests/ at the last commit) are run against every commit's code. Each
count below is the number of those tests that pass; the comment says which tests the
commit makes pass or breaks, and why. Every oracle test module imports only ``semverkit``
and reaches new names through it inside the test, so a missing feature fails its own
tests and never keeps a module from being collected: all 93 tests run at every commit.
"""

ORACLE_TESTS = 93  # test_version 25, test_bump 18, test_ranges 40, test_select 10

PASSING_WITH_ORACLE_TESTS: tuple[int, ...] = (
    # 00 base — Version.parse/str/ordering with prerelease and build, naive bumps.
    #   test_version: the 18 tests that need no InvalidVersion (7 malformed-input cases raise
    #   a plain ValueError already; .strip() makes the whitespace test pass); test_bump: the
    #   5 plain bumps (build metadata is never carried). 18 + 5.
    23,
    # 01 InvalidVersion, leading zeros rejected, constructor checks its numbers:
    #   +4 test_rejects_leading_zeros, +test_invalid_version_names_the_text,
    #   +test_invalid_version_is_a_value_error, +test_constructor_rejects_negative_numbers.
    30,
    # 02 prerelease-aware bumps, bump_prerelease, finalize, bump(part): +13 in test_bump.
    43,
    # 03 comparator ranges (Range, InvalidRange): +16 in test_ranges — the 8 comparator
    #   tests, 5 malformed ranges, the message, str(), and
    #   test_versions_in_ranges_follow_the_version_grammar ("01" fails inside Version.parse).
    59,
    # 04 shared grammar refactor: Version.parse matches the raw text, so
    #   test_parse_strips_surrounding_whitespace REGRESSES. Ranges strip their own terms.
    58,
    # 05 caret and tilde: +6 behaviour tests, +4 test_caret_and_tilde_spelled_out.
    68,
    # 06 Version.parse strips again: test_parse_strips_surrounding_whitespace is FIXED.
    69,
    # 07 x-ranges, "*", "||": +10 — x in patch, 3 wildcard spellings, "*", bare "1.2"
    #   (was exactly 1.2.0), "^1.x", union allows either side, union str(), and
    #   test_union_members_are_checked_separately.
    79,
    # 08 max_satisfying, min_satisfying, sort_versions: +8 in test_select
    #   (the two prerelease tests there still fail: "^1" picks 1.10.0-rc.1, no flag yet).
    87,
    # 09 prereleases left out of ranges unless named, include_prerelease: +4 in
    #   test_ranges, +2 in test_select. Every oracle test passes.
    93,
)

# The regression: a test that passed at commit REGRESSION_BREAKS_AT - 1 and fails from
# REGRESSION_BREAKS_AT until REGRESSION_FIXED_AT. It is the only one in the history.
REGRESSED_TESTS: tuple[str, ...] = ("tests/test_version.py::test_parse_strips_surrounding_whitespace",)
REGRESSION_BREAKS_AT = 4  # 04_shared_grammar dropped .strip() from Version.parse
REGRESSION_FIXED_AT = 6  # 06_strip_whitespace put it back
