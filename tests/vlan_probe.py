#!/usr/bin/env python3
"""vlan_probe.py — send one ICMP echo request inside an 802.1Q tag (VID 5)
to the stack's MAC and report whether it answers.  A host configured
untagged must drop tagged frames (skiff counts them in eth.vlan), whatever
the device: on AF_PACKET the kernel moves the tag into the packet metadata,
and the device has to look there.  Exit 0 if no reply came within 1 s, 1 if
the stack answered (the tag was ignored)."""
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
    a = ap.parse_args()
    src, dst = pktlib.ip_bytes(a.src_ip), pktlib.ip_bytes(a.dst_ip)
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
    rx.bind((a.iface, 0))
    rx.settimeout(0.2)
    marker = b"skt-vlan-probe"
    icmp = pktlib.icmp_echo(0x5A5A, 1, marker)
    l3 = pktlib.ipv4_header(src, dst, 1, len(icmp)) + icmp
    frame = pktlib.eth(pktlib.mac_bytes(a.dst_mac), pktlib.iface_mac(a.iface), pktlib.ETH_P_8021Q,
                       struct.pack("!HH", a.vid, pktlib.ETH_P_IP) + l3)
    pktlib.open_sender(a.iface).send(frame)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        try:
            f, addr = rx.recvfrom(4096)
        except socket.timeout:
            continue
        if addr[2] == socket.PACKET_OUTGOING:
            continue
        # An echo reply (IPv4, ICMP type 0) carrying our marker, tagged or not.
        if marker in f and b"\x00\x00" in f and f[12:14] in (b"\x08\x00", b"\x81\x00"):
            ip = f[14:] if f[12:14] == b"\x08\x00" else f[18:]
            if len(ip) > 20 and ip[9] == 1 and ip[(ip[0] & 15) * 4] == 0:
                how = "tagged" if f[12:14] == b"\x81\x00" else "untagged"
                print(f"vlan_probe: echo request tagged VID {a.vid} was answered ({how} reply)")
                return 1
    print(f"vlan_probe: echo request tagged VID {a.vid}: no reply (dropped)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
