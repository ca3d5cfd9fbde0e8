"""The grading tree's own ``.git``: one commit of the clean base, made by the harness (opt-in per spec).

The SWE-bench images grade inside a checkout, and some records' tests open the repository they
run in (dvc's ``Repo()`` in the working folder raises ``SCMError`` without one). For a spec with
``git_checkout``, the grading tree gets a ``.git`` whose one commit holds the base's tree, so
``git status`` there shows the agent's patch and the ``test_patch`` as working-tree changes, as in
the official harness. Nothing of the future is in it: no history, no other ref, no object but the
base tree's, and a commit of evoci's fixed identity and date (the same base gives the same ``.git``).

Built with plumbing only, in a folder beside the tree, from the source repository's objects:
no git command reads the grading tree (its files, ``.gitattributes``, a ``.git`` the agent
planted) and none runs a hook or reads a config but the one it creates, system and global config
ignored and ``HOME`` empty. It is moved into the tree last, after whatever stood at ``.git``
is removed (and recorded). The harness never reads it again.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import git

from evoci import treefs
from evoci.workspace import GIT_EPOCH, GIT_IDENTITY, SAFE_GIT_CONFIG, SAFE_GIT_ENV

GIT_DIR = ".git"
BRANCH = "main"
MESSAGE = "evoci: the clean base"


def add_base_repository(root: Path, source: git.Repo, base_sha: str) -> list[str]:
    """Give the tree at ``root`` a ``.git`` holding one commit of ``base_sha``'s tree; return what stood at ``.git``."""
    replaced = [GIT_DIR] if treefs.remove(root, GIT_DIR) else []
    tree_sha = source.commit(base_sha).tree.hexsha
    with tempfile.TemporaryDirectory(prefix=".evoci-checkout-", dir=root.parent) as folder:
        home, work = Path(folder) / "home", Path(folder) / "work"
        home.mkdir()
        work.mkdir()
        date = f"{GIT_EPOCH} +0000"
        env = {**SAFE_GIT_ENV, **GIT_IDENTITY, "HOME": str(home), "XDG_CONFIG_HOME": str(home),
               "GIT_CEILING_DIRECTORIES": folder, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}
        new = git.Git(work)  # run in the empty work/, so the repository is work/.git and no core.worktree is set
        new.update_environment(**env)
        new.set_persistent_git_options(c=list(SAFE_GIT_CONFIG))
        new.init("--quiet", "--template=", f"--initial-branch={BRANCH}")
        _copy_objects(source, tree_sha, new, Path(folder) / "base.pack")
        commit = new.commit_tree(tree_sha, "-m", MESSAGE)
        new.update_ref(f"refs/heads/{BRANCH}", commit)
        new.read_tree(commit)  # the index of a checkout of it (stat data is refreshed by the first git status)
        os.rename(work / GIT_DIR, root / GIT_DIR)  # nothing stands there: removed above, no git command wrote it
    return replaced


def _copy_objects(source: git.Repo, tree_sha: str, new: git.Git, pack: Path) -> None:
    """Every object of ``tree_sha`` (and nothing else) from ``source`` into ``new``'s repository, as one pack."""
    names = Path(str(pack) + ".list")
    names.write_text("".join(line.split(" ", 1)[0] + "\n"
                             for line in source.git.rev_list("--objects", tree_sha).splitlines()))
    with names.open("rb") as wanted:
        pack.write_bytes(source.git.pack_objects("--stdout", "-q", "--window=0", istream=wanted,  # no delta search
                                                 stdout_as_string=False,
                                                 strip_newline_in_stdout=False))
    with pack.open("rb") as data:
        new.index_pack("--stdin", istream=data)
