#!/usr/bin/env python3
"""tests/vm_ops_client.py — the clients of tests/vm.sh's ops checks (the
unikernel's access log and its drain through the shutdown port).

  sink PORT OUT SECS       receive UDP datagrams on 127.0.0.1:PORT for SECS
                           seconds (or until the file OUT.stop exists),
                           appending each to OUT; prints "bound;" once it
                           listens, the count at the end
  drain HTTP CTL           on 127.0.0.1:HTTP an idle keep-alive connection
                           (one request answered) and a request in flight
                           (half its head sent); then "exit 5" to the UDP
                           port CTL; then the rest of the head: exit 0 if
                           the in-flight request got its 200 with
                           "Connection: close" and then EOF, and the idle
                           one was closed cleanly
  json FILE UA...          FILE holds one JSON access record per line, one
                           per User-Agent given, each a 200 for GET / from
                           10.0.2.2
  hold HTTP CTL            half a head on 127.0.0.1:HTTP, then "exit 0" to
                           CTL; hold it until the server closes
  manydrain HOST HTTP CTL IDLE BUSY
                           the drain with many connections (tests/vm_smp.sh:
                           a guest with a stack per vCPU): IDLE keep-alive
                           connections (one request answered each) and BUSY
                           requests in flight (half a head each) to HOST;
                           "exit 5 stats" to UDP HOST:CTL; then the rest of
                           every head: exit 0 if each in-flight request got
                           its 200 with "Connection: close" and then EOF,
                           and each idle one was closed cleanly
  manyhold HOST HTTP CTL BUSY
                           BUSY half heads to HOST, "exit 0 stats" to CTL;
                           hold them until the server closes each: prints
                           the seconds the last took after the datagram
"""
import os
import socket
import sys
import time


def cmd_sink(port, out, secs):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", int(port)))
    s.settimeout(0.2)
    print("bound;", end=" ", flush=True)  # tests/vm.sh starts the guest after this
    n = 0
    end = time.monotonic() + float(secs)
    with open(out, "ab") as f:
        while time.monotonic() < end and not os.path.exists(out + ".stop"):
            try:
                d, _ = s.recvfrom(65536)
            except socket.timeout:
                continue
            f.write(d)
            f.flush()
            n += 1
    print("%d datagrams" % n)
    return 0


def read_response(s):
    """One response: (head bytes, body bytes), the body by Content-Length."""
    got = b""
    while b"\r\n\r\n" not in got:
        x = s.recv(4096)
        if not x:
            raise SystemExit("closed before a response head: %r" % got[:80])
        got += x
    head, rest = got.split(b"\r\n\r\n", 1)
    n = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            n = int(v)
    while len(rest) < n:
        x = s.recv(4096)
        if not x:
            raise SystemExit("closed mid-body")
        rest += x
    return head, rest


def exit_msg(ctl, code=0):
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"exit %d" % code, ("127.0.0.1", int(ctl)))


def cmd_drain(http, ctl):
    idle = socket.create_connection(("127.0.0.1", int(http)), timeout=20)
    idle.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: vm-ops-idle\r\n\r\n")
    head, _ = read_response(idle)
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit("idle: %r" % head[:40])
    busy = socket.create_connection(("127.0.0.1", int(http)), timeout=20)
    busy.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n")
    time.sleep(0.5)
    exit_msg(ctl, 5)  # the code outlives the drain
    time.sleep(1.0)  # the drain has begun; the request is still in flight
    busy.sendall(b"User-Agent: vm-ops-inflight\r\n\r\n")
    head, body = read_response(busy)
    if not head.startswith(b"HTTP/1.1 200") or b"\r\nconnection: close" not in head.lower():
        raise SystemExit("in flight: %r" % head)
    if busy.recv(4096) != b"":
        raise SystemExit("in flight: bytes after the response")
    idle.settimeout(15)
    x = idle.recv(4096)
    if x:
        raise SystemExit("idle: bytes instead of a close: %r" % x[:40])
    print("in-flight request answered (200, Connection: close, then EOF); idle keep-alive closed")
    return 0


def cmd_hold(http, ctl):
    s = socket.create_connection(("127.0.0.1", int(http)), timeout=30)
    s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n")
    time.sleep(0.5)
    t0 = time.monotonic()
    exit_msg(ctl)
    try:
        x = s.recv(4096)
    except OSError as e:
        x = b""
        print("closed with %s" % e)
    print("closed %.1f s after exit (%d bytes)" % (time.monotonic() - t0, len(x)))
    return 0


def cmd_manydrain(host, http, ctl, nidle, nbusy):
    idle = []
    for i in range(int(nidle)):
        c = socket.create_connection((host, int(http)), timeout=20)
        c.sendall(b"GET / HTTP/1.1\r\nHost: h\r\nUser-Agent: vm-smp-idle-%d\r\n\r\n" % i)
        head, _ = read_response(c)
        if not head.startswith(b"HTTP/1.1 200"):
            raise SystemExit("idle %d: %r" % (i, head[:40]))
        idle.append(c)
    busy = []
    for i in range(int(nbusy)):
        c = socket.create_connection((host, int(http)), timeout=20)
        c.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n")
        busy.append(c)
    time.sleep(0.5)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"exit 5 stats", (host, int(ctl)))
    time.sleep(1.5)  # every vCPU's drain has begun; the requests are in flight
    for i, c in enumerate(busy):
        c.sendall(b"User-Agent: vm-smp-inflight-%d\r\n\r\n" % i)
    for i, c in enumerate(busy):
        head, body = read_response(c)
        if not head.startswith(b"HTTP/1.1 200") or b"\r\nconnection: close" not in head.lower() \
                or len(body) == 0:
            raise SystemExit("in flight %d: %r" % (i, head))
        if c.recv(4096) != b"":
            raise SystemExit("in flight %d: bytes after the response" % i)
    for i, c in enumerate(idle):
        c.settimeout(15)
        x = c.recv(4096)
        if x:
            raise SystemExit("idle %d: bytes instead of a close: %r" % (i, x[:40]))
    print("%d in-flight requests answered (200, Connection: close, then EOF); %d idle "
          "keep-alive closed" % (len(busy), len(idle)))
    return 0


def cmd_manyhold(host, http, ctl, nbusy):
    busy = []
    for _ in range(int(nbusy)):
        c = socket.create_connection((host, int(http)), timeout=30)
        c.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n")
        busy.append(c)
    time.sleep(0.5)
    t0 = time.monotonic()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"exit 0 stats", (host, int(ctl)))
    got = 0
    for c in busy:
        try:
            got += len(c.recv(4096))
        except OSError:
            pass
    print("%d held: the last closed %.1f s after exit (%d bytes)" % (len(busy), time.monotonic() - t0, got))
    return 0


def cmd_json(path, *uas):
    import json
    recs = [json.loads(l) for l in open(path, "rb").read().decode().splitlines()]
    got = sorted(r["http_user_agent"] for r in recs)
    bad = [r for r in recs if r["status"] != 200 or r["request"] != "GET / HTTP/1.1" or
           r["remote_addr"] != "10.0.2.2"]
    print("%d JSON records: %s" % (len(recs), ", ".join(got)))
    return 0 if got == sorted(uas) and not bad else 1


def main():
    cmds = {"json": (cmd_json, -1), "sink": (cmd_sink, 3), "drain": (cmd_drain, 2), "hold": (cmd_hold, 2),
            "manydrain": (cmd_manydrain, 5), "manyhold": (cmd_manyhold, 4)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or \
            cmds[sys.argv[1]][1] not in (-1, len(sys.argv) - 2):
        print(__doc__, file=sys.stderr)
        return 2
    fn, _ = cmds[sys.argv[1]]
    return fn(*sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
