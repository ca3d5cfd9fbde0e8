"""Environment specs, the official test command and the public parser names, on records the project writes."""

from __future__ import annotations

import json

import pytest

from evoci.domain import RunConfig
from evoci.errors import InputError
from evoci.swe_evo.datasets import load_evo_dataset
from evoci.swe_evo.loader import load_swe_evo, parse_record
from evoci.swebench.command import official_command, plugins_for_options, test_directives
from evoci.swebench.specs import load_specs, version_key

TEST_PATCH = """\
diff --git a/tests/test_new.py b/tests/test_new.py
new file mode 100644
--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1 @@
+def test_x(): pass
diff --git a/tests/test_gone.py b/tests/test_gone.py
deleted file mode 100644
--- a/tests/test_gone.py
+++ /dev/null
@@ -1 +0,0 @@
-def test_y(): pass
diff --git a/tests/data/case.json b/tests/data/case.json
--- a/tests/data/case.json
+++ b/tests/data/case.json
@@ -1 +1 @@
-{}
+{"a": 1}
diff --git a/pkg/tests/test_old.py b/pkg/tests/test_old.py
--- a/pkg/tests/test_old.py
+++ b/pkg/tests/test_old.py
@@ -1 +1 @@
-x = 1
+x = 2
"""


def record(**extra) -> dict:
    return {"instance_id": "acme__widgets_1.2.0_1.2.1", "repo": "psf/requests", "base_commit": "abc",
            "problem_statement": "notes", "FAIL_TO_PASS": ["t::a"], "PASS_TO_PASS": ["t::b"], "repo_path": ".",
            "start_version": "v2.27.0", "version": "3.1", "test_cmds": "pytest -rA", **extra}


def test_directives_are_the_python_files_the_test_patch_keeps_appended_to_the_command():
    assert test_directives(TEST_PATCH) == ["tests/test_new.py", "pkg/tests/test_old.py"]
    command = official_command("pytest --continue-on-collection-errors -rA", TEST_PATCH)
    assert command.text == "pytest --continue-on-collection-errors -rA tests/test_new.py pkg/tests/test_old.py"
    assert official_command("pytest -rA", "").text == "pytest -rA"  # no test_patch: the command as given


def test_a_plugin_option_names_the_plugin_to_load_explicitly():
    assert official_command("pytest --continue-on-collection-errors -n0 -rA", TEST_PATCH).plugins == ("xdist.plugin",)
    assert plugins_for_options("pytest -n 4 --timeout=60 --cov=pkg -rA") == ["xdist.plugin", "pytest_timeout",
                                                                            "pytest_cov.plugin"]
    assert plugins_for_options("pytest -rA --tb=short -vv --no-header") == []


@pytest.mark.parametrize("name", ["parse_log_pytest", "parse_log_pytest_options", "parse_log_pytest_v2",
                                  "parse_log_pytest_pydantic"])
def test_a_record_naming_each_public_parser_loads(tmp_path, name):
    instance = parse_record(record(log_parser=name), base_dir=tmp_path)
    assert instance.log_parser == name


def test_the_version_key_is_the_start_versions_major_minor_not_the_records_version_field():
    assert version_key("v2.27.0", "2.27") == "2.27"
    assert version_key("0.33.1", "3.1") == "0.33"  # the public record's version field says 3.1
    assert version_key("1.0.0a1", None) == "1.0"
    assert version_key(None, "2022.9") == "2022.9"


def test_a_side_file_overrides_a_shipped_spec_without_changing_the_record(tmp_path):
    shipped = load_specs().lookup("psf/requests", "2.27")
    assert shipped is not None and shipped.python == "3.9"
    side = tmp_path / "envs.json"
    side.write_text(json.dumps({"psf/requests": [{"versions": ["2.27"], "python": "3.10", "packages": ["pytest==7.4.4"],
                                                   "pytest_plugins": ["pytest_mock"]}],
                                "acme/widgets": [{"versions": ["1.2"], "python": "3.11"}]}))
    book = load_specs(side)
    assert book.lookup("psf/requests", "2.27").python == "3.10"
    # the launcher's report plugin joins where the spec does not name it (unpinned: another Python than evoci's)
    assert book.lookup("psf/requests", "2.27").environment().requirements == ("pytest==7.4.4", "pytest-json-report")
    assert book.lookup("acme/widgets", "1.2").python == "3.11"  # added
    plain, overridden = (parse_record(record(), base_dir=tmp_path, specs=s) for s in (load_specs(), book))
    assert plain.record_hash == overridden.record_hash  # the record's identity is its own content
    assert plain.spec.python == "3.9" and overridden.spec.python == "3.10"
    # the run is another one: its name carries the side file's hash
    folder = tmp_path / "records"
    folder.mkdir()
    (folder / "r.json").write_text(json.dumps(record()))
    config = RunConfig(protocol="swe-evo")
    assert load_evo_dataset(str(folder), config)[1] != load_evo_dataset(str(folder), config, environments=str(side))[1]
    assert load_swe_evo(folder, specs=book).instances[0].spec.python == "3.10"


def test_a_bad_side_file_names_what_is_wrong(tmp_path):
    side = tmp_path / "envs.json"
    side.write_text(json.dumps({"psf/requests": [{"versions": ["2.27"]}]}))
    with pytest.raises(InputError, match="spec 0 of 'psf/requests' is invalid.*python"):
        load_specs(side)
    with pytest.raises(InputError, match="not found"):
        load_specs(tmp_path / "missing.json")
