"""The gateway with the real SDKs: three wire protocols, streamed or not, accounted as the server sent them.

The SDKs talk to the gateway's Unix socket (httpx's ``uds`` transport), as the bridge does inside
a sandbox; the upstream is evoci's scripted model server.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import anthropic
import httpx
import openai
import pytest

from evoci.agents.scripted import ScriptedLLMServer, rate_limited, rejected, server_error, text, tool_call
from evoci.errors import InputError, ProviderRejected, ProviderUnavailable
from evoci.gateway import DUMMY_KEY, CliUsage, GatewayConfig, open_gateway

KEY = "sk-upstream-secret-5b1e"
USAGE = {"input_tokens": 1200, "output_tokens": 34, "cached_tokens": 200}


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GW_KEY", KEY)


def gateway(server: ScriptedLLMServer, provider: str = "openai", **options):
    base = server.base_url("anthropic" if provider == "anthropic" else "openai")
    config = GatewayConfig(provider=provider, base_url=base, api_key_env="GW_KEY", retry_backoff_s=0.01, **options)
    return open_gateway(config, on_call=None)


def http(gw) -> httpx.Client:
    return httpx.Client(transport=httpx.HTTPTransport(uds=str(gw.socket_path)))


def openai_client(gw) -> openai.OpenAI:
    return openai.OpenAI(base_url="http://127.0.0.1:4780/v1", api_key=DUMMY_KEY, max_retries=0, http_client=http(gw))


def anthropic_client(gw) -> anthropic.Anthropic:
    import httpx2  # the anthropic SDK's own fork of httpx

    client = httpx2.Client(transport=httpx2.HTTPTransport(uds=str(gw.socket_path)))
    return anthropic.Anthropic(base_url="http://127.0.0.1:4780", api_key=DUMMY_KEY, max_retries=0, http_client=client)


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(lambda protocol, body: text("done here", usage=USAGE)) as scripted:
        yield scripted


def expect_accounted(gw, server: ScriptedLLMServer, model: str, finish: str) -> None:
    (call,) = gw.calls
    assert (call.input_tokens, call.output_tokens, call.cached_tokens) == (1200, 34, 200)
    assert (call.model, call.finish_reason, call.error) == (model, finish, None)
    assert call.cost_usd is not None and call.cost_usd > 0
    seen = server.requests[-1].headers
    assert KEY in (seen.get("x-api-key") or seen.get("authorization") or "")
    assert DUMMY_KEY not in json.dumps(seen)


@pytest.mark.parametrize("stream", [True, False])
def test_anthropic_messages(server, stream: bool) -> None:
    with gateway(server, "anthropic") as gw:
        client = anthropic_client(gw)
        ask = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
        if stream:
            with client.messages.stream(**ask) as events:
                message = events.get_final_message()
        else:
            message = client.messages.create(**ask)
        assert message.content[0].text == "done here"
        expect_accounted(gw, server, "claude-sonnet-4-5", "end_turn")


@pytest.mark.parametrize("stream", [True, False])
def test_chat_completions(server, stream: bool) -> None:
    with gateway(server) as gw:
        client = openai_client(gw)
        ask = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
        if stream:  # the CLI did not ask for the usage chunk: the gateway does, so the call is accounted
            said = "".join(c.choices[0].delta.content or "" for c in client.chat.completions.create(**ask, stream=True)
                           if c.choices)
        else:
            said = client.chat.completions.create(**ask).choices[0].message.content
        assert said == "done here"
        expect_accounted(gw, server, "gpt-4.1", "stop")


@pytest.mark.parametrize("stream", [True, False])
def test_responses(server, stream: bool) -> None:
    with gateway(server) as gw:
        client = openai_client(gw)
        if stream:
            events = list(client.responses.create(model="gpt-4.1", input="hi", stream=True))
            assert events[-1].type == "response.completed"
            said = events[-1].response.output_text
        else:
            said = client.responses.create(model="gpt-4.1", input="hi").output_text
        assert said == "done here"
        expect_accounted(gw, server, "gpt-4.1", "completed")


def test_streamed_tool_calls_reach_the_sdk() -> None:
    with ScriptedLLMServer([tool_call("write_file", {"path": "a.py"}, usage=USAGE)] * 2) as server, \
            gateway(server) as gw:
        chunks = list(openai_client(gw).chat.completions.create(
            model="gpt-4.1", messages=[{"role": "user", "content": "hi"}], stream=True))
        deltas = [c.choices[0].delta.tool_calls for c in chunks if c.choices and c.choices[0].delta.tool_calls]
        assert deltas[0][0].function.name == "write_file"
        with anthropic_client(gw).messages.stream(model="claude-sonnet-4-5", max_tokens=64,
                                                  messages=[{"role": "user", "content": "hi"}]) as events:
            block = events.get_final_message().content[0]
        assert (block.type, block.name, block.input) == ("tool_use", "write_file", {"path": "a.py"})
        assert [c.output_tokens for c in gw.calls] == [34, 34]


def test_a_rejected_key_is_bad_input_and_stops_forwarding() -> None:
    with ScriptedLLMServer([rejected(401), text("never")]) as server, gateway(server) as gw:
        client = openai_client(gw)
        with pytest.raises(openai.AuthenticationError):
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(openai.APIStatusError):  # the next call is not forwarded
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ProviderRejected, match="rejected the request"):
            gw.verdict()
        assert len(server.requests) == 1 and gw.calls[0].error.startswith("HTTP 401")


def test_an_outage_is_retried_then_infrastructure() -> None:
    with ScriptedLLMServer([rate_limited(0.01), text("ok", usage=USAGE)] + [server_error(500)] * 3) as server, \
            gateway(server, max_retries=2) as gw:
        client = openai_client(gw)
        ask = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
        assert client.chat.completions.create(**ask).choices[0].message.content == "ok"
        gw.verdict()  # a 429 retried to success is no failure
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(**ask)
        with pytest.raises(ProviderUnavailable, match="kept failing"):
            gw.verdict()
        assert [c.error is None for c in gw.calls] == [False, True, False, False, False]


def test_an_unreachable_upstream_is_infrastructure() -> None:
    with ScriptedLLMServer([]) as server:
        url = server.base_url("openai")
    config = GatewayConfig(provider="openai", base_url=url, api_key_env="GW_KEY", max_retries=1, retry_backoff_s=0.01)
    with open_gateway(config) as gw:
        with pytest.raises(openai.APIStatusError):
            openai_client(gw).chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ProviderUnavailable, match="could not be reached"):
            gw.verdict()
        assert len(gw.calls) == 2 and all("unreachable" in c.error for c in gw.calls)


def test_limits_refuse_the_call_after_the_budget() -> None:
    with ScriptedLLMServer(lambda p, b: text("ok", usage=USAGE)) as server, gateway(server, max_calls=2) as gw:
        client = openai_client(gw)
        ask = {"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}
        client.chat.completions.create(**ask)
        client.chat.completions.create(**ask)
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(**ask)
        assert "max_calls" in gw.limit and len(server.requests) == 2
    with ScriptedLLMServer(lambda p, b: text("ok", usage=USAGE)) as server, gateway(server, max_cost_usd=0.001) as gw:
        client = openai_client(gw)
        client.chat.completions.create(**ask)  # $0.00266: over the budget after one call
        with pytest.raises(openai.BadRequestError):
            client.chat.completions.create(**ask)
        assert "max_cost_usd" in gw.limit


def test_a_model_the_agent_chose_that_the_upstream_rejects_or_cannot_price_is_its_own_failed_call() -> None:
    # The request's model is the agent's to write: naming one the upstream does not know (404) or
    # one without a price under a cost limit stopped the whole run as bad input, nothing scored.
    def answer(protocol, body):
        return text("done here", usage=USAGE) if body.get("model") == "gpt-4.1" else rejected(404)

    config = dict(provider="openai", api_key_env="GW_KEY", retry_backoff_s=0.01)
    with ScriptedLLMServer(answer) as server:
        url = server.base_url("openai")
        with open_gateway(GatewayConfig(base_url=url, **config), model="gpt-4.1") as gw:
            client = openai_client(gw)
            with pytest.raises(openai.NotFoundError):
                client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "hi"}])
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])  # forwarded
            gw.verdict()  # nothing to raise: the run goes on, the attempt is scored
            assert [c.error is None for c in gw.calls] == [False, True]
        with open_gateway(GatewayConfig(base_url=url, max_cost_usd=1.0, **config), model="gpt-4.1") as gw:
            with pytest.raises(openai.BadRequestError):
                openai_client(gw).chat.completions.create(model="my-local-model",
                                                          messages=[{"role": "user", "content": "x"}])
            gw.verdict()
        # no model configured: one first named after a call was answered is the agent's (the CLI's first
        # call is made before the model says anything); a rejected first call is the user's setup
        with open_gateway(GatewayConfig(base_url=url, **config)) as gw:
            client = openai_client(gw)
            client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(openai.NotFoundError):
                client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "hi"}])
            gw.verdict()
        with open_gateway(GatewayConfig(base_url=url, **config)) as gw:
            with pytest.raises(openai.NotFoundError):
                openai_client(gw).chat.completions.create(model="no-such-model",
                                                          messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(ProviderRejected):
                gw.verdict()
        # the configured model itself rejected, or unpriced under a limit: the user's bad input, as before
        with open_gateway(GatewayConfig(base_url=url, **config), model="no-such-model") as gw:
            with pytest.raises(openai.NotFoundError):
                openai_client(gw).chat.completions.create(model="no-such-model",
                                                          messages=[{"role": "user", "content": "hi"}])
            with pytest.raises(ProviderRejected):
                gw.verdict()
        with open_gateway(GatewayConfig(base_url=url, max_cost_usd=1.0, **config), model="my-local-model") as gw:
            with pytest.raises(openai.BadRequestError):
                openai_client(gw).chat.completions.create(model="my-local-model",
                                                          messages=[{"role": "user", "content": "x"}])
            with pytest.raises(InputError, match="no price for model 'my-local-model'"):
                gw.verdict()


def test_an_unknown_price_is_null_and_a_cost_limit_needs_one(server) -> None:
    with gateway(server) as gw:
        openai_client(gw).chat.completions.create(model="my-local-model", messages=[{"role": "user", "content": "hi"}])
        assert gw.calls[0].cost_usd is None and gw.totals()["cost_usd"] is None
    with gateway(server, max_cost_usd=1.0) as gw:
        with pytest.raises(openai.BadRequestError):
            openai_client(gw).chat.completions.create(model="my-local-model", messages=[{"role": "user", "content": "x"}])
        with pytest.raises(InputError, match="no price for model 'my-local-model'"):
            gw.verdict()


def test_the_cli_usage_is_cross_checked_and_the_transcript_kept(server, tmp_path) -> None:
    transcript = tmp_path / "gateway.jsonl"
    config = GatewayConfig(provider="openai", base_url=server.base_url("openai"), api_key_env="GW_KEY")
    with open_gateway(config, transcript=transcript) as gw:
        openai_client(gw).chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
        same = gw.cross_check(CliUsage(source="cli --json", input_tokens=1200, output_tokens=34, calls=1))
        other = gw.cross_check(CliUsage(source="cli --json", input_tokens=1000, output_tokens=34))
    assert same.agrees and not other.agrees
    assert other.differences == {"input_tokens": {"gateway": 1200, "cli": 1000}}
    (line,) = transcript.read_text().splitlines()
    entry = json.loads(line)
    assert entry["path"] == "/v1/chat/completions" and "done here" in entry["answer"] and '"hi"' in entry["request"]
    assert KEY not in transcript.read_text()


def test_only_the_model_paths_are_forwarded(server) -> None:
    with gateway(server) as gw:
        client = http(gw)
        assert client.post("http://127.0.0.1:4780/api/flow_runs/filter", json={}).status_code == 404
        assert client.get("http://127.0.0.1:4780/v1/models").status_code == 404
        assert client.head("http://127.0.0.1:4780/").status_code == 200
        assert server.requests == [] and gw.calls == []


def test_a_request_nested_too_deeply_to_read_is_relayed_as_the_agents_own_bad_request(server) -> None:
    # json.loads raises RecursionError on it: before, the gateway's handler died and the CLI lost its connection.
    deep = b'{"model": "m", "messages": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with gateway(server) as gw:
        answer = http(gw).post("http://127.0.0.1:4780/v1/chat/completions", content=deep,
                               headers={"content-type": "application/json"})
        assert answer.status_code == 400  # what the upstream said of it, relayed
        gw.verdict()  # neither bad input nor an outage: the agent's own mistake
        (call,) = gw.calls
        assert call.error and "HTTP 400" in call.error


QUOTING = 'it said "usage": {"prompt_tokens": 9}, "finish_reason": "x", "stop_reason": "y", "model": "m" and "response.completed"'


def _sse(data: dict) -> bytes:
    return b"data: " + json.dumps(data, separators=(",", ":")).encode() + b"\n\n"


STREAMS = {
    # OpenAI's own shape: '"usage":null' on every chunk once usage is asked for; the model renamed at the end.
    "chat": [_sse({"model": "gpt-4.1", "choices": [{"index": 0, "delta": {"content": QUOTING}, "finish_reason": None}],
                   "usage": None})] * 40
    + [_sse({"model": "gpt-4.1-2025", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}], "usage": None}),
       _sse({"model": "gpt-4.1-2025", "choices": [], "usage": {"prompt_tokens": 1200, "completion_tokens": 34,
                                                                "prompt_tokens_details": {"cached_tokens": 200}}}),
       b"data: [DONE]\n\n"],
    "anthropic": [b"event: message_start\n" + _sse({"type": "message_start", "message": {
        "model": "claude-sonnet-4-5", "usage": {"input_tokens": 1000, "cache_read_input_tokens": 200, "output_tokens": 1}}})]
    + [_sse({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": QUOTING}})] * 40
    + [_sse({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 34}}),
       _sse({"type": "message_stop"})],
    "responses": [_sse({"type": "response.output_text.delta", "delta": QUOTING})] * 40
    + [_sse({"type": "response.completed", "response": {"model": "gpt-4.1", "status": "completed", "usage": {
        "input_tokens": 1200, "output_tokens": 34, "input_tokens_details": {"cached_tokens": 200}}}})],
}


@pytest.mark.parametrize("protocol", list(STREAMS))
def test_a_streams_usage_is_read_however_its_bytes_arrive(protocol: str) -> None:
    # The gateway reads as JSON only the events that can change the usage (a stream is mostly text
    # deltas): the model's text quoting the keys it looks for, and pieces cut anywhere, change nothing.
    from evoci.gateway.usage import StreamReader

    raw = b"".join(STREAMS[protocol])
    for size in (1, 7, 250, 4096, len(raw)):
        reader = StreamReader(protocol)
        for start in range(0, len(raw), size):
            reader.feed(raw[start:start + size])
        usage = reader.close()
        assert (usage.input_tokens, usage.output_tokens, usage.cached_tokens) == (1200, 34, 200), size
        assert (usage.model, usage.finish_reason) == {"chat": ("gpt-4.1-2025", "stop"),
                                                      "anthropic": ("claude-sonnet-4-5", "end_turn"),
                                                      "responses": ("gpt-4.1", "completed")}[protocol]


def test_calls_share_a_kept_upstream_connection_and_one_closed_while_idle_is_replaced() -> None:
    # Before, every call opened its own connection: to a hosted API, a TCP and a TLS handshake before each answer.
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    import threading

    seen: list[int] = []  # the client port of each request: one per connection

    class Upstream(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:  # noqa: N802
            self.rfile.read(int(self.headers["content-length"]))
            seen.append(self.client_address[1])
            data = json.dumps({"model": "gpt-4.1", "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": "ok"}}], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.close_connection = len(seen) == 2  # then closed while idle, as a server's keep-alive timeout does

        def log_message(self, *args) -> None:
            pass

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    config = GatewayConfig(provider="openai", base_url=f"http://127.0.0.1:{upstream.server_address[1]}/v1",
                           api_key_env="GW_KEY", max_retries=0)
    try:
        with open_gateway(config) as gw:
            client = openai_client(gw)
            for _ in range(3):
                assert client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}]
                                                      ).choices[0].message.content == "ok"
            gw.verdict()
            assert [c.error for c in gw.calls] == [None, None, None]  # the closed connection is no call
    finally:
        upstream.shutdown()
        upstream.server_close()
    assert len(seen) == 3 and seen[0] == seen[1] != seen[2]


def test_a_slow_record_holds_up_neither_the_answer_nor_the_account() -> None:
    # The node's database write took tens of ms a call, and the CLI's last chunk waited for it. Now
    # the CLI has its answer at once; the call is in ``calls`` before the last chunk (the CLI may exit
    # then), and ``stop()`` returns only once ``on_call`` has every call, in order.
    import threading

    released, recorded = threading.Event(), []

    def on_call(call) -> None:
        released.wait(60)
        recorded.append(call)

    with ScriptedLLMServer(lambda protocol, body: text("done here", usage=USAGE)) as server:
        config = GatewayConfig(provider="openai", base_url=server.base_url("openai"), api_key_env="GW_KEY")
        gw = open_gateway(config, on_call=on_call)
        answer = http(gw).post("http://127.0.0.1:4780/v1/chat/completions", json={  # read to the body's end
            "model": "gpt-4.1", "stream": True, "messages": [{"role": "user", "content": "hi"}]})
        assert answer.status_code == 200 and answer.text.endswith("data: [DONE]\n\n")
        assert len(gw.calls) == 1 and recorded == []  # answered and accounted while the write is still going on
        released.set()
        gw.stop()
    assert recorded == gw.calls and recorded[0].output_tokens == 34


def test_a_record_that_fails_is_raised_when_the_gateway_stops(server) -> None:
    def on_call(call) -> None:
        raise OSError("the results database is gone")

    config = GatewayConfig(provider="openai", base_url=server.base_url("openai"), api_key_env="GW_KEY")
    with pytest.raises(OSError, match="database is gone"):
        with open_gateway(config, on_call=on_call) as gw:
            openai_client(gw).chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}])
    assert len(gw.calls) == 1


def test_concurrent_calls_through_the_bridge_are_each_accounted_once() -> None:
    # Four CLI connections at once through the bridge (each handed over to the gateway), sharing the
    # kept upstream connections: every call is accounted with its own tokens, and recorded once.
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from evoci.gateway import bridge

    def reply(protocol, body):
        n = int(body["messages"][0]["content"])
        return text("x" * n, usage={"input_tokens": 1000 + n, "output_tokens": n, "cached_tokens": 0})

    recorded = []
    with ScriptedLLMServer(reply) as server:
        config = GatewayConfig(provider="openai", base_url=server.base_url("openai"), api_key_env="GW_KEY",
                               max_calls=100)
        with open_gateway(config, on_call=recorded.append) as gw:
            listener = bridge.listen(0)
            threading.Thread(target=bridge.serve, args=(listener, str(gw.socket_path)), daemon=True).start()
            client = openai.OpenAI(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key=DUMMY_KEY,
                                   max_retries=0)

            def call(n: int) -> str:
                chunks = client.chat.completions.create(model="gpt-4.1", stream=True,
                                                        messages=[{"role": "user", "content": str(n)}])
                return "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)

            with ThreadPoolExecutor(4) as pool:
                said = list(pool.map(call, range(1, 41)))
            gw.verdict()
    assert said == ["x" * n for n in range(1, 41)]
    assert sorted((c.input_tokens, c.output_tokens) for c in recorded) == [(1000 + n, n) for n in range(1, 41)]
    assert recorded == gw.calls and all(c.error is None for c in recorded)


def test_only_a_connected_socket_is_taken_over_from_the_bridge(server, tmp_path) -> None:
    # The hand-off socket is inside the sandbox: whatever an agent passes there is served as a CLI's
    # connection only when it is one; a file, a listening socket or nothing at all is closed unread.
    import array
    import socket

    from evoci.gateway import HANDOFF_NAME

    def handed(sock: socket.socket, fd: int | None) -> None:
        rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))] if fd is not None else []
        sock.sendmsg([b"\0"], rights)

    with gateway(server) as gw:
        bridge = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bridge.connect(str(gw.socket_path.with_name(HANDOFF_NAME)))
        (tmp_path / "file").write_text("not a socket")
        listening = socket.socket()
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        with open(tmp_path / "file", "rb") as file:
            for fd in (file.fileno(), listening.fileno(), None):
                handed(bridge, fd)
        cli, theirs = tcp_pair()
        handed(bridge, theirs.fileno())
        theirs.close()
        body = json.dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}).encode()
        cli.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body))
        answer = b""
        while data := cli.recv(65536):
            answer += data
        assert answer.startswith(b"HTTP/1.1 200") and b"done here" in answer
        expect_accounted(gw, server, "gpt-4.1", "stop")
        bridge.close()
        listening.close()
        cli.close()


def tcp_pair():
    """A connected TCP connection's two ends, as the bridge's listener accepts a CLI's."""
    import socket

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen(1)
        mine = socket.create_connection(listening.getsockname())
        theirs, _ = listening.accept()
    return mine, theirs


def test_connections_handed_over_in_a_flood_get_no_thread_each_and_none_outlives_the_gateway(server) -> None:
    # An agent handed over both ends of socket pairs, each end served on a thread waiting for a
    # request its other end (held by the gateway) never sent: threads and descriptors without end.
    import array
    import socket
    import threading

    from evoci.gateway import HANDOFF_NAME
    from evoci.gateway.server import MAX_HANDED

    before = threading.active_count()
    kept = []
    with gateway(server) as gw:
        bridge = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bridge.connect(str(gw.socket_path.with_name(HANDOFF_NAME)))
        for _ in range(100):
            one, two = socket.socketpair()  # not a TCP connection: closed unread
            mine, theirs = tcp_pair()  # a TCP one the agent made to itself, and never speaks on
            kept += [one, two, mine, theirs]
            for sock in (one, two, theirs):
                bridge.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [sock.fileno()]))])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(gw._handed) < MAX_HANDED:
            time.sleep(0.05)
        time.sleep(0.5)
        assert len(gw._handed) == MAX_HANDED  # the first 32 TCP ones are served; no socketpair, no more
        assert threading.active_count() <= before + MAX_HANDED + 10
        bridge.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and threading.active_count() > before + 2:
        time.sleep(0.05)
    assert threading.active_count() <= before + 2  # stop() ended every connection it was serving
    for sock in kept:
        sock.close()


def test_without_the_hand_off_socket_the_bridge_pipes_the_connection(server) -> None:
    import threading

    from evoci.gateway import HANDOFF_NAME, bridge

    with gateway(server) as gw:
        gw.socket_path.with_name(HANDOFF_NAME).unlink()  # as a gateway without hand-offs
        listener = bridge.listen(0)
        threading.Thread(target=bridge.serve, args=(listener, str(gw.socket_path)), daemon=True).start()
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{listener.getsockname()[1]}/v1", api_key=DUMMY_KEY,
                               max_retries=0)
        for _ in range(2):
            assert client.chat.completions.create(model="gpt-4.1", messages=[{"role": "user", "content": "hi"}]
                                                  ).choices[0].message.content == "done here"
        assert len(gw.calls) == 2
