#!/usr/bin/env python3
"""tcp_flood.py — attacks on skiff's TCP from a Linux namespace, with a
real connection as the witness that service goes on.

  rst: open a real (kernel) connection to DST:PORT, then write COUNT RSTs
       with its exact 4-tuple and random sequence numbers (RFC 5961's blind
       reset) through AF_PACKET; afterwards the same connection must still
       echo.  Only a RST whose sequence number is exactly rcv_nxt may reset
       it (a 1 in 2**32 chance per frame).
  syn: write COUNT SYNs from random source addresses in 198.18.0.0/15
       (outside --exclude-net) and random ports through AF_PACKET, while a
       thread keeps opening real connections that must echo; then a few
       more real connections after the flood.

An IPv6 --dst (issue 18) makes both over IPv6: the RSTs carry the
connection's v6 4-tuple, and the spoofed SYNs come from random addresses
in 2001:2:0:ff::/64 (off skiff's link: its SYN-ACKs go to its --gw6, the
Linux peer, which does not forward them; no neighbour solicitation storm).

Frames are paced by pktlib.Barrier (a UDP echo round trip to skiff every
--every frames), so no device ring overflows.  Prints one result line;
exits 0 when the witness connections all worked."""
import argparse
import random
import socket
import struct
import sys
import threading
import time

import pktlib

NET = 0xC6120000  # 198.18.0.0/15
NET_SIZE = 1 << 17
NET6 = bytes.fromhex("20010002000000ff")  # 2001:2:0:ff::/64, inside 2001:2::/48


def is6(addr: str) -> bool:
    return ":" in addr


def l3(src: bytes, dst: bytes, seg_len: int, ident: int = 0):
    """(ethertype, IP header, pseudo header) for a TCP segment of seg_len."""
    if len(src) == 16:
        return (pktlib.ETH_P_IPV6, pktlib.ipv6_header(src, dst, 6, seg_len),
                src + dst + struct.pack("!IxxxB", seg_len, 6))
    return (pktlib.ETH_P_IP, pktlib.ipv4_header(src, dst, 6, seg_len, ident=ident),
            pktlib.pseudo(src, dst, 6, seg_len))


def addr_bytes(text: str) -> bytes:
    return pktlib.ip6_bytes(text) if is6(text) else pktlib.ip_bytes(text)


def fold(s: int) -> int:
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def words_sum(b: bytes) -> int:
    if len(b) & 1:
        b += b"\0"
    return sum(struct.unpack(f"!{len(b) // 2}H", b))


def echo_once(conn: socket.socket, n: int) -> bool:
    msg = random.randbytes(n)
    conn.sendall(msg)
    got = b""
    while len(got) < n:
        b = conn.recv(65536)
        if not b:
            return False
        got += b
    return got == msg


def send_paced(s, frames_iter, total, barrier, every, deadline):
    """Send frames from the iterator (lists of `every` frames); a barrier
    after each list.  Returns (sent, retries, timed_out)."""
    sent = retries = 0
    end = time.monotonic() + deadline
    for chunk in frames_iter:
        for f in chunk:
            while True:
                try:
                    s.send(f)
                    break
                except OSError:  # ENOBUFS: the device is full, wait a little
                    retries += 1
                    time.sleep(0.0002)
                    if time.monotonic() > end:
                        return sent, retries, True
            sent += 1
        barrier.wait()
        if time.monotonic() > end:
            return sent, retries, True
    return sent, retries, False


def rst_mode(a) -> int:
    conn = socket.create_connection((a.dst, a.port), timeout=5)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if not echo_once(conn, 1000):
        print("rst: the connection did not echo before the flood")
        return 1
    src_ip, sport = conn.getsockname()[:2]
    src, dst = addr_bytes(src_ip), addr_bytes(a.dst)
    smac, dmac = pktlib.iface_mac(a.iface), pktlib.mac_bytes(a.dst_mac)
    etype, ip, ps = l3(src, dst, 20)
    # TCP header with seq = 0 and checksum 0; the checksum of each frame is
    # this partial sum plus the two 16-bit halves of its sequence number.
    head = struct.pack("!HH", sport, a.port)
    tail = struct.pack("!IBBH", 0, 5 << 4, 0x04, 0)  # ack 0, doff 5, RST, win 0
    base = words_sum(ps) + words_sum(head + tail)
    prefix = pktlib.eth(dmac, smac, etype, ip + head)
    rng = random.Random(a.seed)

    def chunks():
        left = a.count
        while left > 0:
            n = min(a.every, left)
            out = []
            for _ in range(n):
                seq = rng.getrandbits(32)
                c = ~fold(base + (seq >> 16) + (seq & 0xFFFF)) & 0xFFFF
                out.append(prefix + struct.pack("!I", seq) + tail + struct.pack("!HH", c, 0))
            left -= n
            yield out

    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.dst)
    t0 = time.monotonic()
    sent, retries, timed_out = send_paced(s, chunks(), a.count, barrier, a.every, a.deadline)
    secs = time.monotonic() - t0
    try:
        alive = echo_once(conn, 10000)
        why = "" if alive else "echo after the flood came back wrong or EOF"
    except OSError as e:
        alive, why = False, f"connection broken after the flood: {e}"
    conn.close()
    print(f"rst: sent {sent}/{a.count} RSTs to port {a.port} from port {sport} in {secs:.1f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} retries, {barrier.n} barriers "
          f"({barrier.timeouts} unanswered){', DEADLINE HIT' if timed_out else ''}; "
          f"connection {'still echoes' if alive else 'DEAD: ' + why}")
    return 0 if alive and sent == a.count else 1


def syn_mode(a) -> int:
    smac, dmac = pktlib.iface_mac(a.iface), pktlib.mac_bytes(a.dst_mac)
    v6 = is6(a.dst)
    dst = addr_bytes(a.dst)
    ex_net = ex_mask = 0
    if not v6:
        ex_net = struct.unpack("!I", pktlib.ip_bytes(a.exclude_net.split("/")[0]))[0]
        ex_mask = (0xFFFFFFFF << (32 - int(a.exclude_net.split("/")[1]))) & 0xFFFFFFFF
    rng = random.Random(a.seed)
    # MSS 1460, SACK permitted, timestamps, window scale 7: what Linux sends,
    # so a cookie must encode all of them.
    def opts(tsval):
        return (struct.pack("!BBH", 2, 4, 1460) + struct.pack("!BB", 4, 2) +
                struct.pack("!BBII", 8, 10, tsval, 0) + struct.pack("!BBBB", 1, 3, 3, 7))

    def chunks():
        left = a.count
        while left > 0:
            n = min(a.every, left)
            out = []
            for _ in range(n):
                if v6:
                    src = NET6 + struct.pack("!Q", rng.getrandbits(64) | 1)
                else:
                    while True:
                        ipn = NET + rng.randrange(NET_SIZE)
                        if (ipn & ex_mask) != ex_net:
                            break
                    src = struct.pack("!I", ipn)
                o = opts(rng.getrandbits(32))
                sport, seq = rng.randrange(1024, 65536), rng.getrandbits(32)
                etype, ip, ps = l3(src, dst, 20 + len(o), rng.getrandbits(16))
                seg = struct.pack("!HHIIBBHHH", sport, a.port, seq, 0, (5 + len(o) // 4) << 4,
                                  0x02, 65535, 0, 0) + o
                seg = seg[:16] + struct.pack("!H", pktlib.csum(ps + seg)) + seg[18:]
                out.append(pktlib.eth(dmac, smac, etype, ip + seg))
            left -= n
            yield out

    real = {"ok": 0, "fail": 0, "first": ""}
    stop = threading.Event()

    def witness():
        try:
            with socket.create_connection((a.dst, a.port), timeout=5) as c:
                ok = echo_once(c, 2000)
        except OSError as e:
            ok = False
            real["first"] = real["first"] or str(e)
        real["ok" if ok else "fail"] += 1

    def witness_loop():
        while not stop.wait(0.2):
            witness()

    th = threading.Thread(target=witness_loop, daemon=True)
    s = pktlib.open_sender(a.iface)
    barrier = pktlib.Barrier(a.dst)
    t0 = time.monotonic()
    th.start()
    sent, retries, timed_out = send_paced(s, chunks(), a.count, barrier, a.every, a.deadline)
    secs = time.monotonic() - t0
    stop.set()
    th.join(10)
    during = real["ok"] + real["fail"]
    for _ in range(a.after):  # the SYN queue is still full: these get cookies
        witness()
    print(f"syn: sent {sent}/{a.count} spoofed SYNs in {secs:.1f} s "
          f"({sent / max(secs, 1e-9):.0f}/s), {retries} retries, {barrier.n} barriers "
          f"({barrier.timeouts} unanswered){', DEADLINE HIT' if timed_out else ''}; "
          f"real connections: {real['ok']} echoed, {real['fail']} failed "
          f"({during} during the flood)" + (f"; first failure: {real['first']}" if real["first"] else ""))
    return 0 if real["fail"] == 0 and real["ok"] >= a.after and sent == a.count else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["rst", "syn"])
    ap.add_argument("--iface", required=True)
    ap.add_argument("--dst", required=True, help="skiff's address, IPv4 or IPv6")
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--count", type=int, default=1000000)
    ap.add_argument("--every", type=int, default=512, help="frames between barriers")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--deadline", type=float, default=120.0)
    ap.add_argument("--after", type=int, default=10, help="syn: real connections after the flood")
    ap.add_argument("--exclude-net", default="198.18.0.0/24",
                    help="syn: never spoof sources in this net (skiff would ARP for them)")
    a = ap.parse_args()
    return rst_mode(a) if a.mode == "rst" else syn_mode(a)


if __name__ == "__main__":
    sys.exit(main())
