#!/usr/bin/env python3
"""malformed.py — COUNT malformed frames to skiff's MAC, written with an
AF_PACKET socket on IFACE (the Linux side of the link).

Every frame is built so that a correct stack must drop it, whatever it does
with an 802.1Q tag (skip it, or have the kernel strip it): truncated ARP, IP,
UDP, ICMP and TCP; bad IP/UDP/ICMP/TCP checksums; IP total length lying long
and short or claiming 65535; IHL < 5 or beyond the bytes present; IP version
other than 4; never-completing fragments; unknown EtherTypes; bad TCP data
offsets; VLAN and double-VLAN tags in front of malformed
packets; random bytes.  (Frames shorter than the 14-byte Ethernet header
cannot be sent through AF_PACKET on an Ethernet device.)

The kinds are mixed in a fixed order from --seed, so runs are repeatable.
Prints one summary line with the count of each kind."""
import argparse
import collections
import random
import struct
import sys

import pktlib
from pktlib import ETH_P_ARP, ETH_P_IP, csum, ipv4_header, wrong_csum


def build(a):
    rng = random.Random(a.seed)
    src_ip, dst_ip = pktlib.ip_bytes(a.src_ip), pktlib.ip_bytes(a.dst_ip)
    dmac, smac = pktlib.mac_bytes(a.dst_mac), pktlib.mac_bytes(a.src_mac)

    def rb(lo, hi):
        return rng.randbytes(rng.randint(lo, hi))

    def ip(proto, l4, **kw):
        return ipv4_header(src_ip, dst_ip, proto, len(l4), ident=rng.randrange(65536), **kw) + l4

    def good_udp(n=None):
        data = rb(0, 64) if n is None else rng.randbytes(n)
        return pktlib.udp(src_ip, dst_ip, rng.randrange(1024, 65536), 7, data)

    def good_icmp():
        return pktlib.icmp_echo(rng.randrange(65536), rng.randrange(65536), rb(0, 64))

    def good_l4():
        k = rng.randrange(2)
        return (17, good_udp()) if k == 0 else (1, good_icmp())

    # Each kind returns (ethertype, payload after the EtherType).
    def arp_trunc():
        return ETH_P_ARP, struct.pack("!HHBBH", 1, ETH_P_IP, 6, 4, 1)[:rng.randrange(8)] \
            if rng.randrange(2) else rb(0, 27)

    def arp_bad():
        htype, ptype, hlen, plen, op = 1, ETH_P_IP, 6, 4, 1
        k = rng.randrange(5)
        if k == 0:
            htype = rng.choice([0, 6, 0xFFFF])
        elif k == 1:
            ptype = rng.choice([0, 0x86DD, 0x0806])
        elif k == 2:
            hlen = rng.choice([0, 4, 8])
        elif k == 3:
            plen = rng.choice([0, 6, 16])
        else:
            op = rng.choice([0, 3, 4, 0xFFFF])
        body = struct.pack("!HHBBH", htype, ptype, hlen, plen, op) + smac + src_ip + b"\0" * 6 + dst_ip
        return ETH_P_ARP, body

    def ip_trunc():
        hdr = ipv4_header(src_ip, dst_ip, 17, 8)
        return ETH_P_IP, hdr[:rng.randrange(20)] if rng.randrange(2) else rb(0, 19)

    def ip_version():
        proto, l4 = good_l4()
        v = rng.choice([0, 1, 2, 3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
        return ETH_P_IP, ip(proto, l4, version=v)

    def ip_ihl_small():
        proto, l4 = good_l4()
        return ETH_P_IP, ip(proto, l4, ihl=rng.randrange(5))

    def ip_ihl_long():
        # IHL claims more header than the frame holds.
        ihl = rng.randint(6, 15)
        present = rng.randrange(0, (ihl - 5) * 4)
        h = ipv4_header(src_ip, dst_ip, 17, 0, ihl=ihl, total_len=ihl * 4,
                        options=b"\x01" * present)
        return ETH_P_IP, h

    def ip_csum():
        proto, l4 = good_l4()
        good = csum(ipv4_header(src_ip, dst_ip, proto, len(l4)))
        return ETH_P_IP, ipv4_header(src_ip, dst_ip, proto, len(l4),
                                     csum_value=wrong_csum(rng, good)) + l4

    def ip_len_long():
        proto, l4 = good_l4()
        extra = rng.choice([1, 2, 8, 100, 1000, 65535 - 20 - len(l4)])
        return ETH_P_IP, ip(proto, l4, total_len=20 + len(l4) + extra)

    def ip_len_short():
        proto, l4 = good_l4()
        return ETH_P_IP, ip(proto, l4, total_len=rng.randrange(20))

    def ip_oversize():
        proto, l4 = good_l4()
        return ETH_P_IP, ip(proto, l4, total_len=65535)

    def ip_frag():
        # Fragments of datagrams whose other pieces never come: a first
        # piece (MF, offset 0), a middle or a last one (offset > 0).
        l4 = good_udp(rng.randrange(8, 64) * 8)
        if rng.randrange(2):
            ff = 0x2000
        else:
            ff = (0x2000 if rng.randrange(2) else 0) | rng.randint(1, 0x1FFF)
        return ETH_P_IP, ip(17, l4, flags_frag=ff)

    def ip_opts_bad():
        # Options whose own length fields lie (0, 1, or past the header), in
        # front of a UDP datagram with a wrong checksum: a stack that skips
        # options without parsing them still has to drop it.
        bad = rng.choice([b"\x07\x00\x00\x00", b"\x44\x01\x00\x00", b"\x83\x28\x00\x00",
                          b"\x94\x00\x00\x00"])
        u = good_udp()
        good = struct.unpack("!H", u[6:8])[0]
        u = u[:6] + struct.pack("!H", wrong_csum(rng, good)) + u[8:]
        return ETH_P_IP, ip(17, u, ihl=6, options=bad)

    def udp_trunc():
        return ETH_P_IP, ip(17, rb(0, 7))

    def udp_len_long():
        u = good_udp()
        ln = len(u) + rng.choice([1, 2, 7, 100, 65535 - len(u)])
        return ETH_P_IP, ip(17, u[:4] + struct.pack("!H", ln & 0xFFFF) + u[6:])

    def udp_len_short():
        u = good_udp()
        return ETH_P_IP, ip(17, u[:4] + struct.pack("!H", rng.randrange(8)) + u[6:])

    def udp_csum():
        u = good_udp()
        good = struct.unpack("!H", u[6:8])[0]
        return ETH_P_IP, ip(17, u[:6] + struct.pack("!H", wrong_csum(rng, good)) + u[8:])

    def icmp_trunc():
        m = good_icmp()
        return ETH_P_IP, ip(1, m[:rng.randrange(8)])

    def icmp_csum():
        m = good_icmp()
        good = struct.unpack("!H", m[2:4])[0]
        return ETH_P_IP, ip(1, m[:2] + struct.pack("!H", wrong_csum(rng, good)) + m[4:])

    def tcp_trunc():
        t = pktlib.tcp(src_ip, dst_ip, rng.randrange(1024, 65536), 7)
        return ETH_P_IP, ip(6, t[:rng.randrange(20)])

    def tcp_doff_small():
        t = pktlib.tcp(src_ip, dst_ip, rng.randrange(1024, 65536), 7, doff=rng.randrange(5))
        return ETH_P_IP, ip(6, t)

    def tcp_doff_long():
        extra = rng.randrange(0, 40, 4)
        t = pktlib.tcp(src_ip, dst_ip, rng.randrange(1024, 65536), 7,
                       doff=rng.randint(6 + extra // 4, 15), options=b"\x01" * extra)
        return ETH_P_IP, ip(6, t)

    def tcp_csum():
        t = pktlib.tcp(src_ip, dst_ip, rng.randrange(1024, 65536), 7, data=rb(0, 32))
        good = struct.unpack("!H", t[16:18])[0]
        return ETH_P_IP, ip(6, t[:16] + struct.pack("!H", wrong_csum(rng, good)) + t[18:])

    def tcp_opts_bad():
        # Right checksum, options with lying lengths (0, 1, past the header).
        opt = rng.choice([b"\x02\x00\x05\xb4", b"\x03\x01\x07\x00", b"\x08\x20\x00\x00",
                          b"\x02\x04\x05\xb4\x08\x0a\x00\x00", b"\x05\x03\x00\x00"])
        opt += b"\0" * (-len(opt) % 4)
        t = pktlib.tcp(src_ip, dst_ip, rng.randrange(1024, 65536), 7, doff=5 + len(opt) // 4,
                       options=opt)
        return ETH_P_IP, ip(6, t)

    def unknown_type():
        et = rng.choice([0x86DD, 0x88B5, 0x88CC, 0x8863, 0x0600, 0x9000, rng.randrange(0x0600, 0x10000)])
        if et in (ETH_P_IP, ETH_P_ARP, pktlib.ETH_P_8021Q, pktlib.ETH_P_8021AD):
            et = 0x88B5
        return et, rb(0, 200)

    def random_bytes():
        body = rb(0, 1500)
        et = rng.choice([ETH_P_IP, ETH_P_IP, ETH_P_ARP])
        if et == ETH_P_IP and body:
            # A random IPv4 header: force the checksum wrong so it cannot
            # pass by chance (1 in 65536 would).
            b = bytearray(body)
            if len(b) >= 20 and csum(bytes(b[:20])) == 0:
                b[10] ^= 0xFF
            body = bytes(b)
        if et == ETH_P_ARP and len(body) >= 8 and body[:6] == struct.pack("!HHBB", 1, ETH_P_IP, 6, 4):
            body = b"\0" + body[1:]
        return et, body

    inner = [arp_trunc, ip_trunc, ip_version, ip_ihl_small, ip_csum, ip_len_long,
             ip_len_short, udp_csum, icmp_csum, tcp_trunc, udp_trunc]

    def vlan():
        et, body = rng.choice(inner)()
        tci = rng.randrange(1, 4095)
        return pktlib.ETH_P_8021Q, struct.pack("!HH", tci, et) + body

    def vlan2():
        # Two tags: 802.1ad outer + 802.1Q inner, or two 802.1Q tags.
        et, body = rng.choice(inner)()
        outer = rng.choice([pktlib.ETH_P_8021AD, pktlib.ETH_P_8021Q])
        return outer, struct.pack("!HHHH", rng.randrange(1, 4095), pktlib.ETH_P_8021Q,
                                  rng.randrange(1, 4095), et) + body

    kinds = [arp_trunc, arp_bad, ip_trunc, ip_version, ip_ihl_small, ip_ihl_long, ip_csum,
             ip_len_long, ip_len_short, ip_oversize, ip_frag, ip_opts_bad, udp_trunc,
             udp_len_long, udp_len_short, udp_csum, icmp_trunc, icmp_csum, tcp_trunc,
             tcp_doff_small, tcp_doff_long, tcp_csum, unknown_type, random_bytes, vlan, vlan2]
    # Not in the default mix: a SYN with lying option lengths but a right
    # checksum may fairly be answered (Linux sends an RST), so it is not a
    # must-drop frame.  Ask for it with --only tcp_opts_bad.
    extra = [tcp_opts_bad]
    if a.only:
        wanted = a.only.split(",")
        kinds = [k for k in kinds + extra if k.__name__ in wanted]
        if len(kinds) != len(wanted):
            raise SystemExit(f"malformed: unknown kind in --only {a.only}")
    frames, counts = [], collections.Counter()
    for i in range(a.count):
        k = kinds[i % len(kinds)] if a.round_robin else rng.choice(kinds)
        et, body = k()
        f = pktlib.eth(dmac, smac, et, body)[:1514]
        frames.append(f)
        counts[k.__name__] += 1
    return frames, counts


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True, help="skiff's MAC")
    ap.add_argument("--src-mac", help="default: IFACE's own MAC")
    ap.add_argument("--src-ip", default="198.18.0.1")
    ap.add_argument("--dst-ip", default="198.18.0.2")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--only", help="comma-separated kinds to send (default: all)")
    ap.add_argument("--round-robin", action="store_true", help="cycle kinds in order")
    ap.add_argument("--rate", type=float, default=0.0, help="frames per second cap (0: none)")
    ap.add_argument("--deadline", type=float, default=60.0)
    ap.add_argument("--sync", metavar="ADDR",
                    help="after every --sync-every frames, wait for a UDP echo from ADDR:7 "
                         "(flow control: the stack has caught up)")
    ap.add_argument("--sync-every", type=int, default=512)
    ap.add_argument("--list", action="store_true", help="print the kinds sent and exit")
    a = ap.parse_args()
    if not a.src_mac:
        a.src_mac = ":".join(f"{b:02x}" for b in pktlib.iface_mac(a.iface))

    frames, counts = build(a)
    if a.list:
        for k, v in sorted(counts.items()):
            print(k, v)
        return 0
    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.sync) if a.sync else None
    sent, retries, errors, secs, timed_out = pktlib.send_frames(
        s, frames, rate=a.rate, deadline=a.deadline, barrier=barrier, every=a.sync_every)
    sync = (f", {barrier.n} barriers ({barrier.timeouts} unanswered)" if barrier else "")
    kinds = " ".join(f"{k}={v}" for k, v in sorted(counts.items()))
    print(f"malformed: sent {sent}/{a.count} frames to {a.dst_mac} on {a.iface} in {secs:.2f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} ENOBUFS retries, {errors} errors{sync}"
          + (", DEADLINE HIT" if timed_out else "") + f"; kinds: {kinds}")
    if barrier and barrier.timeouts:
        return 3  # the stack stopped answering UDP echo during the flood
    return 0 if sent == a.count and not errors else 1


if __name__ == "__main__":
    sys.exit(main())
