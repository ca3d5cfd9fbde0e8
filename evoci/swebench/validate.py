"""Environment validation: an environment is proven on the clean base before any agent is graded in it.

A test environment can be wrong in ways no exit code shows: a missing dependency makes every
test file fail at collection (and every target ``missing``), a wrong pin makes tests fail
that pass on the record's own machine. Graded as is, that is scored as the agent's failure.
So before any prediction of an instance is graded, the grader runs the instance's test
command on the clean base with the ``test_patch`` (no patch of anyone's) and asks:

1. did the command run its tests (some outcome was read; no timeout)?
2. does no PASS_TO_PASS target fail there (``failed`` or ``error``), and did at least one of them
   run? A P2P test *absent* at the base is tolerated when a target's test file failed to
   collect (``ERROR <file>``): a ``test_patch`` file that imports what the release adds cannot be
   collected at the base (and without ``--continue-on-collection-errors`` pytest runs nothing). Any other absent P2P test (say, a parameter
   id this environment spells differently) is not, nor is any when the output says a module is
   missing (``No module named``): an environment that cannot import the package is caught.

A PASS_TO_PASS test that fails there may still be no fault of the environment: public records
list as pass-to-pass tests whose ``test_patch`` version needs the release's code (it calls an
option the release adds), which fail on any base and pass once the release is in. Those are told
apart by running the record's reference patch (harness-side, in a tree of its own) on just the
tests that failed: every one that passes with it is accepted and counted (``p2p_release_only``);
one that fails with the reference patch too is the environment's (a missing extra, a network
the sandbox does not give, a folder the tree does not have), and the proof fails — unless the
record's own ``test_patch`` deleted it: public records list as PASS_TO_PASS a test function the
``test_patch`` removes (dvc 1.10's ``test_missing_deps``). Such a test is absent for every
prediction, gold included, and the official harness counts it failed; it says nothing of the
environment. It is accepted as the record's (``p2p_not_in_test_patch``) when it is absent from
the reference run, its file collected there, the output names no missing module, and no
``def <name>`` is left in its file (a parametrized id whose function is still there is not: this
environment may spell the parameters differently). The instance is then graded, as officially:
no prediction can resolve it.

If not, the instance is an ``environment_error``: reported, unscored, retried when the run is
re-run, listed in ``run_completeness`` — never the agent's failure. The verdict names what to
fix (the spec to change, the tests that failed and how).
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, Field

from evoci import treefs

from evoci.swebench.grade import Grade

PASSING = ("passed", "xfailed", "skipped")
SHOWN = 10


class Validation(BaseModel):
    """The proof of one instance's environment (kept with the run's node results)."""

    ok: bool
    reason: str = ""
    environment_hash: str
    p2p_total: int = 0
    p2p_passing: int = 0
    p2p_absent: int = Field(0, description="P2P tests not collected at the base (tolerated while others ran).")
    not_passing: dict[str, str] = Field(default_factory=dict, description="P2P id → outcome at the base (first few).")
    failing: list[str] = Field(default_factory=list, description="Every P2P test that failed at the base.")
    p2p_release_only: list[str] = Field(default_factory=list,
                                        description="P2P tests failing at the base that pass with the reference patch.")
    p2p_not_in_test_patch: list[str] = Field(default_factory=list, description=(
        "P2P tests the record lists whose function its own test_patch deleted: failed for every prediction."))
    duration_s: float = 0.0


def test_file(test_id: str) -> str:
    """``tests/test_x.py::Class::test_y`` → ``tests/test_x.py`` (the id a collection error is reported under)."""
    return test_id.split("::", 1)[0]


test_file.__test__ = False  # a helper, not a pytest test


def judge_base(result: Grade, p2p: list[str] | tuple[str, ...], environment_hash: str) -> Validation:
    """The verdict on a base + test_patch run (``grade`` with ``base_only``)."""
    common = dict(environment_hash=environment_hash, p2p_total=len(p2p), duration_s=result.duration_s)
    tail = "\n".join(result.output_tail.splitlines()[-15:])
    if result.status == "timeout":
        return Validation(ok=False, reason=f"the base's tests hit the test timeout; output ends:\n{tail}", **common)
    if not any(o != "missing" for o in result.outcomes.values()) and result.status != "ok":
        return Validation(ok=False, reason=f"the base + test_patch ran no test (exit {result.exit_code}); output ends:\n{tail}",
                          **common)
    outcomes = {t: result.outcomes.get(t, "missing") for t in p2p}
    # absent while a test file failed to collect (an "ERROR <file>" line; without --continue-on-collection-errors
    # pytest then runs nothing): the test_patch imports what the release adds
    collection_error = any(o == "error" and "::" not in t for t, o in result.outcomes.items())
    absent = [t for t, o in outcomes.items() if o == "missing" and collection_error]
    if "No module named" in result.output_tail:  # the environment lacks a module: nothing absent is excused
        absent = []
    failing = {t: o for t, o in outcomes.items() if o not in PASSING and t not in absent}
    passing = len(p2p) - len(failing) - len(absent)
    common["p2p_absent"] = len(absent)
    if failing:
        shown = dict(list(failing.items())[:SHOWN])
        listed = ", ".join(f"{t} ({o})" for t, o in shown.items())
        return Validation(ok=False, p2p_passing=passing, not_passing=shown, failing=list(failing),
                          reason=f"{len(failing)} of {len(p2p)} PASS_TO_PASS tests do not pass on the clean base: {listed}"
                                 f"{' …' if len(failing) > SHOWN else ''}; output ends:\n{tail}", **common)
    return Validation(ok=True, p2p_passing=passing, **common)


def deleted_by_test_patch(reference: Grade, tree: Path, ids: list[str]) -> list[str]:
    """Of ``ids`` (absent from the reference run over ``tree``), those whose test function is gone from its
    file: the file collected in that run, the output names no missing module, and no ``def <name>`` is
    left in it (the module docstring)."""
    if "No module named" in reference.output_tail:
        return []
    gone = []
    for test_id in ids:
        file, name = test_file(test_id), test_id.rsplit("::", 1)[-1]
        if reference.outcomes.get(test_id, "missing") != "missing" or reference.outcomes.get(file) == "error" \
                or "[" in name or "::" not in test_id:
            continue
        try:
            source = treefs.read_file(tree, file).decode("utf-8", "replace")
        except OSError:
            continue
        if not re.search(rf"^\s*(async\s+)?def\s+{re.escape(name)}\s*\(", source, re.M):
            gone.append(test_id)
    return gone


def judge_with_reference(base: Validation, reference: Grade, deleted: list[str] | tuple[str, ...] = ()) -> Validation:
    """The verdict once the base's failing P2P tests were run with the reference patch (``base.failing``).

    Proven when every one of them passes with it (they need the release's code, not another
    environment) or is one of ``deleted`` (``deleted_by_test_patch``: the record's). Otherwise the
    base's verdict stands, saying which failed with the reference too.
    """
    outcomes = {t: reference.outcomes.get(t, "missing") for t in base.failing}
    records = [t for t in base.failing if t in set(deleted) and outcomes[t] == "missing"]
    still = {t: o for t, o in outcomes.items() if o not in PASSING and t not in records}
    duration = base.duration_s + reference.duration_s
    if reference.status == "timeout" or still:
        shown = dict(list(still.items())[:SHOWN]) if still else {}
        listed = ", ".join(f"{t} ({o})" for t, o in shown.items())
        why = ("the reference patch's run of them hit the test timeout" if reference.status == "timeout" else
               f"{len(still)} of them fail with the record's reference patch too (the environment's, not the "
               f"release's): {listed}{' …' if len(still) > SHOWN else ''}")
        head, _, tail = base.reason.partition("; output ends:\n")
        reason = f"{head}; {why}" + (f"; the base's output ends:\n{tail}" if tail else "")
        return base.model_copy(update={"reason": reason, "duration_s": duration})
    return base.model_copy(update={"ok": True, "reason": "", "not_passing": {}, "duration_s": duration,
                                   "p2p_passing": base.p2p_passing + len(base.failing) - len(records),
                                   "p2p_release_only": [t for t in base.failing if t not in records],
                                   "p2p_not_in_test_patch": records})
