"""Loading a checkout in the public NITR layout, and evoci's own suite."""

from __future__ import annotations

import json

import pytest

from evoci.errors import InputError
from evoci.nitr.loader import load_suite
from evoci.nitr.pipeline import MODULES, parse_pipeline
from evoci.nitr.suites import PROBES, run_dataset_name, suite_name, suite_root


def test_public_layout_loads_python_and_cpp_cases_and_names_the_unusable_ones(public_checkout):
    suite = load_suite(public_checkout)
    probes = {p.probe_id: p for p in suite.probes}
    assert {k: (p.language, p.dimension, p.granularity, p.steps) for k, p in probes.items()} == {
        "101.retry-setting-python": ("python", "D1", "micro", 1),
        "102.percent-clamp": ("cpp", "D2", "micro", 1),  # matched by number: the table's name differs
    }
    assert probes["101.retry-setting-python"].spec_path.endswith("docs/101.retry-setting-python/SPEC.md")
    assert probes["102.percent-clamp"].spec_path is None
    assert probes["102.percent-clamp"].evaluator_dir.endswith("evaluator/percent-clamp")  # named by slug
    errors = sorted(str(e) for e in suite.errors)
    assert len(errors) == 2
    assert "103.gap-in-steps: TASK files [1, 3] have a gap" in errors[0]
    assert "104.not-in-matrix: no row for 104 in docs/design_matrix.md" in errors[1]


def test_the_fixture_pipelines_use_every_module(public_checkout):
    used = set()
    for probe in load_suite(public_checkout).probes:
        used |= {m.module_name for m in probe.pipeline.modules}
    assert used == set(MODULES)
    targets = load_suite(public_checkout, {"id": ["101"]}).probes[0].pipeline.targets()
    assert targets == {
        "unit_test:retry_tests": "functional", "required_paths:layout": "structural",
        "baseline_diff:only_src_changes": "structural", "frozen_paths:callers_unchanged": "structural",
        "source_analysis:signatures_stable": "structural", "customized_check:setting_in_config": "structural",
    }  # build decides E, it is not a target


@pytest.mark.parametrize("select, expected", [
    ({"id": ["102"]}, ["102.percent-clamp"]),
    ({"language": ["python"]}, ["101.retry-setting-python"]),
    ({"dimension": ["d2"]}, ["102.percent-clamp"]),
    ({"granularity": ["multi-step"]}, []),
    ({"language": ["cpp", "python"], "dimension": ["D1"]}, ["101.retry-setting-python"]),
])
def test_selection(public_checkout, select, expected):
    assert [p.probe_id for p in load_suite(public_checkout, select).probes] == expected


def test_bad_selection_and_bad_root_say_what_to_do(tmp_path, public_checkout):
    with pytest.raises(InputError, match="unknown NITR selection colour — choose from: id, language"):
        load_suite(public_checkout, {"colour": ["red"]})
    with pytest.raises(InputError, match="has no cases/ folder — pass the root of a NITR checkout"):
        load_suite(tmp_path)


def test_a_changed_probe_has_a_new_identity(public_checkout):
    before = load_suite(public_checkout, {"id": ["101"]}).probes[0].content_hash
    (public_checkout / "evaluator" / "101.retry-setting-python" / "checks" / "check_config.py").write_text("# changed\n")
    assert load_suite(public_checkout, {"id": ["101"]}).probes[0].content_hash != before


UT = {"module_name": "unit_test", "name": "t", "command": ["x"]}


@pytest.mark.parametrize("pipeline, message", [
    ({"modules": []}, "non-empty `modules` list"),
    ({"modules": [{"module_name": "lint", "name": "x"}]}, "module_name 'lint' — choose one of: build"),
    ({"modules": [{"module_name": "unit_test", "name": "t"}]}, "module 't' \\(unit_test\\): `command` must be a non-empty"),
    ({"modules": [{"module_name": "unit_test", "name": "t", "command": ["{nope}"]}]}, "unknown placeholder 'nope'"),
    ({"modules": [{"module_name": "unit_test", "name": "t", "command": ["x"]}]}, "at least one enabled unit_test module"),
    ({"modules": [UT, {"module_name": "source_analysis", "name": "s", "scan_root": ["src"], "rules": [{}]}]},
     "module 's' \\(source_analysis\\): unknown key 'scan_root'"),
    ({"modules": [UT, {"module_name": "source_analysis", "name": "s", "rules": [{"any_patterns": ["("]}]}]},
     "module 's' \\(source_analysis\\): rules\\[0\\].any_patterns: '\\(' is not a regular expression"),
    ({"modules": [UT, {"module_name": "source_analysis", "name": "s", "global_rules": []}]}, "needs `rules` or `global_rules`"),
    ({"modules": [UT, {"module_name": "source_analysis", "name": "s", "rules": [{}], "normalize": "lower"}]},
     "`normalize` is 'lower'"),
    ({"modules": [UT, {"module_name": "required_paths", "name": "r", "root": "home", "paths": ["a"]}]}, "`root` is 'home'"),
    ({"modules": [UT, {"module_name": "frozen_paths", "name": "f", "paths": []}]}, "`paths` must be a non-empty list"),
    ({"modules": [UT, {"module_name": "baseline_diff", "name": "d", "include_globs": ["/src/*"]}]}, "empty or absolute glob"),
    ({"modules": [UT, {"module_name": "baseline_diff", "name": "d"}], "timeout": 3}, "unknown top-level key 'timeout'"),
])
def test_bad_pipelines_are_named(pipeline, message):
    """Whatever evoci cannot evaluate as written is refused when the case loads, naming the module and key."""
    with pytest.raises(InputError, match=message):
        parse_pipeline(pipeline, "evaluator/x/pipeline.json")


def test_builtin_suite_meets_the_issue():
    suite = load_suite(PROBES)
    assert suite.errors == []
    python = [p for p in suite.probes if p.language == "python"]
    assert len(python) >= 4 and len({p.dimension for p in python}) >= 3
    assert any(p.granularity == "multi-step" and p.steps == 3 for p in python)
    assert [p.language for p in suite.probes].count("cpp") >= 1
    for probe in suite.probes:  # every probe reaches every category it promises, E included
        expected = json.loads((PROBES / "references" / probe.probe_id / "expected.json").read_text())
        assert set(expected) == {"intended", "shortcut", "broken", "no-build"}
        assert expected["intended"] == "Pass" and expected["shortcut"] == "S" and expected["no-build"] == "E"
        assert expected["broken"] in ("F", "B")


def test_sources():
    assert suite_root("nitr") == PROBES and suite_name("nitr") == "nitr"
    assert suite_name("nitr:/data/NITR") == "nitr-NITR" and str(suite_root("nitr:/data/NITR")) == "/data/NITR"


def test_a_checkout_built_as_one_cmake_project_places_cases_as_the_checkout_does(one_project_checkout):
    probes = {p.probe_id: p for p in load_suite(one_project_checkout).probes}
    probe = probes["201.retry-setting"]
    assert probe.one_project and probe.places()["case_root"] == "cases/201.retry-setting"
    assert probe.places()["evaluator_root"] == "evaluator/201.retry-setting"
    first = probe.grading_pipeline().modules[0]
    assert first.module_name == "build" and "-DNITR_CASE=201.retry-setting" in first.command
    assert probes["202.percent-clamp"].language == "cpp"


def test_run_ids_derive_from_the_probes_content_and_selection(public_checkout):
    source = f"nitr:{public_checkout}"
    name = run_dataset_name(source, load_suite(public_checkout))
    assert name.startswith("nitr-NITR-") and name == run_dataset_name(source, load_suite(public_checkout))
    assert run_dataset_name(source, load_suite(public_checkout, {"id": ["101"]})) != name
    (public_checkout / "cases" / "101.retry-setting-python" / "TASK.md").write_text("# a changed task\n")
    assert run_dataset_name(source, load_suite(public_checkout)) != name  # never merges into old results


def test_variables_fill_placeholders_and_decide_enabled_if():
    pipeline = parse_pipeline({"build_dir": "../../build", "variables": {"hidden": False, "flavour": "fast"}, "modules": [
        {"module_name": "build", "name": "b", "command": "make {flavour} -C '{build_dir}'",
         "configure_args": ["-DHIDDEN={hidden}"], "cwd": "{case_root}"},
        {"module_name": "unit_test", "name": "t", "command": ["x", "{flavour}"]},
        {"module_name": "source_analysis", "name": "off", "enabled_if": "hidden", "rules": [{}]},
        {"module_name": "source_analysis", "name": "on", "enabled_if": True, "rules": [{}]},
        {"module_name": "required_paths", "name": "never", "enabled_if": "no", "paths": ["a"]},
    ]}, "p.json")
    assert [m.name for m in pipeline.modules] == ["b", "t", "on"]  # "no" is a string flag: off
    build = pipeline.modules[0]
    assert build.argv() == ["make", "fast", "-C", "build"] and build.cwd() == "case"
    assert build.configure_args() == ["-DHIDDEN=False"] and pipeline.configures_build


def test_a_pipeline_running_ctest_that_nothing_configures_is_refused_at_load(public_checkout):
    pipeline = public_checkout / "evaluator" / "percent-clamp" / "pipeline.json"
    data = json.loads(pipeline.read_text())
    data["modules"] = [m for m in data["modules"] if m["name"] != "configure"]
    pipeline.write_text(json.dumps(data))
    errors = [str(e) for e in load_suite(public_checkout).errors]
    assert any("102.percent-clamp" in e and "runs ctest, but no module configures the build folder" in e for e in errors)
