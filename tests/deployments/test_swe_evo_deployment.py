"""`evoci serve` registers a swe_evo deployment beside benchmark and evolve."""

from __future__ import annotations

from evoci.deployments.serve import build_deployments


def test_serve_builds_a_swe_evo_deployment_for_the_demo_with_the_gold_baseline(tmp_path):
    deployments = {d.entrypoint.rsplit(".", 1)[-1]: d for d in build_deployments(home=str(tmp_path), cron=None)}
    assert set(deployments) == {"benchmark", "evolve", "swe_evo"}
    evo = deployments["swe_evo"]
    assert (evo.name, evo.entrypoint) == ("on-demand", "evoci.flows.swe_evo.swe_evo")
    assert evo.parameters["dataset"] == "swe-evo-demo"
    assert evo.parameters["config"]["protocol"] == "swe-evo"
    assert evo.parameters["config"]["programmer"]["kind"] == "gold"
    assert evo.parameters["home"] == str(tmp_path.absolute())
