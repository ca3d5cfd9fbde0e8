"""The optional judge step of the ``swe_evo`` flow: label every unresolved instance with a prediction.

Which instances are unresolved comes from ``swe_evo_instances`` (the view decides, not Python);
the evidence is read from the facts the flow recorded (trajectory, grading, target outcomes).
"""

from __future__ import annotations

import json

from evoci.domain import AgentConfig
from evoci.runtime import RunContext
from evoci.store import reading
from evoci.swe_evo.judge import evidence
from evoci.swe_evo.loader import EvoInstance

UNRESOLVED = """select task_id from swe_evo_instances
                where run_id = ? and has_prediction and not invalid and not resolved order by task_id"""
FAILING = """select targets.test_id, targets.role, coalesce(r.outcome, 'missing') from targets
             left join test_results r on r.run_id = targets.run_id and r.task_id = targets.task_id
                 and r.test_id = targets.test_id and r.iteration = 1
             where targets.run_id = ? and targets.task_id = ? and coalesce(r.outcome, 'missing') not in ('passed', 'xfailed')
             order by targets.role, targets.test_id"""


def judge_unresolved(run: RunContext, instances: list[EvoInstance], judge: AgentConfig) -> int:
    """Run the judge node for each unresolved instance; record its label. Returns how many were judged."""
    from evoci.tasks.swe_evo import evo_judge_task, node_options

    by_id = {i.instance_id: i for i in instances}
    with reading(run.db, run_id=run.run_id) as con:
        unresolved = [row[0] for row in con.execute(UNRESOLVED, [run.run_id]).fetchall()]
        evidence_by_id = {}
        for task_id in unresolved:
            failing = con.execute(FAILING, [run.run_id, task_id]).fetchall()
            grading = con.execute("select status from gradings where run_id = ? and task_id = ? and iteration = 1",
                                  [run.run_id, task_id]).fetchone()
            trajectory = con.execute("select trajectory from trajectories where run_id = ? and task_id = ? "
                                     "and iteration = 1 and role = 'programmer'", [run.run_id, task_id]).fetchone()
            evidence_by_id[task_id] = evidence(by_id[task_id].release_notes, grading[0] if grading else "unknown",
                                               failing, json.loads(trajectory[0]) if trajectory and trajectory[0] else [])
    node = evo_judge_task.with_options(**node_options(run))
    for task_id in unresolved:
        result = node(run, task_id, judge, evidence_by_id[task_id])
        run.facts.failure_label(run.run_id, task_id, judge.model or "?", status=result.status, label=result.label,
                                reason=result.reason, calls=result.calls)
    return len(unresolved)
