"""SWE-Bench-CL: sequences of issues in one repository, with and without semantic memory (arXiv 2507.00014)."""
