"""A real PostgreSQL server for the tests, started by the project's own script (scripts/postgres.sh)."""

from __future__ import annotations

import socket
import subprocess
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def postgres_server(state: Path) -> Iterator[str]:
    """Start a server in ``state`` on a free loopback port; yield its base URL (no database name)."""
    port = free_port()
    out = subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "up", str(state), str(port)],
                         capture_output=True, text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(f"scripts/postgres.sh up failed: {out.stderr}")
    try:
        yield f"postgresql://evoci@127.0.0.1:{port}"
    finally:
        subprocess.run(["bash", str(REPO / "scripts/postgres.sh"), "down", str(state)], capture_output=True, timeout=120)


def new_database(base_url: str) -> str:
    """A fresh, empty database on the server; its URL."""
    import psycopg

    name = f"t_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(f"{base_url}/postgres", autocommit=True) as con:
        con.execute(f"create database {name}")
    return f"{base_url}/{name}"
