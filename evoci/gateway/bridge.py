"""The bridge inside an agent sandbox: 127.0.0.1:PORT of the sandbox's own network → the gateway's socket.

The sandbox has no network device but loopback, so a CLI can only reach ``http://127.0.0.1:PORT``;
this process accepts there and pipes each connection to the Unix socket evoci bound into the
sandbox. It is run with the sandbox's ``python3`` (standard library only) before the agent's
command: ``python3 bridge.py SOCKET PORT && exec the-command``. It returns once the port listens,
leaving a child that serves until the sandbox ends (its PID namespace or container dies with it).
"""

import os
import socket
import sys
import threading


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
    """Pipe every connection to ``listener`` to the Unix socket ``path``, forever."""
    while True:
        client, _ = listener.accept()
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=_serve, args=(client, path), daemon=True).start()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
