"""Refs in a dataset line: a ref the repository does not hold is bad input, named, even as a full SHA."""

from __future__ import annotations

import git
import pytest

from evoci.errors import TaskSpecError
from evoci.workspace import resolve
from tests.repos import calc_repo


def test_a_full_sha_the_repository_does_not_hold_is_named_as_bad_input(tmp_path):
    source = git.Repo(calc_repo(tmp_path / "calc"))
    assert resolve(source, "base", "base") == source.commit("base").hexsha
    missing = "0" * 40  # the null SHA: GitPython hands it back without looking
    with pytest.raises(TaskSpecError, match=f"oracle ref '{missing}' does not exist"):
        resolve(source, missing, "oracle")
