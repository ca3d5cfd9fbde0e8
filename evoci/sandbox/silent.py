"""A silent network: the sandbox's own loopback as the route to everywhere.

A sandbox has no network: only its own loopback, so connecting to any other address fails at once
("Network is unreachable"). Tests of connect timeouts expect what the internet gives an address
that does not answer: the connection waits, then times out (requests' ``TestTimeout`` connects to
``10.255.255.1``). A *silent* network gives that and nothing more: in the sandbox's fresh network
namespace, which holds only ``lo``, a default route (IPv4, and IPv6 where ``lo`` has it) sends
every packet into ``lo``, where the kernel drops what is not for the sandbox itself. Nothing leaves
the namespace; a connection to another host waits for its timeout instead of failing at once.

``SCRIPT`` runs with the standard library only (``python3 -I -S -c SCRIPT [--drop-caps] -- ARGV``),
in the namespace it sets up, before the sandboxed command; it refuses a namespace with any interface
but ``lo`` (it would otherwise route into a real network), then ``exec``s ``ARGV``:

- under bubblewrap (``evoci.sandbox.bwrap``): ``unshare --user --map-root-user --net`` creates the
  namespace, the script routes it and ``exec``s bubblewrap with ``--share-net``; the namespace
  belongs to that outer user namespace, so the command, in bubblewrap's own nested one with every
  capability dropped, cannot change its routes;
- in a container (``--network none``, ``CAP_NET_ADMIN`` and ``CAP_SETPCAP`` its only capabilities):
  the script routes it, then with ``--drop-caps`` drops every capability (bounding — which needs
  ``CAP_SETPCAP``, and without which a root command would regain them at ``exec`` — ambient,
  inheritable, permitted, effective), checks ``/proc/self/status`` says none is left, and only then
  ``exec``s the command.

Exit status 125 (with a line on standard error) when the namespace cannot be set up: the sandbox
failed, not the command.
"""

from __future__ import annotations

SETUP_FAILED = 125

SCRIPT = r'''
import ctypes, os, socket, struct, sys

def fail(why):
    sys.stderr.write("evoci silent network: " + why + "\n")
    sys.exit(125)

def netlink(kind, body, flags):
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
    try:
        sock.send(struct.pack("=IHHII", 16 + len(body), kind, flags, 1, 0) + body)
        reply = sock.recv(65536)
    finally:
        sock.close()
    length, mtype = struct.unpack_from("=IH", reply)
    if mtype != 2:  # NLMSG_ERROR carries the acknowledgement
        fail("unexpected netlink reply %d" % mtype)
    return -struct.unpack_from("=i", reply, 16)[0]

names = sorted(name for _, name in socket.if_nameindex())
if names != ["lo"]:
    fail("the namespace has interfaces %s, not only lo: refusing to route it" % names)
lo = socket.if_nametoindex("lo")
# RTM_NEWLINK: lo up
error = netlink(16, struct.pack("=BxHiII", socket.AF_UNSPEC, 0, lo, 0x1, 0x1), 0x1 | 0x4)  # REQUEST | ACK
if error:
    fail("cannot bring lo up: " + os.strerror(error))
oif = struct.pack("=HHI", 8, 4, lo)  # RTA_OIF
ADD = 0x1 | 0x4 | 0x400 | 0x200  # REQUEST | ACK | CREATE | EXCL
# RTM_NEWROUTE: default dev lo (table main, protocol boot, unicast); scope link for IPv4, universe for IPv6
error = netlink(24, struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 254, 3, 253, 1, 0) + oif, ADD)
if error:
    fail("cannot add the IPv4 route: " + os.strerror(error))
def ipv6_on_lo():  # a kernel without IPv6, or IPv6 off on lo (Docker's default): no IPv6 to route
    try:
        with open("/proc/sys/net/ipv6/conf/lo/disable_ipv6") as flag:
            return flag.read().strip() == "0"
    except OSError:
        return False

if ipv6_on_lo():
    error = netlink(24, struct.pack("=BBBBBBBBI", socket.AF_INET6, 0, 0, 0, 254, 3, 0, 1, 0) + oif, ADD)
    if error:
        fail("cannot add the IPv6 route: " + os.strerror(error))

args = sys.argv[1:]
if args[:1] == ["--drop-caps"]:
    args = args[1:]
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in range(64):
        if libc.prctl(24, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # PR_CAPBSET_DROP; EINVAL: no such cap
            fail("cannot drop capability %d: %s" % (cap, os.strerror(ctypes.get_errno())))
    libc.prctl(47, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header = struct.pack("=Ii", 0x20080522, 0)
    if libc.capset(ctypes.c_char_p(header), ctypes.c_char_p(bytes(24))) != 0:
        fail("cannot drop capabilities: " + os.strerror(ctypes.get_errno()))
    with open("/proc/self/status") as status:
        caps = {k: v.strip() for k, v in (l.split(":", 1) for l in status if l.startswith("Cap"))}
    left = {k: v for k, v in caps.items() if int(v, 16)}
    if left:
        fail("capabilities left after dropping them: %s" % left)
if args[:1] == ["--"]:
    args = args[1:]
if not args:
    fail("no command given")
try:
    os.execvp(args[0], args)
except OSError as exc:
    fail("cannot run %s: %s" % (args[0], exc))
'''


def wrap(python: str, argv: list[str], *, drop_caps: bool) -> list[str]:
    """``argv`` run by ``python`` through ``SCRIPT`` (already inside the namespace to route)."""
    return [python, "-I", "-S", "-c", SCRIPT, *(["--drop-caps"] if drop_caps else []), "--", *argv]
