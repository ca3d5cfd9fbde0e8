"""A run asked to put its units on a work pool refuses, before queueing anything, what no worker could serve."""

from __future__ import annotations

import pytest

from evoci.cli import main

pytestmark = [pytest.mark.usefixtures("prefect_server"), pytest.mark.slow]

DEMOS = {"evolve": ["demo"], "swe_evo_instance": ["swe-evo-demo", "--agent", "gold"],
         "nitr_probe_by_id": ["nitr", "--select", "id=001", "--agent", "reference"],
         "continual_sequence": ["swe-bench-cl-demo", "--agent", "gold"]}


@pytest.mark.parametrize("flow", sorted(DEMOS))
def test_a_local_results_file_is_refused_with_what_to_give_instead(flow, tmp_path, capsys):
    code = main(["run", *DEMOS[flow], "--home", str(tmp_path), "--task-deployment", f"{flow}/pool"])
    said = capsys.readouterr()
    assert code != 0
    assert "need a results store every worker writes: give --store postgresql://" in said.out + said.err


def test_a_deployment_of_another_protocols_flow_is_refused_by_name(tmp_path, capsys):
    code = main(["run", *DEMOS["swe_evo_instance"], "--home", str(tmp_path), "--task-deployment", "evolve/pool"])
    said = capsys.readouterr()
    assert code != 0
    assert "give --task-deployment swe_evo_instance/NAME" in said.out + said.err
