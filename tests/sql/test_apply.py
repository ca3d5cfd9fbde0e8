"""Applying the views to a results file made by an older evoci upgrades it in place."""

from __future__ import annotations

import duckdb

import evoci.sql


def test_views_are_upgraded_on_a_file_whose_old_views_depend_on_each_other(tmp_path):
    db = str(tmp_path / "old.duckdb")
    con = duckdb.connect(db)
    evoci.sql.apply(con)
    # Simulate an older evoci: a base view with fewer columns than today's dependants expect.
    con.execute("create or replace view swe_ci_tasks as select 1 as run_id")
    con.close()
    con = duckdb.connect(db)
    evoci.sql.apply(con)
    assert "a_series" in [d[0] for d in con.execute("select * from swe_ci_tasks").description]
    assert con.execute("select count(*) from evoscore(gamma := 1.0)").fetchone() == (0,)
    con.close()
