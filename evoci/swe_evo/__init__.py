"""SWE-EVO (arXiv 2512.18470): implement a release from its notes, graded by the release's tests.

The protocol at a glance — loader + flow + grader + views:

- ``loader``: SWE-bench-format records → ``EvoInstance`` (agent-visible task, targets, answers apart);
- ``evoci.flows.swe_evo``: prepare → agent (``agents``, ``predictions``) → test, per instance;
- ``evoci.swebench``: the grader shared with SWE-Bench-CL (grading tree, log parsers);
- ``sql/views/swe_evo_instances.sql``, ``swe_evo_runs.sql``, ``swe_evo_failure_modes.sql``.

``demo`` builds the built-in dataset; ``judge`` is the optional failure-taxonomy step.
"""
