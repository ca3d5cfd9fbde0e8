"""The one grading path every protocol grades through; protocol specifics plug into its steps.

1. **Build the tree** the grade is read from, never the agent's workspace. Every builder works
   through ``evoci.treefs`` (nothing followed, nothing trusted by its type; a harness-owned name
   replaced whatever it is) and returns what it overrode: ``tree`` (SWE-CI: the commit with the
   oracle's test infrastructure), ``evoci.swebench.tree`` (SWE-EVO, SWE-Bench-CL: the clean base
   + the patch + the record's tests), ``evoci.nitr.trees`` (NITR: the code + the starter + the
   evaluator). Runner look-alikes and start-up hooks go (``shadows``, ``tree.HOOK_FILES``).
2. **Run the command in the sandbox**: ``run.in_sandbox`` opens an ephemeral sandbox over the
   tree and removes both after; ``run.run_launched`` runs pytest through the ``launcher`` (its
   report on a private ``channel``, cross-checked by a tally), ``run.run_logged`` a script read
   by a log parser, ``run.run_proven`` a command judged by its exit status. Test modules'
   rewritten bytecode is kept between runs (``bytecode``), made only before the tree runs.
3. **Read the outcomes** (``run.Ran``) by the rules of ``evoci.grading.run``: infrastructure is
   only what the harness proves (the canary, a lost exit status, a lookup of a missing tool);
   what a killed or void run printed is never read.
4. **Record what was overridden or flagged**: the tree's overrides, the run's flags, and the
   ``sabotage`` scan of what the agent added (``diffpaths`` reads every path of a diff).

A protocol's grader composes the steps and maps the outcomes to its own ids and record:
``evoci.swe_ci.grade`` (a ``TestReport``), ``evoci.swebench.grade`` (the record's parser and ids,
a ``Grade``), ``evoci.nitr.evaluator`` (the pipeline's modules, a ``NitrGrade``).
"""

# The grading path's version, in every grading node's cache key: a result graded by an older tree
# builder or runner is never reused when a run resumes. 3: SWE-EVO's harness-made .git (a spec's
# git_checkout) and a prediction's .git files left out of its patch instead of the patch refused;
# a tree module the tested code registers as a plugin by hand is flagged. 4: the launcher ends 0
# after its own frame and a frame is read only then; hooks judged by the namespace they run in and
# listed as the tests run; pytest's "already imported" rewrite warning ignored (a project whose
# warnings are errors could not start); entry points read on Python 3.7; a spec's silent network.
GRADER_VERSION = 4
