"""A Prefect global concurrency slot around each container, when running inside Prefect.

``concurrency(name, occupy=1, strict=True)`` fails loudly when the limit does not exist —
without ``strict`` a misspelt name would limit nothing. evoci owns the default limit
(``evoci-docker``) and creates or resizes it with ``ensure_concurrency_limit``; a limit named
by the user must already exist, so a typo stops the run instead of running unlimited.
Outside a Prefect flow or task run (unit tests, scripts) no slot is taken.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

log = logging.getLogger(__name__)

_ensured: set[tuple[str, int]] = set()
_ensured_guard = threading.Lock()


def in_prefect_run() -> bool:
    """True inside a Prefect flow run or task run (Prefect is not imported to find out)."""
    if "prefect.context" not in sys.modules:
        return False
    from prefect.context import FlowRunContext, TaskRunContext

    return FlowRunContext.get() is not None or TaskRunContext.get() is not None


@contextmanager
def slot(name: str | None) -> Iterator[None]:
    """Hold one slot of global limit ``name`` inside a Prefect run; nothing otherwise or when ``name`` is None."""
    if name is None or not in_prefect_run():
        yield
        return
    from prefect.concurrency.sync import concurrency

    with concurrency(name, occupy=1, strict=True):
        yield


def ensure_concurrency_limit(name: str, limit: int) -> None:
    """Create global concurrency limit ``name`` with ``limit`` slots, or set an existing one to ``limit``."""
    from prefect import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate, GlobalConcurrencyLimitUpdate
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            current = client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=name, limit=limit))
            log.info("created global concurrency limit %s with %d slot(s)", name, limit)
            return
        if current.limit != limit or not current.active:
            client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=limit, active=True))
            log.info("set global concurrency limit %s to %d slot(s)", name, limit)


def ensure_once(name: str, limit: int) -> None:
    """``ensure_concurrency_limit`` at most once per process for each (name, limit)."""
    with _ensured_guard:
        if (name, limit) in _ensured:
            return
        ensure_concurrency_limit(name, limit)
        _ensured.add((name, limit))
