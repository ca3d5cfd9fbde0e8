"""cost_by_run, cost_by_task and cost_by_role over agent_calls."""

from __future__ import annotations

from pytest import approx

from .swe_ci_rows import add_run, add_task, rows

CALLS = [
    # run, task, iteration, attempt, role, index, model, provider, in, out, cached, usd, latency, error
    ("r1", "t1", 1, 0, "architect", 0, "m1", "openai", 1000, 100, 400, 0.010, 2.0, None),
    ("r1", "t1", 1, 0, "programmer", 0, "m1", "openai", 2000, 300, 0, 0.030, 5.0, None),
    ("r1", "t1", 1, 0, "programmer", 1, "m1", "openai", 500, 0, 0, 0.000, 1.0, "rate limited"),
    ("r1", "t1", 2, 1, "architect", 0, "m2", "anthropic", 800, 80, 200, 0.008, None, None),  # a retry
    ("r1", "t2", 1, 0, "programmer", 0, "m1", "openai", 100, 10, 0, 0.002, 0.5, None),
]


def make_calls(con):
    add_run(con, "r1")
    add_run(con, "r_idle")
    for task in ("t1", "t2", "t3"):
        add_task(con, "r1", task, targets="a", passed=[""])
    con.executemany(
        """insert into agent_calls (run_id, task_id, iteration, attempt, role, call_index, model, provider, input_tokens,
               output_tokens, cached_tokens, cost_usd, latency_s, finish_reason, error)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, null, ?)""",
        CALLS,
    )


def test_cost_by_run(con):
    make_calls(con)
    assert rows(con, "select * from cost_by_run order by run_id") == [
        approx(dict(run_id="r1", protocol="swe-ci", calls=5,
                    input_tokens=1000 + 2000 + 500 + 800 + 100, output_tokens=100 + 300 + 80 + 10,
                    cached_tokens=400 + 200, cost_usd=0.010 + 0.030 + 0.008 + 0.002, errors=1,
                    latency_s=2.0 + 5.0 + 1.0 + 0.5)),  # the NULL latency adds nothing
        dict(run_id="r_idle", protocol="swe-ci", calls=0, input_tokens=0, output_tokens=0,
             cached_tokens=0, cost_usd=0.0, errors=0, latency_s=0.0),
    ]


def test_cost_by_task(con):
    make_calls(con)
    assert rows(con, "select * from cost_by_task order by run_id, task_id") == [
        approx(dict(run_id="r1", task_id="t1", task_status="done", calls=4, input_tokens=4300,
                    output_tokens=480, cached_tokens=600, cost_usd=0.048, errors=1, latency_s=8.0)),
        approx(dict(run_id="r1", task_id="t2", task_status="done", calls=1, input_tokens=100,
                    output_tokens=10, cached_tokens=0, cost_usd=0.002, errors=0, latency_s=0.5)),
        dict(run_id="r1", task_id="t3", task_status="done", calls=0, input_tokens=0,
             output_tokens=0, cached_tokens=0, cost_usd=0.0, errors=0, latency_s=0.0),
    ]


def test_cost_by_role(con):
    make_calls(con)
    assert rows(con, "select * from cost_by_role order by run_id, role, model") == [
        approx(dict(run_id="r1", role="architect", model="m1", provider="openai", calls=1,
                    input_tokens=1000, output_tokens=100, cached_tokens=400, cost_usd=0.010,
                    errors=0, latency_s=2.0, avg_cost_usd_per_call=0.010)),
        approx(dict(run_id="r1", role="architect", model="m2", provider="anthropic", calls=1,
                    input_tokens=800, output_tokens=80, cached_tokens=200, cost_usd=0.008,
                    errors=0, latency_s=0.0, avg_cost_usd_per_call=0.008)),
        approx(dict(run_id="r1", role="programmer", model="m1", provider="openai", calls=3,
                    input_tokens=2600, output_tokens=310, cached_tokens=0, cost_usd=0.032,
                    errors=1, latency_s=6.5, avg_cost_usd_per_call=0.032 / 3)),
    ]
