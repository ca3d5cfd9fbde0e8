"""When the run's process takes a task's flow run for lost (its worker gone) and when it keeps waiting."""

from __future__ import annotations

from datetime import datetime, timedelta

from prefect.states import Pending, Running

from evoci.deployments.pool import lost_because

NOW = datetime(2026, 11, 25, 12, 0, 0)


def running_since(seconds: float):
    state = Running()
    return state.model_copy(update={"timestamp": NOW - timedelta(seconds=seconds)})


def test_a_lease_renewed_in_time_means_the_worker_is_alive_however_long_the_task_takes():
    assert lost_because(running_since(86_400), NOW + timedelta(seconds=30), NOW, ttl_s=60, grace_s=600, now=NOW) is None


def test_an_expired_lease_means_the_worker_is_gone():
    why = lost_because(running_since(300), NOW - timedelta(seconds=5), NOW - timedelta(seconds=70), ttl_s=60,
                       grace_s=600, now=NOW)
    assert why and "lease expired 5 s ago" in why


def test_a_flow_run_still_starting_is_given_the_start_grace_not_the_lease_lifetime():
    assert lost_because(Pending().model_copy(update={"timestamp": NOW - timedelta(seconds=300)}), None, None, ttl_s=12,
                        grace_s=600, now=NOW) is None
    why = lost_because(running_since(601), None, None, ttl_s=12, grace_s=600, now=NOW)
    assert why and "never took the task's lease in 600 s" in why


def test_a_released_lease_waits_for_the_final_state_then_gives_up():
    assert lost_because(running_since(400), None, NOW - timedelta(seconds=10), ttl_s=60, grace_s=600, now=NOW) is None
    why = lost_because(running_since(400), None, NOW - timedelta(seconds=121), ttl_s=60, grace_s=600, now=NOW)
    assert why and "released the task's lease" in why
