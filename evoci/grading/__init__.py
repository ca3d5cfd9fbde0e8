"""Grading: the tree the harness builds, the runner that tests it, and the flags it raises."""
