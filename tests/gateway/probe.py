#!/usr/bin/python3
"""A probe agent: what can a command in an agent sandbox reach, read and find?

Run as the agent's command with the host ports to try as arguments; prints one JSON object.
Standard library only (it runs under the sandbox's system Python).
"""

import json
import os
import socket
import sys
import urllib.request

KEY, ORACLE, HOME_FILE = sys.argv[1][::-1], sys.argv[2], sys.argv[3]  # the key comes reversed: never as itself
PORTS = [int(p) for p in sys.argv[4:]]
found: dict = {}


def connects(host: str, port: int) -> bool:
    try:
        socket.create_connection((host, port), timeout=3).close()
        return True
    except OSError:
        return False


def model_call(path: str) -> object:
    url = os.environ.get("EVOCI_GATEWAY_URL", "http://127.0.0.1:4780") + path
    body = json.dumps({"model": "gpt-4.1", "messages": [{"role": "user", "content": "hi"}]}).encode()
    request = urllib.request.Request(url, body, {"content-type": "application/json",
                                                 "authorization": f"Bearer {os.environ.get('OPENAI_API_KEY')}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())["choices"][0]["message"]["content"]
    except Exception as exc:  # noqa: BLE001 - the probe reports whatever happened
        return f"{type(exc).__name__}: {getattr(exc, 'code', exc)}"


def readable(path: str) -> bool:
    try:
        with open(path, "rb") as handle:
            handle.read(1)
        return True
    except OSError:
        return False


def key_anywhere() -> list:
    hits = [f"env:{k}" for k, v in os.environ.items() if KEY in v]
    for pid in os.listdir("/proc"):
        for name in ("environ", "cmdline"):
            try:
                with open(f"/proc/{pid}/{name}", "rb") as handle:
                    if KEY.encode() in handle.read():
                        hits.append(f"/proc/{pid}/{name}")
            except OSError:
                pass
    for top in os.listdir("/"):
        if top in ("proc", "sys", "dev", "usr", "lib", "lib64", "lib32", "libx32", "bin", "sbin", "opt"):
            continue
        for folder, _, files in os.walk("/" + top):
            for name in files:
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as handle:
                        if KEY.encode() in handle.read(10_000_000):
                            hits.append(path)
                except OSError:
                    pass
    return hits


found["gateway_answer"] = model_call("/v1/chat/completions")
found["gateway_other_path"] = model_call("/api/flow_runs/filter")
found["host_ports"] = {str(port): connects("127.0.0.1", port) for port in PORTS}
found["other_loopback"] = connects("127.0.0.2", PORTS[0]) if PORTS else False
try:
    socket.getaddrinfo("pypi.org", 443)
    found["dns"] = True
except OSError:
    found["dns"] = False
found["outside"] = connects("1.1.1.1", 53)
found["top"] = sorted(os.listdir("/"))
here = os.path.dirname(os.path.abspath(__file__))
found["own_folder"] = sorted(os.listdir(here))
found["oracle_readable"] = readable(ORACLE)
found["home_file_readable"] = readable(HOME_FILE)
found["key_hits"] = key_anywhere()
print(json.dumps(found))
