"""`evoci serve` offers a nitr deployment; serving a NITR source schedules it."""

from __future__ import annotations

from pathlib import Path

from evoci.deployments.serve import build_deployments


def summary(dataset: str, tmp_path) -> dict:
    return {d.flow_name: (d.name, bool(d.schedules), d.parameters.get("source", d.parameters.get("dataset")))
            for d in build_deployments(dataset=dataset, home=str(tmp_path))}


def test_nitr_deployment_is_on_demand_beside_the_nightly_benchmark(tmp_path):
    got = summary("demo", tmp_path)
    assert got["benchmark"] == ("nightly", True, "demo")
    assert got["nitr"] == ("on-demand", False, "builtin")


def test_serving_a_nitr_checkout_schedules_the_nitr_deployment(tmp_path):
    got = summary("nitr:checkout", tmp_path)
    assert got["nitr"] == ("nightly", True, f"nitr:{Path('checkout').absolute()}")
    assert got["benchmark"] == ("nightly", False, "demo")
    nitr = next(d for d in build_deployments(dataset="nitr", home=str(tmp_path)) if d.flow_name == "nitr")
    assert nitr.parameters["config"]["protocol"] == "nitr" and nitr.parameters["home"] == str(tmp_path)
