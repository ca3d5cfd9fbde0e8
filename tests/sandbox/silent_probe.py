"""What a command sees of a silent network (``evoci.sandbox.silent``): run inside a sandbox, prints JSON.

Its arguments: the host's own address and a port it listens on there, and an abstract unix socket
it listens on — none of them may answer.
"""

import contextlib
import secrets
import socket


@contextlib.contextmanager
def host_listeners():
    """A TCP listener on every address of the host and an abstract unix socket: (address, port, name)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.connect(("192.0.2.1", 9))  # no packet is sent: the kernel only picks the source address
    address = probe.getsockname()[0]
    probe.close()
    tcp = socket.socket()
    tcp.bind(("0.0.0.0", 0))
    tcp.listen(8)
    name = "evoci-silent-" + secrets.token_hex(4)
    unix = socket.socket(socket.AF_UNIX)
    unix.bind("\0" + name)
    unix.listen(8)
    try:
        yield address, str(tcp.getsockname()[1]), name
    finally:
        tcp.close()
        unix.close()


PROBE = r'''
import errno, json, socket, struct, sys, time
host, port, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]

def connect(host, port, timeout):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(timeout)
    started = time.monotonic()
    try:
        s.connect((host, port))
        return "connected"
    except socket.timeout:
        return "timeout after %.1f" % (time.monotonic() - started)
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))
    finally:
        s.close()

def abstract(name):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect("\0" + name)
        return "connected"
    except OSError as exc:
        return errno.errorcode.get(exc.errno, str(exc.errno))

def take_lo_down():
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    body = struct.pack("=BxHiII", 0, 0, socket.if_nametoindex("lo"), 0, 1)  # IFF_UP cleared
    sock.send(struct.pack("=IHHII", 16 + len(body), 16, 0x5, 1, 0) + body)
    reply = sock.recv(4096)
    return errno.errorcode.get(-struct.unpack_from("=i", reply, 16)[0], "ok")

caps = {l.split(":")[0]: l.split(":")[1].strip() for l in open("/proc/self/status") if l.startswith("Cap")}
print(json.dumps({
    "far": connect("10.255.255.1", 80, 1.0),
    "other": connect("192.0.2.1", 443, 1.0),
    "loopback": connect("127.0.0.1", 9, 1.0),
    "host": connect(host, port, 1.0),
    "host_unix": abstract(name),
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "take_lo_down": take_lo_down(),
    "capabilities": sorted(k for k, v in caps.items() if int(v, 16)),
}))
'''
