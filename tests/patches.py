"""Git-format patches written by tests, as an agent's prediction would be."""

from __future__ import annotations

import difflib

import git


def patch_setting(source: git.Repo, base: str, files: dict[str, str]) -> str:
    """A patch against ``base`` that gives each path the content in ``files`` (new or changed files)."""
    tree, out = source.commit(base).tree, []
    for path, text in files.items():
        try:
            old, head, before = tree[path].data_stream.read().decode(), f"diff --git a/{path} b/{path}\n", f"a/{path}"
        except KeyError:
            old, head, before = "", f"diff --git a/{path} b/{path}\nnew file mode 100644\n", "/dev/null"
        out.append(head + "".join(difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                                       before, f"b/{path}")))
    return "".join(out)


def patch_by(source: git.Repo, base: str, change, scratch) -> str:
    """The patch an agent's work would be: ``change(folder)`` edits a checkout of ``base`` (links and deletions
    included, as ``git diff --binary`` writes them)."""
    repo = source.clone(str(scratch))
    repo.git.checkout("--detach", base)
    change(scratch)
    repo.git.add("--all")
    return repo.git.diff("--cached", "--binary", base) + "\n"
