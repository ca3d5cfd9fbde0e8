"""What a command sees of a silent network (``evoci.sandbox.silent``): run inside a sandbox, prints JSON."""

PROBE = r'''
import errno, json, socket, struct, time

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
    "interfaces": sorted(name for _, name in socket.if_nameindex()),
    "take_lo_down": take_lo_down(),
    "capabilities": sorted(k for k, v in caps.items() if int(v, 16)),
}))
'''
