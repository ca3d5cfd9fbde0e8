"""``Gateway``: the host side of the model gateway, one per agent attempt (see ``evoci.gateway``).

An HTTP server on a Unix socket in a fresh folder. Each POST to a model API path is forwarded to
the configured upstream with the real key in place of the sandbox's dummy one; the answer streams
back as it arrives while its usage events are read (``evoci.gateway.usage``). Every upstream
attempt becomes one ``ModelCall``, in ``calls`` before the CLI has the whole answer, given to
``on_call`` (the node's database write) at once by a thread of its own and before the next upstream
request (a run killed mid-attempt keeps what was paid for), and one line of the transcript. The
CLI's connections come from the bridge in the sandbox, handed over as sockets (``bridge.py``), or
to the Unix socket itself. Any other path, method or host is refused: the gateway is a door to one
API, not a proxy.

Upstream failures are classified as ``--agent llm`` classifies them (``evoci.agents.llm.client``):
401/403/404 end the attempt as bad input; 429, 5xx, timeouts and lost connections are retried
here (only before a byte reached the CLI) and, once retries are spent, are an outage. Either is
kept in ``failure`` and raised by ``verdict()`` after the command, whatever the CLI made of it.
"""

from __future__ import annotations

import array
import http.client
import json
import os
import select
import shutil
import socket
import socketserver
import tempfile
import threading
import time
import urllib.parse
from collections import deque
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from evoci.agents.base import ModelCall
from evoci.agents.llm.client import REJECTED_STATUSES, api_key_source, retry_after_s
from evoci.agents.llm.config import ModelConfig
from evoci.agents.llm.prices import cost_usd, price_for
from evoci.errors import InputError, ProviderRejected, ProviderUnavailable
from evoci.gateway import (HANDOFF_NAME, PUBLIC_APIS, SOCKET_NAME, CliUsage, GatewayConfig, GatewayEndpoint,
                           UsageCheck)
from evoci.gateway import usage as usage_of
from evoci.untrusted import json_loads

# Request headers never forwarded: the sandbox's credentials, hop-by-hop and length/encoding
# headers (the gateway re-frames bodies and must read answers uncompressed).
_DROP_REQUEST = {"authorization", "x-api-key", "api-key", "host", "content-length", "connection", "keep-alive",
                 "proxy-authorization", "transfer-encoding", "accept-encoding", "te", "upgrade", "cookie",
                 # whose account the key is used for is the user's to say: an organization or project the
                 # key is not a member of is answered 401/403, which would read as the user's bad key
                 "openai-organization", "openai-project"}
_DROP_RESPONSE = {"content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding", "set-cookie"}
TRANSCRIPT_BODY_CHARS = 2_000_000  # longest request or answer body kept per call
STREAM_READ = 65536  # most bytes of a streamed answer read (and relayed) at once
MAX_WAIT_S = 60.0
STOP_WAIT_S = 30.0  # longest stop() waits for requests still being relayed
MAX_HANDED = 32  # connections handed over and open at once: a CLI keeps a few; a flood is refused
HANDED_IDLE_S = 900.0  # a handed connection that sends nothing this long is closed (a CLI reconnects)


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class _HandoffServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False  # a bridge's kept connection ends with its sandbox; stop() closes it first


class Gateway:
    """One attempt's gateway: start it, give ``endpoint`` to the sandbox, ``verdict()`` after."""

    def __init__(self, config: GatewayConfig, *, on_call: Callable[[ModelCall], None] | None = None,
                 transcript: Path | str | None = None, sleep: Callable[[float], None] = time.sleep,
                 model: str | None = None):
        self.config = config
        # The model the attempt was configured with (``--model``). The request's model is the
        # agent's to write: a model it chose that the upstream does not know (404) or that has no
        # price under a cost limit is its own failed call, never the run's bad input.
        self._model = model
        self._on_call = on_call
        self._transcript = Path(transcript) if transcript else None
        self._sleep = sleep
        self.calls: list[ModelCall] = []
        self.transcript: list[dict[str, Any]] = []  # kept here when no transcript file was given
        self.limit: str | None = None
        self.failure: Exception | None = None
        self._lock = threading.Lock()
        self._transcript_lock = threading.Lock()
        self._idle: list[http.client.HTTPConnection] = []  # kept-alive upstream connections, free for a call
        self._pool_lock = threading.Lock()  # not ``_lock``: a call being recorded must not hold up the next
        self._busy = threading.Condition()
        self._inflight = 0
        # What is done after a call is answered, oldest first: a call to give to ``on_call`` (the
        # node's database write: tens of ms), a transcript entry to write (about a ms a long answer).
        self._after: deque[ModelCall | dict[str, Any]] = deque()
        self._unrecorded = 0  # calls among them
        self._recording = threading.Condition()
        self._recorder: threading.Thread | None = None
        self._record_error: BaseException | None = None
        self._closing = False
        root = (config.base_url or PUBLIC_APIS.get(config.provider) or "").rstrip("/")
        self._upstream = urllib.parse.urlsplit(root[:-3] if root.endswith("/v1") else root)
        keyed = ModelConfig(provider=config.provider, model="gateway", base_url=config.base_url or root,
                            api_key_env=config.api_key_env, api_key_secret=config.api_key_secret)
        self._read_key = api_key_source(keyed, required=config.provider != "openai-compatible")
        self._key: str | None = None
        self._dir = Path(tempfile.mkdtemp(prefix="evoci-gateway-"))
        self.endpoint = GatewayEndpoint(host_dir=str(self._dir))
        self._server: _UnixHTTPServer | None = None
        self._handoff: _HandoffServer | None = None
        self._bridges: set[socket.socket] = set()  # the bridges' kept connections, closed by stop()
        self._handed: set[socket.socket] = set()  # the CLI's connections handed over and being served

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> "Gateway":
        self._key = self._read_key()  # a missing key is bad input, said before the command starts
        shutil.copy(Path(__file__).with_name("bridge.py"), self._dir / "bridge.py")
        self._dir.chmod(0o755)  # a container's root and the sandbox's user both connect
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                with gateway._busy:
                    gateway._inflight += 1
                try:
                    gateway._post(self)
                finally:
                    with gateway._busy:
                        gateway._inflight -= 1
                        gateway._busy.notify_all()

            def do_HEAD(self) -> None:  # noqa: N802 - Claude Code checks the root before its first call
                self.send_response(200 if self.path in ("/", "") else 404)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_GET(self) -> None:  # noqa: N802
                _refuse(self, 404, f"the evoci gateway serves only POST to {', '.join(usage_of.PROTOCOLS)}")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        class Handoff(socketserver.BaseRequestHandler):
            def handle(self) -> None:
                gateway._take_handoffs(self.request)

        self._server = _UnixHTTPServer(str(self._dir / SOCKET_NAME), Handler)
        self._handoff = _HandoffServer(str(self._dir / HANDOFF_NAME), Handoff)
        for name in (SOCKET_NAME, HANDOFF_NAME):
            os.chmod(self._dir / name, 0o666)
        threading.Thread(target=self._server.serve_forever, args=(0.05,), name="evoci-gateway", daemon=True).start()
        threading.Thread(target=self._handoff.serve_forever, args=(0.05,), name="evoci-gateway-handoff",
                         daemon=True).start()
        self._recorder = threading.Thread(target=self._record, name="evoci-gateway-record", daemon=True)
        self._recorder.start()
        return self

    def stop(self) -> None:
        if self._handoff is not None:  # no connection handed over from here on
            self._handoff.shutdown()
            self._handoff.server_close()
            with self._pool_lock:
                self._handoff, bridges = None, list(self._bridges)
            for sock in bridges:
                _shut(sock)
        if self._server is not None:
            self._server.shutdown()
            with self._busy:  # a call still being relayed is accounted before the account is read
                self._busy.wait_for(lambda: self._inflight == 0, timeout=STOP_WAIT_S)
            self._server.server_close()
            with self._pool_lock:
                self._server, idle, self._idle = None, self._idle, []
            for conn in idle:
                conn.close()
            with self._pool_lock:
                handed, self._handed = list(self._handed), set()
            for sock in handed:  # a connection waiting for a request it will never get ends here
                _shut(sock)
        if self._recorder is not None:  # every call is recorded, and its transcript line written, before the end
            with self._recording:
                self._closing = True
                self._recording.notify_all()
            self._recorder.join()
            self._recorder = None
        shutil.rmtree(self._dir, ignore_errors=True)
        if self._record_error is not None:
            error, self._record_error = self._record_error, None
            raise error

    def __enter__(self) -> "Gateway":
        return self if self._server else self.start()

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        except Exception:
            if exc[0] is None:  # else the attempt's own failure goes on (the calls were given to on_call)
                raise

    @property
    def socket_path(self) -> Path:
        return self._dir / SOCKET_NAME

    def _take_handoffs(self, bridge: socket.socket) -> None:
        """Serve each connection a bridge hands over (its descriptor, one byte each) as one on the socket.

        The hand-off socket is inside the sandbox, so whatever is passed is taken only as a connected
        stream socket; anything else is closed unread (and descriptors beyond the small buffer are
        dropped by the kernel).
        """
        with self._pool_lock:
            if self._handoff is None:
                return
            self._bridges.add(bridge)
        room = socket.CMSG_SPACE(array.array("i").itemsize)
        try:
            while True:
                try:
                    data, ancillary, _, _ = bridge.recvmsg(1, room)
                except OSError:
                    return
                if not data:
                    return
                for level, kind, payload in ancillary:
                    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                        fds = array.array("i")
                        fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
                        for fd in fds:
                            self._serve_handed(fd)
        finally:
            with self._pool_lock:
                self._bridges.discard(bridge)

    def _serve_handed(self, fd: int) -> None:
        try:
            client = socket.socket(fileno=fd)
        except OSError:  # not a socket
            os.close(fd)
            return
        try:
            # The bridge hands over the CLI's TCP connections. Anything else (a socketpair whose
            # other end is handed over too, so that each waits on the other) is closed unread.
            if client.type != socket.SOCK_STREAM or client.family not in (socket.AF_INET, socket.AF_INET6):
                raise OSError("not a TCP connection")
            client.getpeername()  # connected: a listening socket or a bare one is no connection
        except OSError:
            client.close()
            return
        with self._pool_lock:
            server = self._server
            if server is None or len(self._handed) >= MAX_HANDED:  # a flood gets no thread each
                client.close()
                return
            self._handed.add(client)
        client.settimeout(HANDED_IDLE_S)
        threading.Thread(target=self._serve_one, args=(server, client), daemon=True).start()

    def _serve_one(self, server: socketserver.BaseServer, client: socket.socket) -> None:
        try:
            server.process_request_thread(client, "bridge")  # type: ignore[attr-defined]
        finally:
            with self._pool_lock:
                self._handed.discard(client)

    # -- after the command ---------------------------------------------------------------
    def verdict(self) -> None:
        """Raise the upstream failure that ended the attempt (bad input or an outage), if any."""
        if self.failure is not None:
            raise self.failure

    def totals(self) -> dict[str, Any]:
        answered = [c for c in self.calls if c.error is None]
        costs = [c.cost_usd for c in self.calls]
        return {
            "calls": len(answered),
            "input_tokens": sum(c.input_tokens for c in answered),
            "output_tokens": sum(c.output_tokens for c in answered),
            "cached_tokens": sum(c.cached_tokens for c in answered),
            "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 9),
        }

    def cross_check(self, cli: CliUsage) -> UsageCheck:
        """The CLI's own usage beside the gateway's; every number the CLI gave is compared."""
        mine = self.totals()
        theirs = {k: getattr(cli, k) for k in ("calls", "input_tokens", "output_tokens", "cached_tokens", "cost_usd")}
        differences = {}
        for name, value in theirs.items():
            if value is None or mine[name] is None:
                continue
            same = abs(value - mine[name]) <= 1e-6 * max(1.0, abs(value)) if name == "cost_usd" else value == mine[name]
            if not same:
                differences[name] = {"gateway": mine[name], "cli": value}
        return UsageCheck(gateway=mine, cli={"source": cli.source, **theirs}, differences=differences)

    # -- one request ---------------------------------------------------------------------
    def _post(self, handler: BaseHTTPRequestHandler) -> None:
        body = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        protocol = usage_of.protocol_of(handler.path)
        if protocol is None:
            return _refuse(handler, 404, f"the evoci gateway serves only {', '.join(usage_of.PROTOCOLS)}")
        refusal = self._refusal()
        if refusal:
            return _refuse(handler, *refusal)
        try:
            request = json_loads(body or b"{}")
        except ValueError:
            request = None
        if isinstance(request, dict) and protocol == "chat" and request.get("stream"):
            # Ask for the usage chunk on every streamed Chat Completion: the account needs it.
            request["stream_options"] = {**(request.get("stream_options") or {}), "include_usage": True}
            body = json.dumps(request).encode()
        model = request.get("model") if isinstance(request, dict) else None
        if self.config.max_cost_usd is not None and price_for(str(model or ""), self.config.price) is None:
            if self._chosen(model):
                return _refuse(handler, 400, f"evoci gateway: model {model!r} has no price and the attempt has a cost "
                                             f"limit (max_cost_usd); this attempt's model is {self._model!r}")
            self.failure = InputError(f"max_cost_usd is set but evoci has no price for model {model!r} — "
                                      "give the gateway a price (option price) or drop max_cost_usd")
            return _refuse(handler, 400, str(self.failure))
        path = self._upstream.path.rstrip("/") + _upstream_path(handler.path)
        headers = {k: v for k, v in handler.headers.items() if k.lower() not in _DROP_REQUEST}
        headers.update(self._credentials(protocol))
        for attempt in range(self.config.max_retries + 1):
            last = attempt == self.config.max_retries
            if self._attempt(handler, protocol, path, headers, body, str(model or "unknown"), attempt, last):
                return

    def _chosen(self, model: object) -> bool:
        """Whether the request names a model other than the attempt's own (then its failures are the agent's).

        With no model configured, the attempt's own are those its calls were answered for: the CLI's
        first call is made before the model has said anything, so a model first named after a
        call was answered was named by the agent.
        """
        name = str(model or "")
        if self._model is not None:
            return name != self._model
        with self._lock:
            answered = {c.model for c in self.calls if c.error is None}
        return bool(answered) and name not in answered

    def _refusal(self) -> tuple[int, str] | None:
        with self._lock:
            if self.failure is not None:
                return 503, f"the evoci gateway stopped forwarding: {self.failure}"
            spent = sum(c.cost_usd or 0.0 for c in self.calls)
            if self.config.max_calls is not None and len(self.calls) >= self.config.max_calls:
                self.limit = f"the attempt made its {self.config.max_calls} allowed model calls (max_calls)"
            elif self.config.max_cost_usd is not None and spent >= self.config.max_cost_usd:
                self.limit = f"the attempt spent ${spent:.4f} of its ${self.config.max_cost_usd:g} (max_cost_usd)"
        return (400, f"evoci gateway: {self.limit}") if self.limit else None

    def _model_found(self, model: str, protocol: str) -> bool:
        """Whether the attempt's own model is known upstream, so a 404 answered the request, not the model.

        The request is the agent's to write: OpenAI answers 404 to a Responses call whose
        ``previous_response_id`` it does not know, for a model that exists. An earlier answered
        call for the model proves it; else the gateway asks the upstream itself
        (``GET /v1/models/<model>``, OpenAI's and Anthropic's, no tokens spent). No answer, or
        any other, leaves the 404 the user's configuration, as before.
        """
        with self._lock:
            if any(c.error is None and c.model == model for c in self.calls):
                return True
        path = self._upstream.path.rstrip("/") + _upstream_path("/models/" + urllib.parse.quote(model, safe=""))
        headers = {**self._credentials(protocol), "anthropic-version": "2023-06-01"}
        cls = http.client.HTTPSConnection if self._upstream.scheme == "https" else http.client.HTTPConnection
        conn = cls(self._upstream.netloc, timeout=min(self.config.timeout_s, 30.0))
        try:
            conn.request("GET", path, headers=headers)
            answer = conn.getresponse()
            answer.read()
            return answer.status == 200
        except (OSError, http.client.HTTPException):
            return False
        finally:
            conn.close()

    def _credentials(self, protocol: str) -> dict[str, str]:
        key = self._key
        if not key:
            return {}
        return {"x-api-key": key} if protocol == "anthropic" else {"authorization": f"Bearer {key}"}

    def _attempt(self, handler, protocol: str, path: str, headers: dict[str, str], body: bytes, model: str,
                 attempt: int, last: bool) -> bool:
        """One upstream attempt; True when the CLI got its answer (success or a final error)."""
        self._wait_recorded()  # no upstream request while an earlier call is not yet recorded
        started = time.monotonic()
        entry: dict[str, Any] = {"at": time.time(), "path": path, "request": _text(body)}
        try:
            conn, answer = self._send(path, headers, body)
        except (OSError, http.client.HTTPException) as exc:
            self._keep(self._account(entry, started, model, usage_of.Usage(),
                                     error=f"upstream unreachable: {type(exc).__name__}: {exc}"))
            if last:
                self._fail(ProviderUnavailable(f"the upstream {self._where()} could not be reached after "
                                               f"{self.config.max_retries} retries ({type(exc).__name__}) — an outage, "
                                               "not the agent: the node is retried"))
                _refuse(handler, 502, "evoci gateway: the upstream could not be reached")
                return True
            self._sleep(min(self.config.retry_backoff_s * 2**attempt, MAX_WAIT_S))
            return False
        reusable = False
        try:
            status = answer.status
            if status == 429 or status >= 500:
                data = answer.read()
                reusable = True
                self._keep(self._account(entry, started, model, usage_of.Usage(),
                                         error=f"HTTP {status}: {_text(data)[:300]}", status=status, answer=data))
                if not last:
                    wait = retry_after_s(dict(answer.getheaders()))
                    self._sleep(min(wait if wait is not None else self.config.retry_backoff_s * 2**attempt,
                                    MAX_WAIT_S))
                    return False
                self._fail(ProviderUnavailable(f"the upstream {self._where()} kept failing (HTTP {status}) after "
                                               f"{self.config.max_retries} retries — an outage, not the agent: the node "
                                               "is retried, and the task gets no score if every retry fails"))
                _relay_whole(handler, answer, data)
                return True
            reusable = self._relay(handler, answer, protocol, entry, started, model)
            return True
        finally:
            self._release(conn, answer, reusable)

    def _relay(self, handler, answer: http.client.HTTPResponse, protocol: str, entry: dict[str, Any],
               started: float, model: str) -> bool:
        """Relay the answer to the CLI, accounting it; True when the upstream's answer was read whole."""
        status = answer.status
        streamed = "text/event-stream" in (answer.getheader("content-type") or "")
        if not streamed:
            data = answer.read()
            usage = usage_of.from_json(protocol, data) if status < 400 else usage_of.Usage()
            error = None if status < 400 else f"HTTP {status}: {_text(data)[:300]}"
            kept = self._account(entry, started, model, usage, error=error, status=status, answer=data)
            if status in REJECTED_STATUSES and not (status == 404 and (self._chosen(model)
                                                                      or self._model_found(model, protocol))):
                self._fail(ProviderRejected(f"the upstream {self._where()} rejected the request (HTTP {status}) — "
                                            "check the API key, the model name and base_url; nothing was scored"))
            _relay_whole(handler, answer, data)
            self._keep(kept)
            return True
        reader, body = usage_of.StreamReader(protocol), bytearray()
        handler.send_response(status)
        for name, value in answer.getheaders():
            if name.lower() not in _DROP_RESPONSE:
                handler.send_header(name, value)
        handler.send_header("transfer-encoding", "chunked")
        handler.end_headers()
        try:
            for chunk in _arriving(answer):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                reader.feed(chunk)  # read after it left: the CLI does not wait for the gateway's reading
                if len(body) < TRANSCRIPT_BODY_CHARS:
                    body += chunk
        except (OSError, http.client.HTTPException) as exc:
            error = f"the stream broke: {type(exc).__name__}: {exc}"
            self._keep(self._account(entry, started, model, reader.close(), error=error, status=status,
                                     answer=bytes(body)))
            return False
        # Accounted before the terminating chunk: once the CLI has its whole answer it may exit
        # and the attempt be recorded at once, and the call must already be in ``calls``. The
        # transcript line is written after: it is the call's record, not its account.
        kept = self._account(entry, started, model, reader.close(), error=None, status=status, answer=bytes(body))
        try:
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass  # the CLI left before the last empty chunk: the answer was delivered and accounted
        self._keep(kept)
        return not answer.will_close

    def _account(self, entry: dict[str, Any], started: float, model: str, usage: usage_of.Usage, *,
                 error: str | None, status: int | None = None, answer: bytes = b"") -> dict[str, Any]:
        """Record the call (``calls``, ``on_call``); return its transcript entry, for ``_keep``."""
        name = usage.model or model
        price = price_for(name, self.config.price)
        inputs, outputs, cached = usage.input_tokens or 0, usage.output_tokens or 0, usage.cached_tokens or 0
        cost = None if price is None else cost_usd(price, input_tokens=inputs, output_tokens=outputs,
                                                   cached_tokens=cached, cache_write_tokens=usage.cache_write_tokens)
        if error is None and not usage.reported:
            error, cost = "the answer reported no usage: tokens unknown", None
        call = ModelCall(model=name, provider=f"gateway:{self.config.provider}", input_tokens=inputs,
                         output_tokens=outputs, cached_tokens=cached, cost_usd=cost,
                         latency_s=time.monotonic() - started, finish_reason=usage.finish_reason,
                         error=self._scrub(error)[:500] if error else None)
        entry.update(status=status, latency_s=call.latency_s, answer=answer, call=call.__dict__)
        with self._lock:  # one call at a time: the order of ``calls`` is the order recorded
            self.calls.append(call)
            if self._on_call is not None and not self._later(call):
                self._on_call(call)  # a call that outlasted stop()'s wait: recorded here, as it is answered
        return entry

    def _later(self, item: ModelCall | dict[str, Any]) -> bool:
        """Leave ``item`` to the recording thread; False once it has stopped (then do it now)."""
        with self._recording:
            if self._closing or self._recorder is None:
                return False
            self._after.append(item)
            self._unrecorded += isinstance(item, ModelCall)
            self._recording.notify_all()
        return True

    def _record(self) -> None:
        """Give each accounted call to ``on_call`` and write each transcript line, in order, off the relay.

        The node's database write took tens of ms a call, and the CLI's last chunk waited for it;
        the transcript line (about a ms a long answer) held up its next wake-up on a busy machine.
        Now the CLI has its answer at once, and the account is kept as before: ``calls`` has the
        call before the last chunk, the next upstream request waits until every earlier call is
        recorded (so a killed run loses no more than the calls in flight, as it did), and
        ``stop()`` returns only once all are, raising the first error ``on_call`` raised.
        """
        while True:
            with self._recording:
                self._recording.wait_for(lambda: self._after or self._closing)
                if not self._after:
                    return
                item = self._after[0]
            try:
                if isinstance(item, ModelCall):
                    self._on_call(item)  # type: ignore[misc]
                else:
                    self._write_line(item)
            except BaseException as exc:  # kept for stop(): the next calls are still recorded
                self._record_error = self._record_error or exc
            with self._recording:
                self._after.popleft()
                self._unrecorded -= isinstance(item, ModelCall)
                self._recording.notify_all()

    def _wait_recorded(self) -> None:
        with self._recording:
            self._recording.wait_for(lambda: not self._unrecorded)

    def _keep(self, entry: dict[str, Any]) -> None:
        """Have a call's transcript line written (after the CLI has its answer: it need not wait for this)."""
        if not self._later(entry):
            self._write_line(entry)

    def _write_line(self, entry: dict[str, Any]) -> None:
        entry["answer"] = _text(entry["answer"])
        line = self._scrub(json.dumps(entry))
        with self._transcript_lock:
            if self._transcript is not None:
                self._transcript.parent.mkdir(parents=True, exist_ok=True)
                with self._transcript.open("a") as out:
                    out.write(line + "\n")
            else:
                self.transcript.append(json.loads(line))

    def _fail(self, error: Exception) -> None:
        with self._lock:
            self.failure = self.failure or error

    def _scrub(self, text: str) -> str:
        key = self._key
        return text.replace(key, "***") if key else text

    def _where(self) -> str:
        return f"{self.config.provider} API at {self._upstream.scheme}://{self._upstream.netloc}"

    def _send(self, path: str, headers: dict[str, str], body: bytes) -> tuple[http.client.HTTPConnection,
                                                                           http.client.HTTPResponse]:
        """Send the request on a kept-alive connection, or a new one; the upstream's answer, headers read.

        Connections are kept between calls: a new one per call cost a TCP (and, to a hosted API,
        a TLS) handshake before every answer. A kept connection the upstream has closed meanwhile
        fails before any answer; the request never reached the upstream, so it is sent again on a
        new connection, not counted as a call.
        """
        while True:
            with self._pool_lock:
                conn = self._idle.pop() if self._idle else None
            if conn is None:
                break
            if _dropped(conn):
                conn.close()
                continue
            try:
                conn.request("POST", path, body=body, headers=headers)
                return conn, conn.getresponse()
            except (ConnectionError, http.client.BadStatusLine):  # closed by the upstream while idle
                conn.close()
            except BaseException:
                conn.close()
                raise
        cls = http.client.HTTPSConnection if self._upstream.scheme == "https" else http.client.HTTPConnection
        conn = cls(self._upstream.netloc, timeout=self.config.timeout_s)
        try:
            conn.request("POST", path, body=body, headers=headers)
            return conn, conn.getresponse()
        except BaseException:
            conn.close()
            raise

    def _release(self, conn: http.client.HTTPConnection, answer: http.client.HTTPResponse, reusable: bool) -> None:
        """Keep the connection for the next call when its answer was read whole, else close it."""
        if reusable and not answer.will_close:
            answer.close()  # the body was read past http.client (``_arriving``): mark the answer done
            with self._pool_lock:
                if self._server is not None:
                    self._idle.append(conn)
                    return
        conn.close()


def _shut(sock: socket.socket) -> None:
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass


def _dropped(conn: http.client.HTTPConnection) -> bool:
    """True when a kept connection has something to read while no request is out: the upstream closed it."""
    sock = conn.sock
    if sock is None:
        return True
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _upstream_path(path: str) -> str:
    bare, _, query = path.partition("?")
    bare = bare if bare.startswith("/v1/") else "/v1" + bare
    return bare + (f"?{query}" if query else "")


def _text(data: bytes) -> str:
    return data[:TRANSCRIPT_BODY_CHARS].decode("utf-8", errors="replace")


def _arriving(answer: http.client.HTTPResponse) -> Iterator[bytes]:
    """The body of a streamed answer, in pieces as it arrives, its chunked framing taken off.

    Each piece is everything at hand when the gateway reads: the events the upstream sent since the
    last read, relayed in one write. ``HTTPResponse.read1`` returns one upstream chunk (one event) a
    call, and relaying event by event cost a write, a wake-up of the bridge and of the CLI per event
    — the gateway's whole overhead on a fast stream. Raises ``http.client.IncompleteRead`` when the
    upstream closes before its last chunk.
    """
    source = answer.fp
    if not answer.chunked:
        left = answer.length  # None: the answer ends when the upstream closes
        while left is None or left > 0:
            data = source.read1(STREAM_READ if left is None else min(STREAM_READ, left))
            if not data:
                if left:
                    raise http.client.IncompleteRead(b"", left)
                return
            left = None if left is None else left - len(data)
            yield data
        return
    # Decoded by position in the bytes at hand: cutting each chunk off the front of a buffer moved
    # the rest of it every time (a stream is hundreds of small chunks, most of them whole in a read).
    pending, left = b"", 0  # bytes not yet decoded; of the current chunk's data and its CRLF, still to come
    while True:
        pieces, at, size = [], 0, len(pending)
        while True:
            if left:
                take = min(left, size - at)
                if (data := min(take, left - 2)) > 0:  # not the CRLF after the data
                    pieces.append(pending[at:at + data])
                at, left = at + take, left - take
                if left:
                    break
            end = pending.find(b"\n", at)
            if end < 0:
                break
            try:
                length = int(pending[at:end].split(b";", 1)[0], 16)  # int() takes the spaces and the CR around it
            except ValueError:
                raise http.client.IncompleteRead(pending[at:end][:40]) from None
            if length <= 0:
                if length < 0:
                    raise http.client.IncompleteRead(pending[at:end][:40])
                if pieces:  # the last chunk: what follows is trailers, not the answer
                    yield b"".join(pieces)
                _skip_trailers(source, pending[end + 1:])
                return
            at, left = end + 1, length + 2
        if pieces:
            yield b"".join(pieces)
        data = source.read1(STREAM_READ)
        if not data:
            raise http.client.IncompleteRead(pending[at:])
        pending = pending[at:] + data if at < size else data


def _skip_trailers(source, pending: bytes) -> None:
    """Read past the trailers after the last chunk, to the empty line that ends the answer."""
    while not pending.startswith(b"\r\n") and not pending.startswith(b"\n"):
        end = pending.find(b"\n")
        if end >= 0:
            pending = pending[end + 1:]
        elif not (data := source.read1(STREAM_READ)):
            raise http.client.IncompleteRead(pending)
        else:
            pending += data


def _relay_whole(handler, answer: http.client.HTTPResponse, data: bytes) -> None:
    handler.send_response(answer.status)
    for name, value in answer.getheaders():
        if name.lower() not in _DROP_RESPONSE:
            handler.send_header(name, value)
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


def _refuse(handler, status: int, message: str) -> None:
    data = json.dumps({"type": "error", "error": {"type": "evoci_gateway", "message": message}}).encode()
    handler.send_response(status)
    handler.send_header("content-type", "application/json")
    handler.send_header("content-length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


__all__ = ["Gateway"]
