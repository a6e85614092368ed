#!/usr/bin/env python3
"""tcp_impair.py — a netem-like impairing relay between two interfaces.

Replaced by `skiff impair` (src/cmd/impair.c), which the tests run; kept
only as the baseline of `make bench-tcp-relay` (SKT_RELAY=py in
tests/lib.sh), which compares the two relays' CPU.

The test kernel has no sch_netem (CONFIG_NET_SCH_NETEM is not set), so the
impairments of issue 3's echo tests are applied here instead: every frame
read from one interface (AF_PACKET) is written to the other, after

  --loss P       drop it with probability P (percent)
  --delay MS     hold it MS milliseconds
  --reorder P    send it at once, skipping the delay (netem's "reorder":
                 those frames overtake the delayed ones)
  --duplicate P  send it twice
  --corrupt P    flip one random bit after the Ethernet header (the IPv4 or
                 TCP checksum must catch it)

applied to each direction named by --dir (a2b, b2a or both).  Runs until
SIGTERM/SIGINT, then prints one line of counters.  Prints "relay: ready"
when both sockets are open."""
import argparse
import heapq
import random
import select
import signal
import socket
import sys
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_IGNORE_OUTGOING = 23
PACKET_OUTGOING = 4


def open_sock(iface: str) -> socket.socket:
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 8 << 20)
    try:  # our own transmissions must not come back as input
        s.setsockopt(SOL_PACKET, PACKET_IGNORE_OUTGOING, 1)
    except OSError:
        pass
    s.setblocking(False)
    return s


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="interface A")
    ap.add_argument("--b", required=True, help="interface B")
    ap.add_argument("--dir", choices=["a2b", "b2a", "both"], default="both")
    ap.add_argument("--loss", type=float, default=0.0)
    ap.add_argument("--delay", type=float, default=0.0)
    ap.add_argument("--reorder", type=float, default=0.0)
    ap.add_argument("--duplicate", type=float, default=0.0)
    ap.add_argument("--corrupt", type=float, default=0.0)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    sa, sb = open_sock(a.a), open_sock(a.b)
    # fd -> (output socket, impaired?)
    route = {sa.fileno(): (sb, a.dir in ("a2b", "both"), "a2b"),
             sb.fileno(): (sa, a.dir in ("b2a", "both"), "b2a")}
    socks = {sa.fileno(): sa, sb.fileno(): sb}
    loss, reorder = a.loss / 100, a.reorder / 100
    dup, corrupt = a.duplicate / 100, a.corrupt / 100
    delay = a.delay / 1000
    c = {k: 0 for k in ("a2b", "b2a", "lost", "dup", "corrupt", "reordered", "delayed",
                        "send_err")}
    heap = []  # (due, seq, out socket, frame)
    seq = 0
    stop = [False]

    def on_sig(_s, _f):
        stop[0] = True

    signal.signal(signal.SIGTERM, on_sig)
    signal.signal(signal.SIGINT, on_sig)
    p = select.poll()
    for fd in socks:
        p.register(fd, select.POLLIN)
    print("relay: ready", flush=True)
    now = time.monotonic

    def send(out, frame):
        try:
            out.send(frame)
        except OSError:
            c["send_err"] += 1

    while not stop[0]:
        timeout = None
        if heap:
            timeout = max(0.0, (heap[0][0] - now()) * 1000)
        try:
            ready = p.poll(timeout if timeout is not None else 200)
        except InterruptedError:
            continue
        for fd, _ev in ready:
            s = socks[fd]
            out, impaired, name = route[fd]
            for _ in range(256):
                try:
                    frame, addr = s.recvfrom(65536)
                except BlockingIOError:
                    break
                except OSError:
                    break
                if addr[2] == PACKET_OUTGOING:
                    continue
                c[name] += 1
                if not impaired:
                    send(out, frame)
                    continue
                if loss and rng.random() < loss:
                    c["lost"] += 1
                    continue
                copies = 1
                if dup and rng.random() < dup:
                    copies = 2
                    c["dup"] += 1
                if corrupt and rng.random() < corrupt and len(frame) > 14:
                    i = rng.randrange(14, len(frame))
                    b = bytearray(frame)
                    b[i] ^= 1 << rng.randrange(8)
                    frame = bytes(b)
                    c["corrupt"] += 1
                if delay and not (reorder and rng.random() < reorder):
                    c["delayed"] += 1
                    for _k in range(copies):
                        seq += 1
                        heapq.heappush(heap, (now() + delay, seq, out, frame))
                else:
                    if delay:
                        c["reordered"] += 1
                    for _k in range(copies):
                        send(out, frame)
        t = now()
        while heap and heap[0][0] <= t:
            _due, _seq, out, frame = heapq.heappop(heap)
            send(out, frame)
    print("relay: " + " ".join(f"{k}={v}" for k, v in c.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
