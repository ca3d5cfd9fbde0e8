"""What the model gateway costs a streamed call, and whether it counts every token the server sent.

One client (standard-library ``http.client``, its own process) makes ``--calls`` pairs of streamed
Chat Completions calls, alternating, and times each from the request to the stream's last byte:

- **direct**: to evoci's scripted model server on loopback (its own process, as an upstream is);
- **through the gateway**: to the bridge's TCP port, through the Unix socket and the gateway to
  the same server — the path a CLI in a sandbox takes (the bridge is the code that runs in the
  sandbox, here in its own process on the host: a sandbox cannot reach the server directly, and
  alternating the two calls keeps a busy machine's noise out of the ratio).

Reported: the median of each, their ratio (goal ≤ 1.05), the median of the per-pair difference
(goal ≤ 5 ms), and the tokens the gateway recorded against what the server sent (must be
equal). Each answer streams ``--chars`` characters in 16-character chunks, ``--pace-ms`` apart
(0: as fast as the server can write, the worst case; a hosted model streams tens of ms apart).
The gateway keeps its transcript in a file, as a flow's node has it. With ``--record`` each call is
also written to a results database as the node writes it (``Facts.call``, an ``agent_calls``
row, written behind), and the tokens compared are those of the database's rows. Both calls ask
for the usage chunk (``stream_options.include_usage``), as the gateway does for every streamed
Chat Completion, so both answers have the same events.

    .venv/bin/python benchmarks/gateway.py [--calls 200] [--chars 4000] [--pace-ms 0] [--record]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import uuid
from pathlib import Path

from evoci.agents.base import AgentOutcome
from evoci.agents.scripted import ScriptedLLMServer, text
from evoci.gateway import GatewayConfig, bridge, open_gateway
from evoci.sandbox.process import run_process

USAGE = {"input_tokens": 1500, "output_tokens": 1000, "cached_tokens": 500}
PORT = 47811
CLIENT = """
import http.client, json, sys, time, urllib.parse
direct, gateway, calls = urllib.parse.urlsplit(sys.argv[1]), urllib.parse.urlsplit(sys.argv[2]), int(sys.argv[3])
# Asking for the usage chunk, as the gateway does for every streamed Chat Completion: else the
# gateway's answer has one event more than the direct one (a whole pace interval, paced).
body = json.dumps({"model": "gpt-4.1", "stream": True, "stream_options": {"include_usage": True},
                   "messages": [{"role": "user", "content": "go"}]})
def call(url):
    started = time.perf_counter()
    conn = http.client.HTTPConnection(url.hostname, url.port)
    conn.request("POST", "/v1/chat/completions", body, {"content-type": "application/json", "authorization": "Bearer x"})
    answer = conn.getresponse()
    while answer.read1(65536):
        pass
    conn.close()
    return time.perf_counter() - started
pairs = [(call(direct), call(gateway)) for _ in range(calls + 5)]  # five warm-up pairs
print(json.dumps(pairs[5:]))
"""


def serve(chars: int, pace_s: float, urls, stop) -> None:
    """The scripted server in its own process, as a real upstream is: no lock shared with the gateway."""
    reply = text("x" * chars, usage=USAGE, event_delay=pace_s)
    with ScriptedLLMServer(lambda protocol, body: reply) as server:
        urls.put(server.url)
        stop.wait()
        urls.put(len(server.requests))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--chars", type=int, default=4000)
    parser.add_argument("--pace-ms", type=float, default=0.0)
    parser.add_argument("--record", action="store_true", help="write each call to a results database, as a flow does")
    args = parser.parse_args()
    os.environ["EVOCI_BENCH_KEY"] = "sk-bench"  # the scripted server takes any key
    urls, stop = multiprocessing.Queue(), multiprocessing.Event()
    upstream = multiprocessing.Process(target=serve, args=(args.chars, args.pace_ms / 1000, urls, stop), daemon=True)
    upstream.start()
    url = urls.get(timeout=60)
    config = GatewayConfig(provider="openai", base_url=f"{url}/v1", api_key_env="EVOCI_BENCH_KEY",
                           max_calls=2 * args.calls + 20)
    scratch = tempfile.TemporaryDirectory()
    db, on_call = Path(scratch.name) / "evoci.duckdb", None
    if args.record:  # as tasks/agents.py binds it for a node
        from evoci.store import Facts

        facts, paid = Facts(db), AgentOutcome(node_run=uuid.uuid4().hex)

        def on_call(call) -> None:
            paid.calls.append(call)
            facts.call("bench", "task", 1, "programmer", paid, len(paid.calls) - 1)

    with scratch, open_gateway(config, on_call=on_call, transcript=Path(scratch.name) / "gateway.jsonl") as gw:
        relay = multiprocessing.Process(target=bridge.serve, args=(bridge.listen(PORT), str(gw.socket_path)), daemon=True)
        relay.start()
        try:
            done = run_process([sys.executable, "-c", CLIENT, url, f"http://127.0.0.1:{PORT}", str(args.calls)],
                               cwd=Path(scratch.name), env={"PATH": "/usr/bin:/bin"}, timeout=3600,
                               output_limit=10_000_000)
        finally:
            relay.terminate()
            relay.join(10)
        if not done.ok:
            sys.exit(f"the client failed: {done.stderr[-2000:]}")
        pairs = json.loads(done.stdout)
        gw.stop()  # every call recorded
        if args.record:
            facts.flush()  # the rows the write-behind thread has not written yet, as the node's next write does
        recorded = gw.totals() if not args.record else _rows(db)
    stop.set()
    sent = urls.get(timeout=60) - len(pairs) - 5  # the server's count, less the direct calls and their warm-up
    upstream.join(10)
    direct = statistics.median(d for d, _ in pairs) * 1000
    through = statistics.median(g for _, g in pairs) * 1000
    overhead = statistics.median(g - d for d, g in pairs) * 1000
    print(f"streamed Chat Completions: {args.calls} pairs, {args.chars} characters in 16-character events "
          f"{args.pace_ms:g} ms apart")
    print(f"  median direct          {direct:8.2f} ms")
    print(f"  median via the gateway {through:8.2f} ms")
    print(f"  ratio {through / direct:.3f} (goal ≤ 1.05); overhead, median of pairs, {overhead:.2f} ms (goal ≤ 5 ms)")
    expected = {"calls": sent, "input_tokens": sent * USAGE["input_tokens"],
                "output_tokens": sent * USAGE["output_tokens"], "cached_tokens": sent * USAGE["cached_tokens"]}
    got = {k: recorded[k] for k in expected}
    print(f"  tokens the server sent      {expected}")
    print(f"  tokens the gateway recorded{' (agent_calls rows)' if args.record else ''} {got} — "
          f"{'equal' if got == expected else 'DIFFERENT'}")


def _rows(db: Path) -> dict[str, int]:
    from evoci.store.db import reading

    with reading(db) as con:
        calls, inputs, outputs, cached = con.execute(
            "select count(*), sum(input_tokens), sum(output_tokens), sum(cached_tokens) from agent_calls "
            "where error is null").fetchone()
    return {"calls": calls, "input_tokens": inputs, "output_tokens": outputs, "cached_tokens": cached}


if __name__ == "__main__":
    main()
