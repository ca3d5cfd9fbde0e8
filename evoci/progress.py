"""Progress events from running flows, for whoever is watching in this process.

Flows call ``emit``; the CLI subscribes a live display. With no subscriber (a Prefect
worker, a test) events cost nothing. Listeners must be quick and must not raise.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Event:
    run_id: str
    task_id: str
    stage: str  # 'prepare' | 'oracle' | 'iteration' | 'done' | 'invalid' | 'failed' | 'input_error'
    iteration: int | None = None
    passed: int | None = None
    targets: int | None = None
    max_iterations: int | None = None
    message: str = ""


Listener = Callable[[Event], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def subscribe(listener: Listener) -> Callable[[], None]:
    """Add ``listener``; return a function that removes it."""
    with _lock:
        _listeners.append(listener)

    def unsubscribe() -> None:
        with _lock:
            if listener in _listeners:
                _listeners.remove(listener)

    return unsubscribe


def emit(event: Event) -> None:
    with _lock:
        listeners = list(_listeners)
    for listener in listeners:
        try:
            listener(event)
        except Exception:  # a broken display must never break a run
            pass
