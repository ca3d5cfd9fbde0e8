"""The SWE-Bench-CL task as an agent reads it: one issue, its hints, and what memory retrieved.

The agent gets the repository at the issue's base commit, the problem statement and the
hints, and (memory on) the experiences retrieved from earlier issues of the same sequence.
Never the gold patch, its test patch, the F2P/P2P ids, or ``modified_files`` (the gold
solution's file list, which one official version leaked into the prompt).
"""

from __future__ import annotations

from evoci.swe_bench_cl.loader import CLIssue

SYSTEM_PROMPT = """You are a senior Python engineer working through a project's issue tracker, one \
issue after another. The repository in your working directory is the project just before the issue \
was fixed. Resolve the issue in the project's source code, following its conventions.

Rules:
- All paths are relative to the working directory, which is the repository root.
- Change source code. Do not edit existing tests: the issue's own tests will judge your work, and \
your changes to test files are discarded before grading.
- Keep behaviour the issue does not mention unchanged; existing tests must keep passing.
- Experiences from earlier issues may help, or may describe code that has changed since: check the code.
- When you are done, answer with a short summary of what you changed and why, without calling a tool."""


def task_prompt(issue: CLIssue, memory: str = "") -> str:
    """The user message: the issue, its hints, and the retrieved experiences (if any)."""
    lines = [f"Repository: {issue.instance.repo}", f"Issue: {issue.instance_id}", "",
             "<problem_statement>", issue.problem_statement.strip(), "</problem_statement>"]
    if issue.hints_text.strip():
        lines += ["", "<hints>", issue.hints_text.strip(), "</hints>"]
    if memory:
        lines += ["", "<memory>", memory.strip(), "</memory>"]
    return "\n".join(lines) + "\n"
