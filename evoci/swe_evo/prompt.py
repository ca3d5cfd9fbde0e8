"""The SWE-EVO task as an agent reads it: the release notes and the allowed PR context.

SWE-EVO (arXiv 2512.18470, §3) gives the agent the base codebase and the release's notes,
optionally with the linked PRs and issues. evoci passes each PR's number, title (often
null in the data), link, and whether it is an issue or mentioned in the notes — never a
patch, a test patch, or the list of test files a PR changed: those are answers.
"""

from __future__ import annotations

from evoci.domain import TaskSpec

SYSTEM_PROMPT = """You are a senior Python engineer. The repository in your working directory is a \
project at one release. Implement the next release: every change its release notes describe, \
in the project's source code, following the project's own conventions.

Rules:
- All paths are relative to the working directory, which is the repository root.
- Change source code. Do not edit existing tests: the release's own tests will judge your work, \
and your changes to test files are discarded before grading.
- Keep behaviour the notes do not mention unchanged; existing tests must keep passing.
- When you are done, answer with a short summary of what you changed, without calling a tool."""


def task_prompt(task: TaskSpec) -> str:
    """The user message: which release to implement, its notes, and the PR context."""
    meta = task.metadata
    lines = [
        f"Repository: {meta.get('repo') or task.task_id}",
        f"Current release: {meta.get('start_version') or 'unknown'}; implement release {meta.get('end_version') or 'the next one'}.",
        "",
        "Release notes:",
        "<release_notes>",
        str(meta.get("release_notes", "")).strip(),
        "</release_notes>",
    ]
    prs = meta.get("prs") or []
    if prs:
        lines += ["", "Pull requests and issues linked to this release (titles may be missing):"]
        for pr in prs:
            kind = "issue" if pr.get("is_issue") else "PR"
            title = pr.get("title") or "(no title)"
            mention = ", mentioned in the notes" if pr.get("mentioned_in_release_note") else ""
            link = f" <{pr['url']}>" if pr.get("url") else ""
            lines.append(f"- {kind} #{pr.get('number')}: {title}{link}{mention}")
    return "\n".join(lines) + "\n"
