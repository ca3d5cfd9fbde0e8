"""SWE-bench-style grading, shared by SWE-EVO and SWE-Bench-CL.

``tree`` builds the grading tree (clean base + the agent's patch + the record's tests, hooks
removed), ``parsers`` turns a test log into per-test outcomes by the record's parser name,
``grade`` runs the record's test command in a sandbox and ties the two together.
"""
