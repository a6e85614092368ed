#!/usr/bin/env python3
"""malformed6.py — COUNT malformed IPv6 frames to skiff's MAC and address,
written with an AF_PACKET socket on IFACE (the Linux side of the link).

Each kind is a packet a correct host must drop, and skiff counts it under a
reason of its own (tests/ipv6.sh checks which): a header cut short or a
payload length past the frame; a version other than 6; fragments (first
and later: skiff reassembles nothing); routing type 0; hop-by-hop after
another header; an option whose type says drop; more extension headers than
skiff walks; an extension header running past the end; a group as source;
ICMPv6 shorter than its header or with a bad checksum; neighbour discovery
forwarded (hop limit 64), with a zero-length option or a bad code.

The kinds are mixed in a fixed order from --seed.  Prints one summary line
with the count of each kind ("kinds: NAME=N ...")."""
import argparse
import collections
import random
import struct
import sys

import pktlib
from pktlib import ETH_P_IPV6, ipv6_header


def build(a):
    rng = random.Random(a.seed)
    src, dst = pktlib.ip6_bytes(a.src_ip), pktlib.ip6_bytes(a.dst_ip)
    dmac, smac = pktlib.mac_bytes(a.dst_mac), pktlib.mac_bytes(a.src_mac)

    def echo():
        data = rng.randbytes(rng.randint(0, 64))
        return pktlib.icmp6(src, dst, 128, 0, struct.pack("!HH", rng.randrange(65536), 1) + data)

    def ip6(nxt, payload, **kw):
        return ipv6_header(src, dst, nxt, len(payload), **kw) + payload

    def padn_hdr(nxt):  # an 8-byte options header holding PadN
        return bytes([nxt, 0, 1, 4, 0, 0, 0, 0])

    def ip6_trunc():
        return ipv6_header(src, dst, 58, 100)[:rng.randint(8, 39)]

    def ip6_len_long():
        m = echo()
        return ipv6_header(src, dst, 58, len(m), plen=len(m) + rng.randint(1, 500)) + m

    def ip6_version():
        m = echo()
        return ipv6_header(src, dst, 58, len(m), version=rng.choice([0, 4, 5, 7, 15])) + m

    def ip6_frag():
        off = rng.randint(1, 100) * 8
        fh = struct.pack("!BBHI", 58, 0, off | rng.randint(0, 1), rng.randrange(1 << 32))
        return ip6(44, fh + rng.randbytes(16))

    def ip6_frag_first():
        fh = struct.pack("!BBHI", 58, 0, 1, rng.randrange(1 << 32))  # offset 0, M=1
        return ip6(44, fh + echo())

    def ip6_rh0():
        left = rng.randint(0, 2)
        rh = bytes([58, 2 * left, 0, left, 0, 0, 0, 0]) + b"\0" * 16 * left
        return ip6(43, rh + echo())

    def ip6_hbh_late():
        return ip6(60, padn_hdr(0) + padn_hdr(58) + echo())

    def ip6_opt_drop():
        t = rng.choice([0x42, 0x7f, 0x82, 0xc3])  # 01: discard; 10/11: discard + error
        return ip6(60, bytes([58, 0, t, 4, 0, 0, 0, 0]) + echo())

    def ip6_ext_limit():
        n = rng.randint(9, 20)
        hdrs = b"".join(padn_hdr(60) for _ in range(n - 1)) + padn_hdr(58)
        return ip6(60, hdrs + echo())

    def ip6_ext_cut():
        return ip6(60, bytes([58, rng.randint(8, 60), 1, 4, 0, 0, 0, 0]) + rng.randbytes(8))

    def ip6_mcast_src():
        m = echo()
        return ipv6_header(bytes.fromhex("ff02" + "00" * 13 + "01"), dst, 58, len(m)) + m

    def icmp6_trunc():
        return ip6(58, rng.randbytes(rng.randint(0, 7)))

    def icmp6_csum():
        m = bytearray(echo())
        m[2] ^= 1 << rng.randrange(8)
        return ip6(58, bytes(m))

    def nd_hop_limit():
        return ip6(58, pktlib.nd_ns(src, dst, dst, smac), hop=rng.choice([1, 64, 254]))

    def nd_zero_opt():
        return ip6(58, pktlib.nd_ns(src, dst, dst, None, opts=b"\x01\x00" + b"\0" * 6), hop=255)

    def nd_code():
        return ip6(58, pktlib.nd_ns(src, dst, dst, smac, code=rng.randint(1, 255)), hop=255)

    kinds = [ip6_trunc, ip6_len_long, ip6_version, ip6_frag, ip6_frag_first, ip6_rh0,
             ip6_hbh_late, ip6_opt_drop, ip6_ext_limit, ip6_ext_cut, ip6_mcast_src, icmp6_trunc,
             icmp6_csum, nd_hop_limit, nd_zero_opt, nd_code]
    frames, counts = [], collections.Counter()
    for _ in range(a.count):
        k = rng.choice(kinds)
        frames.append(pktlib.eth(dmac, smac, ETH_P_IPV6, k())[:1514])
        counts[k.__name__] += 1
    return frames, counts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True, help="skiff's MAC")
    ap.add_argument("--src-mac", help="default: IFACE's own MAC")
    ap.add_argument("--src-ip", default="2001:2::1")
    ap.add_argument("--dst-ip", default="2001:2::2")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=6)
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--deadline", type=float, default=60.0)
    ap.add_argument("--sync", metavar="ADDR", help="IPv4 UDP echo barrier (see pktlib.Barrier)")
    ap.add_argument("--sync-every", type=int, default=512)
    a = ap.parse_args()
    if not a.src_mac:
        a.src_mac = ":".join(f"{b:02x}" for b in pktlib.iface_mac(a.iface))
    frames, counts = build(a)
    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.sync) if a.sync else None
    sent, retries, errors, secs, timed_out = pktlib.send_frames(
        s, frames, rate=a.rate, deadline=a.deadline, barrier=barrier, every=a.sync_every)
    sync = (f", {barrier.n} barriers ({barrier.timeouts} unanswered)" if barrier else "")
    kinds = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    print(f"malformed6: sent {sent}/{a.count} frames to {a.dst_mac} on {a.iface} in {secs:.2f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} ENOBUFS retries, {errors} errors{sync}"
          + (", DEADLINE HIT" if timed_out else "") + f"; kinds: {kinds}")
    if barrier and barrier.timeouts:
        return 3
    return 0 if sent == a.count and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
