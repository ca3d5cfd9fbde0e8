"""SWE-CI (arXiv 2603.03823): evolve a base commit toward its oracle over CI iterations.

- ``grade``: the test node's grader (the task's pytest run through ``evoci.grading.run``, a ``TestReport``);
- ``datasets``: the built-in demo, a JSONL of tasks, or a release split (``releases``) → ``TaskSpec``s;
- ``demo``: the built-in ``semverkit`` task (``generated``: small libraries for the scale benchmarks);
- ``quality``: static code quality of a codebase (§4.4), with its own ``pylintrc``;
- ``digest`` reads a run's results from the views; ``report`` prints them for ``evoci report``
  and publishes the flow runs' artifacts, ``plots`` (a(c) per iteration, the EvoScore ranking
  across γ) and ``report_html`` (``evoci report --html``) draw them;
- ``curation`` mines base → oracle pairs from a repository's history; ``cli`` is SWE-CI's
  ``evoci run`` (the ``benchmark`` flow) and the ``evoci curate`` command (the ``curate`` flow).
"""
