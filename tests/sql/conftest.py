"""Fixtures for view tests: an in-memory DuckDB with evoci's schema and every view."""

from __future__ import annotations

import duckdb
import pytest

import evoci.sql


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(":memory:")
    evoci.sql.apply(connection)
    yield connection
    connection.close()
