"""The bridge inside an agent sandbox: 127.0.0.1:PORT of the sandbox's own network → the gateway.

The sandbox has no network device but loopback, so a CLI can only reach ``http://127.0.0.1:PORT``;
this process accepts there and hands each connection over to the gateway: it passes the accepted
socket itself (its descriptor, over ``handoff.sock`` beside the gateway's socket in the folder evoci
bound into the sandbox), and the gateway reads and answers the CLI on it directly. The bridge is
then out of the way: relaying each piece of a stream through it cost a wake-up of one more
process per piece, most of the gateway's overhead on a fast stream. Where a connection cannot be
handed over (no ``handoff.sock``, a kernel that refuses), it is piped to the gateway's HTTP
socket instead, as before. Either way the CLI reaches the gateway and nothing else.

It is run with the sandbox's ``python3`` (standard library only) before the agent's command:
``python3 bridge.py SOCKET PORT && exec the-command``. It returns once the port listens, leaving a
child that serves until the sandbox ends (its PID namespace or container dies with it).
"""

import os
import socket
import sys
import threading

HANDOFF_NAME = "handoff.sock"  # evoci.gateway.endpoint.HANDOFF_NAME (this file imports nothing of evoci)


def _pump(src: socket.socket, dst: socket.socket) -> None:
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass


def _serve(client: socket.socket, path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(path)
    except OSError:
        client.close()
        upstream.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    client.close()
    upstream.close()


class Handoff:
    """Passes accepted sockets to the gateway, one byte and one descriptor each, on one kept connection."""

    def __init__(self, path: str):
        self.path = path
        self.sock = None
        self.works = True

    def give(self, client: socket.socket) -> bool:
        """True when the gateway holds ``client`` now (close this copy); False: pipe it instead."""
        for _ in range(2):  # a kept connection the gateway dropped: one more try on a new one
            if not self.works:
                return False
            fresh = self.sock is None
            try:
                if fresh:
                    self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                    self.sock.connect(self.path)
                rights = client.fileno().to_bytes(4, sys.byteorder)  # a C int; no import a sandbox's python may lack
                self.sock.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, rights)])
                return True
            except OSError:
                if self.sock is not None:
                    self.sock.close()
                self.sock = None
                self.works = not fresh  # a new connection failed: this gateway or kernel takes no hand-offs
        return False


def listen(port: int) -> socket.socket:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    return listener


def main(path: str, port: int) -> None:
    listener = listen(port)
    if os.fork():  # the parent returns once the port listens; the child serves
        os._exit(0)
    os.setsid()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # never hold the command's output pipes open
        os.dup2(devnull, fd)
    serve(listener, path)


def serve(listener: socket.socket, path: str) -> None:
    """Hand every connection to ``listener`` over to the gateway whose socket is ``path``, forever."""
    handoff = Handoff(os.path.join(os.path.dirname(path), HANDOFF_NAME))
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if handoff.give(client):
            client.close()
        else:
            threading.Thread(target=_serve, args=(client, path), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
