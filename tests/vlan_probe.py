#!/usr/bin/env python3
"""vlan_probe.py — send one ICMP echo request inside an 802.1Q tag (VID 5)
to the stack's MAC and report whether it answers.  A host configured
untagged must drop tagged frames (skiff counts them in eth.vlan), whatever
the device: on AF_PACKET the kernel moves the tag into the packet metadata,
and the device has to look there.  Exit 0 if no reply came within 1 s, 1 if
the stack answered (the tag was ignored).

An IPv6 --dst-ip (issue 18) makes it an ICMPv6 echo request; --control
first sends the same request untagged, which must be answered (so a probe
nobody could answer cannot pass): exit 1 if it was not."""
import argparse
import socket
import struct
import sys
import time

import pktlib


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src-ip", default="198.18.0.1")
    ap.add_argument("--dst-ip", default="198.18.0.2")
    ap.add_argument("--vid", type=int, default=5)
    ap.add_argument("--control", action="store_true",
                    help="first the same request untagged: it must be answered")
    a = ap.parse_args()
    v6 = ":" in a.dst_ip
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    rx.bind((a.iface, 0))
    rx.settimeout(0.2)
    marker = b"skt-vlan-probe"
    if v6:
        src, dst = pktlib.ip6_bytes(a.src_ip), pktlib.ip6_bytes(a.dst_ip)
        icmp = pktlib.icmp6(src, dst, 128, 0, struct.pack("!HH", 0x5A5A, 1) + marker)
        l3, etype = pktlib.ipv6_header(src, dst, 58, len(icmp)) + icmp, pktlib.ETH_P_IPV6
    else:
        src, dst = pktlib.ip_bytes(a.src_ip), pktlib.ip_bytes(a.dst_ip)
        icmp = pktlib.icmp_echo(0x5A5A, 1, marker)
        l3, etype = pktlib.ipv4_header(src, dst, 1, len(icmp)) + icmp, pktlib.ETH_P_IP
    dmac, smac = pktlib.mac_bytes(a.dst_mac), pktlib.iface_mac(a.iface)
    tx = pktlib.open_sender(a.iface)

    def answered():
        """(True, how) if an echo reply with our marker came within 1 s."""
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            try:
                f, addr = rx.recvfrom(4096)
            except socket.timeout:
                continue
            if addr[2] == socket.PACKET_OUTGOING or marker not in f:
                continue
            tagged = f[12:14] == b"\x81\x00"
            et, ip = (f[16:18], f[18:]) if tagged else (f[12:14], f[14:])
            how = "tagged" if tagged else "untagged"
            # An echo reply carrying our marker: IPv4 ICMP type 0, or ICMPv6 type 129.
            if et == b"\x08\x00" and len(ip) > 20 and ip[9] == 1 and ip[(ip[0] & 15) * 4] == 0:
                return True, how
            if et == b"\x86\xdd" and len(ip) > 40 and ip[6] == 58 and ip[40] == 129:
                return True, how
        return False, ""

    if a.control:
        tx.send(pktlib.eth(dmac, smac, etype, l3))
        ok, _ = answered()
        if not ok:
            print("vlan_probe: the untagged control request got no reply: the probe proves nothing")
            return 1
    tx.send(pktlib.eth(dmac, smac, pktlib.ETH_P_8021Q, struct.pack("!HH", a.vid, etype) + l3))
    ok, how = answered()
    if ok:
        print(f"vlan_probe: echo request tagged VID {a.vid} was answered ({how} reply)")
        return 1
    print(f"vlan_probe: echo request tagged VID {a.vid}: no reply (dropped)"
          + ("; the untagged one was answered" if a.control else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
