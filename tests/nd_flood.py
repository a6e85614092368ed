#!/usr/bin/env python3
"""nd_flood.py — COUNT bogus neighbour discovery messages to skiff, written
with an AF_PACKET socket on IFACE: half neighbour solicitations for skiff's
address (--target) from random sources in --net (a /64 of 2001:2::/48) with
random link-layer addresses, each of which a correct host learns as a STALE
neighbour (RFC 4861 7.2.3), and half unsolicited advertisements for random
targets it never asked for, which it must ignore (7.2.5).  The addresses in
--exclude (the real hosts) are never used.  Deterministic for a --seed.
Prints one summary line."""
import argparse
import random
import struct
import sys

import pktlib


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True, help="skiff's MAC")
    ap.add_argument("--target", required=True, help="skiff's IPv6 address")
    ap.add_argument("--net", default="2001:2::", help="the /64 sources come from")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--exclude", action="append", default=[])
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--deadline", type=float, default=60.0)
    ap.add_argument("--sync", metavar="ADDR", help="IPv4 UDP echo barrier (see pktlib.Barrier)")
    ap.add_argument("--sync-every", type=int, default=512)
    a = ap.parse_args()

    rng = random.Random(a.seed)
    target = pktlib.ip6_bytes(a.target)
    net = pktlib.ip6_bytes(a.net)[:8]
    excluded = {pktlib.ip6_bytes(x) for x in a.exclude} | {target}
    skiff_mac = pktlib.mac_bytes(a.dst_mac)
    group = pktlib.solicited_node(target)
    gmac = pktlib.mcast_mac(group)

    def rand_addr():
        while True:
            x = net + rng.randbytes(8)
            if x not in excluded and x[8:] != b"\0" * 8:
                return x

    frames = []
    for i in range(a.count):
        mac = bytes([(rng.randrange(256) & 0xFC) | 0x02]) + rng.randbytes(5)
        src = rand_addr()
        if i % 2 == 0:
            m = pktlib.nd_ns(src, group, target, mac)
            ip = pktlib.ipv6_header(src, group, 58, len(m), hop=255) + m
            frames.append(pktlib.eth(gmac, mac, pktlib.ETH_P_IPV6, ip))
        else:
            t = rand_addr()
            m = pktlib.nd_na(src, target, t, 0x60, mac)  # solicited, override
            ip = pktlib.ipv6_header(src, target, 58, len(m), hop=255) + m
            frames.append(pktlib.eth(skiff_mac, mac, pktlib.ETH_P_IPV6, ip))

    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.sync) if a.sync else None
    sent, retries, errors, secs, timed_out = pktlib.send_frames(
        s, frames, rate=a.rate, deadline=a.deadline, barrier=barrier, every=a.sync_every)
    sync = (f", {barrier.n} barriers ({barrier.timeouts} unanswered)" if barrier else "")
    print(f"nd_flood: sent {sent}/{a.count} NS/NA on {a.iface} in {secs:.2f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} ENOBUFS retries, {errors} errors{sync}"
          + (", DEADLINE HIT" if timed_out else ""))
    if barrier and barrier.timeouts:
        return 3
    return 0 if sent == a.count and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
