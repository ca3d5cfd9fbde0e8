"""`evoci serve` registers a continual (SWE-Bench-CL) deployment beside the others."""

from __future__ import annotations

from evoci.deployments.serve import build_deployments


def test_serve_builds_a_continual_deployment_for_the_demo_with_the_gold_baseline(tmp_path):
    deployments = {d.entrypoint.rsplit(".", 1)[-1]: d for d in build_deployments(home=str(tmp_path), cron=None)}
    cl = deployments["continual"]
    assert (cl.name, cl.entrypoint) == ("on-demand", "evoci.flows.continual.continual")
    assert (cl.parameters["dataset"], cl.parameters["matrix"]) == ("swe-bench-cl-demo", "full")
    assert cl.parameters["config"]["protocol"] == "swe-bench-cl"
    assert cl.parameters["config"]["programmer"]["kind"] == "gold"
    assert cl.parameters["home"] == str(tmp_path.absolute())
