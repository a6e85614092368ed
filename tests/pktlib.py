"""pktlib.py — frame building and a fast, paced AF_PACKET sender, shared by
garp_flood.py, malformed.py, nd_flood.py and malformed6.py.  Frames are prebuilt bytes; the send loop
does nothing but sendto and the pacing arithmetic."""
import errno
import socket
import struct
import time

ETH_P_IP = 0x0800
ETH_P_ARP = 0x0806
ETH_P_IPV6 = 0x86DD
ETH_P_8021Q = 0x8100
ETH_P_8021AD = 0x88A8
SOL_PACKET = 263
PACKET_QDISC_BYPASS = 20
BROADCAST = b"\xff" * 6


def mac_bytes(text: str) -> bytes:
    b = bytes(int(x, 16) for x in text.split(":"))
    if len(b) != 6:
        raise ValueError(f"bad MAC {text!r}")
    return b


def ip_bytes(text: str) -> bytes:
    return socket.inet_aton(text)


def iface_mac(iface: str) -> bytes:
    with open(f"/sys/class/net/{iface}/address") as f:
        return mac_bytes(f.read().strip())


def csum(data: bytes) -> int:
    """Internet checksum.  The ones' complement sum of 16-bit words equals
    the big integer modulo 0xffff (2**16 == 1 mod 0xffff)."""
    if len(data) & 1:
        data += b"\0"
    n = int.from_bytes(data, "big")
    r = n % 0xFFFF
    if r == 0 and n:
        r = 0xFFFF
    return ~r & 0xFFFF


def eth(dst: bytes, src: bytes, ethertype: int, payload: bytes) -> bytes:
    return dst + src + struct.pack("!H", ethertype) + payload


def ipv4_header(src: bytes, dst: bytes, proto: int, payload_len: int, *, ident=0, flags_frag=0,
                ttl=64, total_len=None, version=4, ihl=5, options=b"", fix_csum=True,
                csum_value=None) -> bytes:
    if total_len is None:
        total_len = ihl * 4 + payload_len
    h = struct.pack("!BBHHHBBH4s4s", (version << 4) | (ihl & 15), 0, total_len & 0xFFFF,
                    ident & 0xFFFF, flags_frag & 0xFFFF, ttl, proto, 0, src, dst) + options
    if csum_value is None:
        csum_value = csum(h) if fix_csum else 0
    return h[:10] + struct.pack("!H", csum_value) + h[12:]


def pseudo(src: bytes, dst: bytes, proto: int, length: int) -> bytes:
    return src + dst + struct.pack("!BBH", 0, proto, length)


def udp(src: bytes, dst: bytes, sport: int, dport: int, data: bytes, *, length=None,
        csum_value=None) -> bytes:
    ln = 8 + len(data) if length is None else length
    seg = struct.pack("!HHHH", sport, dport, ln & 0xFFFF, 0) + data
    if csum_value is None:
        c = csum(pseudo(src, dst, 17, len(seg)) + seg)
        csum_value = c if c else 0xFFFF
    return seg[:6] + struct.pack("!H", csum_value) + seg[8:]


def icmp_echo(ident: int, seq: int, data: bytes, *, csum_value=None, typ=8) -> bytes:
    m = struct.pack("!BBHHH", typ, 0, 0, ident, seq) + data
    if csum_value is None:
        csum_value = csum(m)
    return m[:2] + struct.pack("!H", csum_value) + m[4:]


def tcp(src: bytes, dst: bytes, sport: int, dport: int, *, seq=1, ack=0, flags=0x02,
        doff=5, options=b"", data=b"", csum_value=None) -> bytes:
    seg = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (doff & 15) << 4, flags, 65535, 0,
                      0) + options + data
    if csum_value is None:
        csum_value = csum(pseudo(src, dst, 6, len(seg)) + seg)
    return seg[:16] + struct.pack("!H", csum_value) + seg[18:]


# ---- IPv6 ----

def ip6_bytes(text: str) -> bytes:
    return socket.inet_pton(socket.AF_INET6, text)


def ipv6_header(src: bytes, dst: bytes, nxt: int, payload_len: int, *, hop=64, version=6,
                plen=None) -> bytes:
    return struct.pack("!IHBB16s16s", version << 28, payload_len if plen is None else plen,
                       nxt, hop, src, dst)


def icmp6(src: bytes, dst: bytes, typ: int, code: int, body: bytes, *, csum_value=None) -> bytes:
    """An ICMPv6 message (type, code, checksum, then body) with its checksum
    over the IPv6 pseudo header (RFC 8200 8.1)."""
    m = struct.pack("!BBH", typ, code, 0) + body
    if csum_value is None:
        csum_value = csum(src + dst + struct.pack("!IxxxB", len(m), 58) + m)
    return m[:2] + struct.pack("!H", csum_value) + m[4:]


def solicited_node(addr: bytes) -> bytes:
    return bytes.fromhex("ff0200000000000000000001ff") + addr[13:]


def mcast_mac(group: bytes) -> bytes:
    return b"\x33\x33" + group[12:]


def nd_ns(src: bytes, dst: bytes, target: bytes, slla=None, *, code=0, opts=b"") -> bytes:
    body = b"\0" * 4 + target + (b"\x01\x01" + slla if slla else b"") + opts
    return icmp6(src, dst, 135, code, body)


def nd_na(src: bytes, dst: bytes, target: bytes, flags: int, tlla=None) -> bytes:
    body = struct.pack("!I", flags << 24) + target + (b"\x02\x01" + tlla if tlla else b"")
    return icmp6(src, dst, 136, 0, body)


def wrong_csum(rng, good: int) -> int:
    """A checksum value that is neither the right one nor a zero form."""
    while True:
        v = rng.randrange(1, 0xFFFF)
        if v != good:
            return v


def open_sender(iface: str) -> socket.socket:
    """A raw AF_PACKET socket that only sends (protocol 0: receives nothing).
    QDISC_BYPASS makes a frame the driver drops (tap ring full, veth peer
    backlog full) come back as ENOBUFS instead of vanishing in a qdisc."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
    s.bind((iface, 0))
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    try:
        s.setsockopt(SOL_PACKET, PACKET_QDISC_BYPASS, 1)
    except OSError:
        pass
    return s


class Barrier:
    """Flow control without guessing rates: a UDP echo round trip to the
    stack under test through the same interface.  The stack handles frames
    in order, so when the echo comes back it has consumed every frame sent
    before it, and at most `every` frames are ever in flight (less than any
    device ring).  A probe that gets no answer within `timeout` is counted
    and the flood goes on."""

    def __init__(self, dst: str, port: int = 7, timeout: float = 1.0):
        fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
        self.s = socket.socket(fam, socket.SOCK_DGRAM)
        self.s.connect((dst, port))
        self.s.settimeout(timeout)
        self.timeout = timeout
        self.n = self.timeouts = 0

    def wait(self):
        self.n += 1
        token = b"skt-barrier-" + struct.pack("!I", self.n)
        end = time.monotonic() + self.timeout
        try:
            self.s.send(token)
            while True:
                if self.s.recv(64) == token:
                    return
                if time.monotonic() > end:
                    raise socket.timeout
        except OSError:  # timeout, or an ICMP error surfacing here
            self.timeouts += 1


def send_frames(s: socket.socket, frames, *, rate: float = 0.0, burst: int = 64,
                deadline: float = 60.0, barrier=None, every: int = 512):
    """Send every frame once.  ENOBUFS means the kernel dropped it: wait a
    little and send it again.  rate > 0 caps frames per second (checked
    every burst); a Barrier is waited on after every `every` frames.
    Returns (sent, retries, errors, seconds, timed_out)."""
    send = s.send
    sleep = time.sleep
    now = time.monotonic
    t0 = now()
    stop_at = t0 + deadline
    sent = retries = errors = 0
    n = len(frames)
    if barrier is not None:
        burst = every
    i = 0
    while i < n:
        end = min(i + burst, n)
        while i < end:
            try:
                send(frames[i])
            except OSError as e:
                if e.errno in (errno.ENOBUFS, errno.EAGAIN):
                    retries += 1
                    sleep(0.0002)
                    if now() > stop_at:
                        return sent, retries, errors, now() - t0, True
                    continue
                errors += 1
            else:
                sent += 1
            i += 1
        if barrier is not None:
            barrier.wait()
        t = now()
        if t > stop_at:
            return sent, retries, errors, t - t0, True
        if rate > 0:
            ahead = t0 + i / rate - t
            if ahead > 0:
                sleep(ahead)
    return sent, retries, errors, now() - t0, False
