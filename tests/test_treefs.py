"""evoci.treefs never writes through, reads through or trusts the type of what an agent left."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from evoci import treefs


def test_a_file_written_where_a_link_stood_replaces_the_link_and_leaves_its_target_alone(tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "outside"
    tree.mkdir()
    outside.mkdir()
    (outside / "results.json").write_text("theirs")
    (tree / "config.ini").symlink_to(outside / "results.json")
    (tree / "tests").symlink_to(outside)
    assert treefs.write_file(tree, "config.ini", "mine") == ["config.ini"]
    assert treefs.write_file(tree, "tests/test_x.py", "t") == ["tests"]
    assert (outside / "results.json").read_text() == "theirs" and sorted(os.listdir(outside)) == ["results.json"]
    assert (tree / "config.ini").read_text() == "mine" and treefs.kind(tree, "tests") == "folder"


def test_reads_refuse_links_and_fifos_instead_of_following_or_blocking(tmp_path):
    (tmp_path / "real.txt").write_text("ok")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    os.mkfifo(tmp_path / "pipe")
    assert treefs.read_file(tmp_path, "real.txt") == b"ok"
    for name in ("link.txt", "pipe"):
        with pytest.raises(treefs.NotAFile):
            treefs.read_file(tmp_path, name)
    assert treefs.make_dir(tmp_path, "pipe") == ["pipe"] and treefs.kind(tmp_path, "pipe") == "folder"


def test_links_leaving_the_tree_are_removed_and_named(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "inside.py").symlink_to("../setup.py")
    (tmp_path / "src" / "up.py").symlink_to("../../secret")
    (tmp_path / "abs.py").symlink_to("/etc/passwd")
    assert treefs.remove_leaving_links(tmp_path) == ["abs.py", "src/up.py"]
    assert treefs.kind(tmp_path, "src/inside.py") == "link"


def _nest(root, top: str, levels: int) -> str:
    """Folders ``top/d/d/…`` ``levels`` deep, made one level at a time (no whole path is ever named)."""
    fd = os.open(root, os.O_RDONLY)
    for name in [top] + ["d"] * levels:
        os.mkdir(name, dir_fd=fd)
        inner = os.open(name, os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(os.open("leaf.py", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    os.symlink(str(root.parent / "outside"), "out", dir_fd=fd)
    os.close(fd)
    return top + "/d" * levels


def test_trees_deeper_than_pythons_recursion_and_longer_than_a_path_are_walked_and_removed(tmp_path):
    # Python 3.11's os.walk, Path.rglob and shutil.rmtree raise RecursionError at ~1,000 levels, and
    # no whole path names anything past 4,096 bytes; an agent makes either with a loop of mkdir.
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "keep.txt").write_text("the host's")
    tree = tmp_path / "tree"
    tree.mkdir()
    try:
        deep, deeper = _nest(tree, "a", 1_500), _nest(tree, "b", 3_000)
        found = dict(treefs.walk(tree))
        assert len(found) == 2 + 1_500 + 3_000 + 4 and found[f"{deeper}/leaf.py"] == "file"
        assert found[f"{deep}/out"] == "link" and len(f"{deeper}/leaf.py") > 4096
        assert treefs.remove_leaving_links(tree) == [f"{deep}/out", f"{deeper}/out"]
        assert treefs.kind(tree, f"{deeper}/leaf.py") == "file"
        assert treefs.remove(tree, "b") == "folder" and sorted(os.listdir(tree)) == ["a"]
        treefs.clear(tree)
        assert not tree.exists() and (tmp_path / "outside" / "keep.txt").read_text() == "the host's"
    finally:  # pytest's own clean-up of old temporary folders cannot remove such a tree (RecursionError)
        treefs.clear(tree)


def test_an_agents_harness_folder_is_copied_out_for_people_whatever_its_shape(tmp_path):
    # The iteration's .evoci (requirement.xml, non-passed/) is kept as an artifact; the agent may
    # have put a FIFO, a link to the host or a folder chain deeper than Python recurses in it.
    (tmp_path / "outside").mkdir()
    tree, dest = tmp_path / "workspace", tmp_path / "artifacts" / "iteration-1"
    (tree / ".evoci" / "non-passed").mkdir(parents=True)
    (tree / ".evoci" / "requirement.xml").write_text("<requirement/>")
    (tree / ".evoci" / "non-passed" / "test_a.txt").write_text("failed")
    os.mkfifo(tree / ".evoci" / "pipe")
    try:
        deep = _nest(tree / ".evoci", "chain", 1_500)
        dest.mkdir(parents=True)
        (dest / "stale.txt").write_text("an earlier attempt's")
        treefs.copy_out(tree, ".evoci", dest)
        assert (dest / "requirement.xml").read_text() == "<requirement/>"
        assert (dest / "non-passed" / "test_a.txt").read_text() == "failed"
        assert not (dest / "pipe").exists() and not (dest / "stale.txt").exists()
        kept = dict(treefs.walk(dest))
        assert "chain/d/d/d/d/d/d/d" in kept and f"{deep}/leaf.py" not in kept  # eight levels, no more
        treefs.copy_out(tree, "missing", dest)  # the agent removed the folder: an empty one is kept
        assert os.listdir(dest) == []
    finally:
        treefs.clear(tree)


LOCKED_OUT = textwrap.dedent("""
    import os, sys
    from pathlib import Path
    from evoci import treefs

    root = Path(sys.argv[1])
    for folder in ("t/locked/inner", "t/readonly", "t/deep/a/b"):
        (root / folder).mkdir(parents=True)
    (root / "t/locked/inner/code.py").write_text("x = 1")
    os.symlink("/etc", root / "t/locked/inner/escape")
    (root / "t/readonly/code.py").write_text("y = 2")
    (root / "t/deep/a/b/code.py").write_text("z = 3")
    (root / "t/unreadable.py").write_text("w = 4")
    os.chmod(root / "t/unreadable.py", 0o000)
    os.chmod(root / "t/locked/inner", 0o000)  # what an agent's `chmod` does to its own folders
    os.chmod(root / "t/locked", 0o000)
    os.chmod(root / "t/readonly", 0o555)
    os.chmod(root / "t/deep/a", 0o100)

    os.chmod(root / "t", 0o000)  # the tree's root as well
    seen = {rel for rel, _ in treefs.walk(root / "t")}
    assert {"locked/inner/code.py", "readonly/code.py", "deep/a/b/code.py"} <= seen, seen
    assert treefs.remove_leaving_links(root / "t") == ["locked/inner/escape"]
    assert [rel for rel, found in treefs.walk(root / "t") if found == "file" and treefs.let_owner_read(root / "t", rel)] \
        == ["unreadable.py"]
    assert (root / "t/unreadable.py").read_text() == "w = 4"
    treefs.clear(root / "t")
    assert not (root / "t").exists()
    print("ok")
""")


def test_folders_an_agent_locked_are_still_scanned_and_removed_by_a_harness_that_is_not_root(tmp_path):
    # As root every permission is ignored; the harness of most users is not root. The child runs
    # without the capabilities that let root ignore them (or as the user itself when not root).
    drop = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"] if os.geteuid() == 0 else []
    done = subprocess.run([*drop, sys.executable, "-c", LOCKED_OUT, str(tmp_path)], capture_output=True, text=True,
                          timeout=120)
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-3000:]
