"""evoci's exceptions.

    EvociError
     ├── InputError ............ bad user input: recorded as data, the rest of the run goes on
     │    ├── DatasetError ..... a dataset line that is not JSON or lacks a field
     │    ├── TaskSpecError .... a repo that is not git, a ref that does not exist
     │    ├── DriftError ....... a run id already holds results of a different config or task spec
     │    └── ProviderRejected . the model provider refused the request: bad key, unknown model or endpoint
     ├── InvalidTask ........... the task cannot be scored (no gap, no passing oracle test)
     ├── RunBusy ............... another live process holds the run's lease: refused, nothing written
     ├── LeaseLost ............. this process lost its lease: it stops writing at once
     └── InfrastructureError ... the harness, not the agent, failed: raised so Prefect retries
          ├── SandboxError ..... a sandbox could not start, run or clean up
          │    └── EnvironmentBuildError  the task's environment could not be built
          ├── HarnessTimeout ... the harness itself was killed or lost its process
          ├── StorageError ..... the results database could not be opened or written
          │    └── DatabaseLocked  another process held it longer than the wait
          └── ProviderUnavailable  the model provider stayed down after every retry of the call

Agent outcomes (a syntax error, a hanging suite, a limit reached) are never exceptions:
they are values recorded and scored.
"""

from __future__ import annotations


class EvociError(Exception):
    """Base class of every error evoci raises on purpose."""


class InputError(EvociError):
    """The user's input is wrong; the message says what and how to fix it."""


class DatasetError(InputError):
    """A dataset file or line could not be read as a task."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None):
        where = f"{path}:{line}: " if path and line else (f"{path}: " if path else "")
        super().__init__(f"{where}{message}")
        self.path = path
        self.line = line


class TaskSpecError(InputError):
    """A task names a repository or ref that cannot be used."""


class DriftError(InputError):
    """A run id already holds results made with a different config or task spec: never merged."""

    def __init__(self, message: str, changes: list[str]):
        super().__init__(message)
        self.changes = changes


class ProviderRejected(InputError):
    """The model provider rejected the credentials, the model or the endpoint (HTTP 401/403/404).

    It stops the task before anything is scored: every later call would be rejected too.
    """


class InvalidTask(EvociError):
    """The task cannot be scored; it is flagged, recorded and skipped."""


class RunBusy(EvociError):
    """Another live evoci process holds the lease of this run (or task): this one writes nothing.

    Neither input (nothing is wrong with it) nor infrastructure (retrying at once cannot help):
    flows let it through, and the command exits with ``EXIT_BUSY``.
    """


class LeaseLost(EvociError):
    """This process could not renew its lease in time, or another took it over: it must stop writing."""


EXIT_BUSY = 75  # sysexits' EX_TEMPFAIL: another process is on it, try again later


class InfrastructureError(EvociError):
    """The harness failed, not the agent. Prefect retries these; they are never scored."""


class SandboxError(InfrastructureError):
    """A sandbox could not be created, reached, used or cleaned up."""


class EnvironmentBuildError(SandboxError):
    """The task's test environment (virtualenv or image) could not be built."""


class EnvironmentInvalid(SandboxError):
    """The test environment built, but the clean base + test_patch does not prove it (nothing collects, or a
    PASS_TO_PASS test fails at the base): an ``environment_error``, never the agent's outcome."""


class HarnessTimeout(InfrastructureError):
    """The harness lost its test process for a reason other than the test timeout."""


class StorageError(InfrastructureError):
    """The results database could not be written (for example, locked for too long)."""


class DatabaseLocked(StorageError):
    """Another process held the results database longer than evoci waits (``EVOCI_DB_WAIT_S``)."""


class ProviderUnavailable(InfrastructureError):
    """The model provider kept failing (429/5xx, timeouts) after every retry of the call: an outage."""


def is_infrastructure(exc: BaseException | None) -> bool:
    """True when ``exc`` is an infrastructure failure that deserves a retry.

    Besides evoci's own, that is Prefect's API answering 5xx or 429, or not answering in time,
    after its client's own retries: its SQLite database stayed locked under many concurrent
    writers, say. Nothing the agent did can cause that, so it is never an agent's outcome nor a
    reason to give up.
    """
    return isinstance(exc, InfrastructureError) or orchestration_unavailable(exc)


def orchestration_unavailable(exc: BaseException | None) -> bool:
    """True when ``exc`` is Prefect's API answering 5xx or 429, or its connection failing or timing out.

    A bare httpx transport error can only be Prefect's client: evoci's model clients raise their
    SDKs' own errors, classified as ``ProviderUnavailable``, and the gateway uses ``http.client``.
    """
    import httpx
    from prefect.exceptions import PrefectHTTPStatusError

    if isinstance(exc, httpx.TransportError):
        return True
    if not isinstance(exc, PrefectHTTPStatusError):
        return False
    status = exc.response.status_code
    return status >= 500 or status == 429
