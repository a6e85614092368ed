#!/usr/bin/env python3
"""udp_echo.py — send COUNT UDP datagrams of random sizes (1..MAX bytes) to an
echo server and check every one comes back byte for byte.

At most WINDOW datagrams are outstanding.  A datagram of 4 bytes or more
starts with its sequence number (big-endian u32), the rest is random; a
shorter one is matched by its exact bytes among the outstanding ones.
Nothing is retransmitted: a datagram that does not come back is lost, and
the run stops when no reply arrives for TIMEOUT seconds.

Prints one summary line; exit 0 only if all came back intact."""
import argparse
import random
import select
import socket
import struct
import sys
import time


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dst", default="198.18.0.2")
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--min-size", type=int, default=1)
    ap.add_argument("--max-size", type=int, default=1472)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--timeout", type=float, default=3.0,
                    help="give up after this long without any reply")
    a = ap.parse_args()

    rng = random.Random(a.seed)
    payloads = []
    for seq in range(a.count):
        n = rng.randint(a.min_size, a.max_size)
        body = rng.randbytes(n)
        if n >= 4:
            body = struct.pack("!I", seq) + body[4:]
        payloads.append(body)

    s = socket.socket(socket.AF_INET6 if ":" in a.dst else socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    s.connect((a.dst, a.port))
    s.setblocking(False)

    outstanding = {}       # seq -> payload
    short = {}             # bytes -> [seq, ...] for datagrams under 4 bytes
    ok = corrupt = unexpected = send_err = 0
    nxt = 0
    t0 = time.monotonic()
    last_progress = t0
    first_bad = None
    poller = select.poll()
    poller.register(s, select.POLLIN)

    while nxt < a.count or outstanding:
        while nxt < a.count and len(outstanding) < a.window:
            p = payloads[nxt]
            try:
                s.send(p)
            except BlockingIOError:
                break
            except OSError as e:  # e.g. ECONNREFUSED from an ICMP error
                send_err += 1
                if first_bad is None:
                    first_bad = f"send #{nxt}: {e}"
                nxt += 1
                continue
            outstanding[nxt] = p
            if len(p) < 4:
                short.setdefault(p, []).append(nxt)
            nxt += 1
        if not poller.poll(50):
            if time.monotonic() - last_progress > a.timeout:
                break
            continue
        while True:
            try:
                d = s.recv(65536)
            except BlockingIOError:
                break
            except OSError as e:
                send_err += 1
                if first_bad is None:
                    first_bad = f"recv: {e}"
                break
            last_progress = time.monotonic()
            if len(d) < 4:
                seqs = short.get(d)
                if seqs:
                    seq = seqs.pop(0)
                    if not seqs:
                        del short[d]
                    del outstanding[seq]
                    ok += 1
                else:
                    unexpected += 1
                    if first_bad is None:
                        first_bad = f"unmatched {len(d)}-byte reply {d.hex()}"
                continue
            seq = struct.unpack("!I", d[:4])[0]
            want = outstanding.pop(seq, None)
            if want is None:
                unexpected += 1
                if first_bad is None:
                    first_bad = f"reply with unknown/duplicate seq {seq} ({len(d)} bytes)"
            elif want == d:
                ok += 1
            else:
                corrupt += 1
                if first_bad is None:
                    diff = next((i for i in range(min(len(d), len(want))) if d[i] != want[i]),
                                min(len(d), len(want)))
                    first_bad = (f"seq {seq}: sent {len(want)} bytes, got {len(d)}, "
                                 f"first difference at byte {diff}")
    elapsed = time.monotonic() - t0
    lost = len(outstanding) + (a.count - nxt)
    good = ok == a.count and not corrupt and not unexpected and not send_err
    print(f"udp_echo: sent {nxt}/{a.count}, intact {ok}, lost {lost}, corrupt {corrupt}, "
          f"unexpected {unexpected}, errors {send_err}, {elapsed:.2f} s"
          + (f"; first problem: {first_bad}" if first_bad else "")
          + (f"; first lost seq {min(outstanding)}" if outstanding else ""))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
