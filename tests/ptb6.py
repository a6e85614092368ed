#!/usr/bin/env python3
"""ptb6.py — path MTU from ICMPv6 Packet Too Big, seen from the client
(tests/ipv6.sh run 8).

One TCP connection to HOST:7 (skiff echo, over IPv6, behind a Linux router
whose link towards us has a smaller IPv6 MTU), three echo rounds on it:

  A  BYTES of seeded random data there and back: skiff's full-size echoes
     are too big for the router, which answers with Packet Too Big; the
     data only comes back if skiff lowers the connection's MSS and resends.
  B  after two forged Packet Too Big messages that must be ignored — MTU
     1000 (under IPv6's 1280) for a sequence number in flight, and MTU 1300
     for one far outside the window — 1 MiB more: skiff's largest packet
     must still be the path's (what A ended with).
  C  after a forged message that quotes the connection properly (MTU 1300,
     the sequence number skiff sends next): 1 MiB more, in packets of at
     most 1300 bytes.  (A quote that names the 4-tuple and a sequence number
     in flight is all RFC 8201 gives a host to judge by.)

A sniffer on IFACE (AF_PACKET) notes skiff's segments to us: the next
sequence number to quote and the largest IPv6 packet per round.  The
forged messages go to the router (GW_MAC) from our own address, as a
router's would.  Prints one line; exit 0 when every round matched and the
sizes are as above.  Addresses: whatever the test gave us (2001:2::/48)."""
import argparse
import hashlib
import random
import socket
import struct
import sys
import threading
import time

import pktlib

ETH_P_IPV6 = 0x86DD


class Sniffer:
    def __init__(self, iface: str, peer: bytes, peer_port: int):
        self.s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_IPV6))
        # Room for a whole round (4 MiB echoed is ~3,000 frames): a sniffer
        # that falls behind loses the newest frames, the last of a round
        # among them, and would quote a stale sequence number.
        try:
            self.s.setsockopt(socket.SOL_SOCKET, 33, 64 << 20)  # SO_RCVBUFFORCE (root)
        except OSError:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 20)
        self.s.bind((iface, 0))
        self.s.settimeout(0.2)
        self.peer, self.peer_port = peer, peer_port
        self.port = 0          # ours, once known
        self.snd_max = None    # skiff's next sequence number, as far as seen
        self.max_pkt = 0       # largest IPv6 packet from skiff this round
        self.stop = False
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop:
            try:
                f = self.s.recv(65536)
            except OSError:
                continue
            if len(f) < 14 + 40 + 20 or f[12:14] != b"\x86\xdd" or f[20] != 6:
                continue
            if f[22:38] != self.peer:
                continue
            plen = struct.unpack("!H", f[18:20])[0]
            sport, dport, seq = struct.unpack("!HHI", f[54:62])
            if sport != self.peer_port or dport != self.port:
                continue
            doff = (f[66] >> 4) * 4
            flags = f[67]
            end = (seq + plen - doff + (1 if flags & 1 else 0)) & 0xFFFFFFFF
            with self.lock:
                self.max_pkt = max(self.max_pkt, 40 + plen)
                if self.snd_max is None or ((end - self.snd_max) & 0xFFFFFFFF) < 0x80000000:
                    self.snd_max = end

    def take_max(self) -> int:
        with self.lock:
            m, self.max_pkt = self.max_pkt, 0
            return m


def echo(conn, rng, n: int, timeout: float) -> bool:
    data = rng.randbytes(n)
    got = bytearray()
    err = []

    def reader():
        try:
            while len(got) < n:
                b = conn.recv(min(1 << 20, n - len(got)))
                if not b:
                    break
                got.extend(b)
        except OSError as e:
            err.append(e)

    t = threading.Thread(target=reader, daemon=True)
    t.start()
    conn.sendall(data)
    t.join(timeout)
    return not err and hashlib.sha256(got).digest() == hashlib.sha256(data).digest()


def ptb(out, smac, gw_mac, us, peer, ours, theirs, mtu, seq):
    """A Packet Too Big from us about skiff's segment to us with `seq`."""
    quote = pktlib.ipv6_header(peer, us, 6, 20) + struct.pack(
        "!HHIIBBHHH", theirs, ours, seq, 0, 5 << 4, 0x10, 65535, 0, 0)
    msg = pktlib.icmp6(us, peer, 2, 0, struct.pack("!I", mtu) + quote)
    out.send(pktlib.eth(gw_mac, smac, ETH_P_IPV6, pktlib.ipv6_header(us, peer, 58, len(msg)) + msg))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--bytes", type=int, default=4 << 20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--iface", required=True)
    ap.add_argument("--gw-mac", required=True, help="the router's MAC on IFACE")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()

    peer = pktlib.ip6_bytes(a.host)
    sn = Sniffer(a.iface, peer, a.port)
    conn = socket.create_connection((a.host, a.port), timeout=a.timeout)
    us_txt, ours = conn.getsockname()[:2]
    sn.port = ours
    us = pktlib.ip6_bytes(us_txt)
    out = pktlib.open_sender(a.iface)
    smac, gw_mac = pktlib.iface_mac(a.iface), pktlib.mac_bytes(a.gw_mac)
    rng = random.Random(a.seed)
    why = []

    ok_a = echo(conn, rng, a.bytes, a.timeout)
    time.sleep(0.2)
    max_a = sn.take_max()
    if not ok_a:
        why.append("round A did not come back intact")
    nxt = sn.snd_max
    if nxt is None:
        why.append("saw no segment from skiff")
        nxt = 0
    ptb(out, smac, gw_mac, us, peer, ours, a.port, 1000, nxt)
    ptb(out, smac, gw_mac, us, peer, ours, a.port, 1300, (nxt + 0x40000000) & 0xFFFFFFFF)
    time.sleep(0.3)
    ok_b = echo(conn, rng, 1 << 20, a.timeout)
    time.sleep(0.2)
    max_b = sn.take_max()
    if not ok_b:
        why.append("round B did not come back intact")
    if max_b != max_a:
        why.append(f"a forged message was taken: largest packet {max_b} after them, {max_a} before")
    ptb(out, smac, gw_mac, us, peer, ours, a.port, 1300, sn.snd_max or 0)
    time.sleep(0.3)
    ok_c = echo(conn, rng, 1 << 20, a.timeout)
    time.sleep(0.2)
    max_c = sn.take_max()
    if not ok_c:
        why.append("round C did not come back intact")
    if max_c > 1300 or max_c < 1200:
        why.append(f"after a valid Packet Too Big of 1300 the largest packet was {max_c}")
    conn.shutdown(socket.SHUT_WR)
    try:
        tail = conn.recv(1)
    except OSError:
        tail = b"x"
    if tail:
        why.append("no clean EOF after the rounds")
    conn.close()
    sn.stop = True
    verdict = "MATCH" if not why else "FAILED: " + "; ".join(why)
    print(f"ptb6: {a.bytes + (2 << 20)} bytes echoed in 3 rounds; largest packet from skiff "
          f"{max_a} (A), {max_b} (B, after a forged MTU 1000 and an out-of-window one), "
          f"{max_c} (C, after a valid MTU 1300) {verdict}", flush=True)
    return 0 if not why else 1


if __name__ == "__main__":
    sys.exit(main())
