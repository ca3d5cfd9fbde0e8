"""evoci.swe_ci.releases: the SWE-CI release layout read into tasks (no Docker needed)."""

from __future__ import annotations

import hashlib
import zipfile

import pytest

from evoci.errors import DatasetError
from evoci.settings import Paths
from evoci.swe_ci.datasets import dataset_name, load_dataset
from evoci.swe_ci.releases import TEST_COMMAND, split_file
from tests.swe_ci.releases import TASKS, build_release


@pytest.fixture
def release(tmp_path):
    return build_release(tmp_path / "swe-ci-release")


def test_a_split_loads_every_task_with_the_official_test_command(release, tmp_path):
    split = split_file(release, "test")
    data = load_dataset(str(split), Paths(home=tmp_path / "home"))
    assert (data.name, data.errors) == ("swe-ci-release-test", [])
    assert [t.task_id for t in data.tasks] == [t for t, _, _ in TASKS]
    task = data.tasks[0]
    assert task.test_command == TEST_COMMAND == ("python", "-m", "pytest", "tests", "--color=no", "--tb=short",
                                                 "--disable-warnings", "-rfE")
    assert (task.pythonpath, task.test_timeout_s, task.image_archive) == (("src", "."), 3600.0, None)
    assert (tmp_path / "home" / "releases").is_dir() and (task.repo.endswith("/semverkit"))
    import git

    assert git.Repo(task.repo).commit(task.oracle_ref).hexsha == task.oracle_ref


def test_a_code_archive_is_unpacked_once_per_content(release, tmp_path):
    paths = Paths(home=tmp_path / "home")
    first = load_dataset(str(split_file(release, "test")), paths).tasks
    again = load_dataset(str(split_file(release, "test")), paths).tasks
    assert [t.repo for t in first] == [t.repo for t in again]
    assert len(list((tmp_path / "home" / "releases").iterdir())) == 1  # both tasks' zips hold the same repository


def test_an_image_archive_is_identified_by_its_content(release, tmp_path):
    archive = release / "data" / "semverkit-full" / "image.tar.gz"
    archive.write_bytes(b"not really an image")
    [full, ranges] = load_dataset(str(split_file(release, "test")), Paths(home=tmp_path / "home")).tasks
    assert full.image_archive == str(archive) and full.image_digest == hashlib.sha256(b"not really an image").hexdigest()
    assert ranges.image_archive is None


def test_bad_rows_are_reported_and_the_others_still_load(release, tmp_path):
    split = split_file(release, "test")
    split.write_text(split.read_text() + "ghost,abc,def,\n../evil,abc,def,\n")
    (release / "data" / "semverkit-ranges" / "code.zip").write_bytes(b"garbage")
    data = load_dataset(str(split), Paths(home=tmp_path / "home"))
    assert [t.task_id for t in data.tasks] == ["semverkit-full"]
    messages = [str(e) for e in data.errors]
    assert "test.csv:3: " in messages[0] and "not a zip archive" in messages[0]
    assert "test.csv:4: " in messages[1] and "data/ghost/code.zip is missing" in messages[1]
    assert "test.csv:5: " in messages[2] and "task_id '../evil' contains a path separator" in messages[2]


def test_an_unknown_split_names_the_splits_there_are(release):
    with pytest.raises(DatasetError, match="no split 'dev' in this release — the splits here are: test"):
        split_file(release, "dev")


def test_a_zip_without_a_repository_is_a_clear_error(release, tmp_path):
    with zipfile.ZipFile(release / "data" / "semverkit-full" / "code.zip", "w") as archive:
        archive.writestr("README", "no git here")
    data = load_dataset(str(split_file(release, "test")), Paths(home=tmp_path / "home"))
    assert "holds no git repository" in str(data.errors[0])
    assert dataset_name(str(split_file(release, "test"))) == "swe-ci-release-test"
