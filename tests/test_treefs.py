"""evoci.treefs never writes through, reads through or trusts the type of what an agent left."""

from __future__ import annotations

import os

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
