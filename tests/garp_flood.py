#!/usr/bin/env python3
"""garp_flood.py — COUNT gratuitous ARPs (broadcast requests whose sender and
target address are the same), each from a random sender IPv4 in
198.18.0.0/15 and a random unicast, locally administered MAC, written with an
AF_PACKET socket on IFACE.  The addresses in --exclude (the real hosts of the
test) are never used, so the flood cannot poison their cache entries.
Deterministic for a given --seed.  Prints one summary line."""
import argparse
import random
import struct
import sys

import pktlib

NET = 0xC6120000  # 198.18.0.0/15
NET_SIZE = 1 << 17


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exclude", action="append", default=[],
                    help="an IPv4 address never to use as sender (repeatable)")
    ap.add_argument("--reply", action="store_true",
                    help="send gratuitous ARP replies (op 2) instead of requests")
    ap.add_argument("--rate", type=float, default=0.0, help="frames per second cap (0: none)")
    ap.add_argument("--deadline", type=float, default=60.0)
    ap.add_argument("--sync", metavar="ADDR",
                    help="after every --sync-every frames, wait for a UDP echo from ADDR:7 "
                         "(flow control: the stack has caught up)")
    ap.add_argument("--sync-every", type=int, default=512)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    excluded = {struct.unpack("!I", pktlib.ip_bytes(x))[0] for x in a.exclude}
    # Network and broadcast addresses of the /24s around our hosts and of the /15.
    excluded |= {NET, NET + 255, NET + NET_SIZE - 1}
    op = 2 if a.reply else 1
    head = struct.pack("!HHBBH", 1, pktlib.ETH_P_IP, 6, 4, op)
    frames = []
    for _ in range(a.count):
        while True:
            ip = NET + rng.randrange(NET_SIZE)
            if ip not in excluded:
                break
        mac = bytes([(rng.randrange(256) & 0xFC) | 0x02]) + rng.randbytes(5)
        ipb = struct.pack("!I", ip)
        tha = pktlib.BROADCAST if a.reply else b"\0" * 6
        arp = head + mac + ipb + tha + ipb
        frames.append(pktlib.eth(pktlib.BROADCAST, mac, pktlib.ETH_P_ARP, arp))

    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.sync) if a.sync else None
    sent, retries, errors, secs, timed_out = pktlib.send_frames(
        s, frames, rate=a.rate, deadline=a.deadline, barrier=barrier, every=a.sync_every)
    sync = (f", {barrier.n} barriers ({barrier.timeouts} unanswered)" if barrier else "")
    print(f"garp_flood: sent {sent}/{a.count} gratuitous ARPs on {a.iface} in {secs:.2f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} ENOBUFS retries, {errors} errors{sync}"
          + (", DEADLINE HIT" if timed_out else ""))
    if barrier and barrier.timeouts:
        return 3  # the stack stopped answering UDP echo during the flood
    return 0 if sent == a.count and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
