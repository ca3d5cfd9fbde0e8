"""The Prefect server evoci starts on PostgreSQL gets a connection pool for many workers."""

from __future__ import annotations

import json
import subprocess
import sys

from evoci.cli_ops import server_env

READ = ("import json; from prefect.settings import get_current_settings as s; d = s().server.database.sqlalchemy; "
        "print(json.dumps([d.pool_size, d.max_overflow, d.pool_timeout]))")


def pool(env: dict[str, str]) -> list:
    """The pool the server's Prefect reads from ``env`` (its own settings, in a fresh process)."""
    done = subprocess.run([sys.executable, "-c", READ], env=env, capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout)


def test_a_server_on_postgresql_has_a_pool_for_many_workers_and_the_users_settings_win(tmp_path):
    # Prefect's default (5 + 10, 30 s) answered 500 at 32 tasks on a work pool: tasks were never started.
    url = "postgresql://evoci@127.0.0.1:5432/prefect"
    assert pool(server_env("127.0.0.1", 4300, str(tmp_path), base={}, database=url)) == [20, 40, 60.0]
    mine = {"PREFECT_SERVER_DATABASE_SQLALCHEMY_POOL_SIZE": "7"}
    assert pool(server_env("127.0.0.1", 4300, str(tmp_path), base=mine, database=url))[0] == 7
    assert pool(server_env("127.0.0.1", 4300, str(tmp_path), base={}))[0] == 5  # SQLite: Prefect's own default
