"""The environment's proof on the clean base: what makes an instance an environment_error."""

from __future__ import annotations

from evoci.swebench.grade import Grade
from evoci.swebench.validate import deleted_by_test_patch, judge_base, judge_with_reference


def base_run(**outcomes: str) -> Grade:
    return Grade(status="ok", outcomes=outcomes, exit_code=1, output_tail="tail")


def test_a_p2p_test_failing_on_the_clean_base_means_the_environment_is_not_proven():
    verdict = judge_base(base_run(a="passed", b="failed", f="failed"), ["a", "b"], "env")
    assert not verdict.ok and "1 of 2 PASS_TO_PASS tests do not pass on the clean base: b (failed)" in verdict.reason


def test_every_p2p_test_missing_is_an_environment_that_cannot_import_the_package():
    verdict = judge_base(base_run(a="missing", b="missing"), ["a", "b"], "env")
    assert not verdict.ok and "a (missing), b (missing)" in verdict.reason
    missing_module = Grade(status="ok", outcomes={"t/a.py::a": "missing", "t/a.py": "error"}, exit_code=1,
                           output_tail="ERROR t/a.py - ModuleNotFoundError: No module named 'acme_units'")
    assert not judge_base(missing_module, ["t/a.py::a"], "env").ok


def test_p2p_tests_absent_after_a_collection_error_are_tolerated():
    outcomes = {"t/a.py::a": "passed", "t/b.py::b": "missing", "t/b.py": "error", "t/a.py::c": "skipped"}
    verdict = judge_base(base_run(**outcomes), ["t/a.py::a", "t/b.py::b", "t/a.py::c"], "env")
    assert verdict.ok and (verdict.p2p_passing, verdict.p2p_absent) == (2, 1)
    # absent without a collection error (say, a parameter id spelt otherwise here): not proven
    verdict = judge_base(base_run(**{"t/a.py::a": "passed", "t/a.py::x[type_0]": "missing"}),
                         ["t/a.py::a", "t/a.py::x[type_0]"], "env")
    assert not verdict.ok and "t/a.py::x[type_0] (missing)" in verdict.reason


def test_a_base_run_that_ran_nothing_or_timed_out_is_not_a_proof():
    assert not judge_base(Grade(status="agent_error", outcomes={"a": "missing"}, exit_code=4), [], "env").ok
    assert not judge_base(Grade(status="timeout", outcomes={}), ["a"], "env").ok
    assert judge_base(base_run(f="error"), [], "env").ok  # empty P2P: the command ran, F2P may fail at the base


def test_p2p_tests_failing_on_the_base_that_pass_with_the_reference_patch_need_the_release_not_another_environment():
    base = judge_base(base_run(a="passed", b="failed", c="error"), ["a", "b", "c"], "env")
    assert not base.ok and base.failing == ["b", "c"]
    proven = judge_with_reference(base, base_run(b="passed", c="passed"))
    assert proven.ok and proven.p2p_release_only == ["b", "c"] and proven.p2p_passing == 3 and not proven.reason
    # one still failing with the reference patch is the environment's: the proof fails and says which
    verdict = judge_with_reference(base, base_run(b="passed", c="failed"))
    assert not verdict.ok and not verdict.p2p_release_only
    assert "1 of them fail with the record's reference patch too" in verdict.reason and "c (failed)" in verdict.reason
    assert verdict.reason.startswith("2 of 3 PASS_TO_PASS tests do not pass on the clean base")
    assert "missing" in judge_with_reference(base, base_run(b="passed")).reason  # not run at all: not proven
    timed_out = judge_with_reference(base, Grade(status="timeout", outcomes={"b": "passed", "c": "passed"}))
    assert not timed_out.ok and "hit the test timeout" in timed_out.reason


def test_a_p2p_test_the_records_own_test_patch_deleted_is_the_records_and_the_instance_is_graded(tmp_path):
    """dvc 1.10's record lists test_missing_deps, which its test_patch removes: absent for every prediction."""
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "b.py").write_text("def test_kept():\n    pass\n\ndef test_other(x):\n    pass\n\n"
                                          "async def test_async():\n    pass\n")
    ids = ["t/b.py::test_gone", "t/b.py::test_kept", "t/b.py::test_other[x]", "t/b.py::test_async", "t/c.py::test_x"]
    base = judge_base(base_run(**{"a": "passed", **dict.fromkeys(ids, "failed")}), ["a", *ids], "env")
    reference = base_run(**{"t/b.py": "missing", "t/c.py": "error", **dict.fromkeys(ids, "missing")})
    # gone from its file: only test_gone (a function still there, a parametrized id, a file that did not collect: not)
    assert deleted_by_test_patch(reference, tmp_path, ids) == ["t/b.py::test_gone"]
    missing_module = reference.model_copy(update={"output_tail": "E   ModuleNotFoundError: No module named 'x'"})
    assert deleted_by_test_patch(missing_module, tmp_path, ids) == []
    proven = judge_with_reference(judge_base(base_run(a="passed", **{"t/b.py::test_gone": "failed"}),
                                             ["a", "t/b.py::test_gone"], "env"),
                                  base_run(**{"t/b.py::test_gone": "missing"}), ["t/b.py::test_gone"])
    assert proven.ok and proven.p2p_not_in_test_patch == ["t/b.py::test_gone"] and proven.p2p_passing == 1
    assert not proven.p2p_release_only
    # the others still fail with the reference patch: the environment's, not proven
    assert not judge_with_reference(base, reference, ["t/b.py::test_gone"]).ok
