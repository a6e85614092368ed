"""tcp_capture.py: a bench-tcp capture (BENCH_TCP_PCAP=1, taken beside the sender) as one
connection's segments, for readers of a send run's capture (bench/results/*/stall.py).

segments(cap) yields, in capture order, (ms, out, lo, hi, ack, sacks):
  ms      milliseconds since the sender's first SYN
  out     True for the sender's segments, False for its peer's
  lo, hi  a segment's sequence range relative to the sender's ISN (lo == hi: no payload)
  ack     the peer's cumulative ACK relative to the sender's ISN (None on the sender's)
  sacks   the peer's SACK blocks, [(l, r)] relative to the sender's ISN
The sender is the side that sent the first SYN (bench-tcp's client and send roles).  Frames are
read by tests/pcap_frames.py and bench/tcp_pcap_flow.py's header parser; nothing else is needed.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcap_frames import frames  # noqa: E402
from tcp_pcap_flow import tcp_of  # noqa: E402


def sack_blocks(opts):
    """The SACK blocks of a TCP option field, as (left, right) sequence numbers."""
    out, i = [], 0
    while i < len(opts):
        k = opts[i]
        if k == 0:
            break
        if k == 1:
            i += 1
            continue
        if i + 1 >= len(opts) or opts[i + 1] < 2:
            break
        n = opts[i + 1]
        if k == 5:
            for j in range(i + 2, min(i + n, len(opts)) - 7, 8):
                out.append(struct.unpack('>II', opts[j:j + 8]))
        i += n
    return out


def segments(cap):
    me = isn = t0 = None
    for ts, data in frames(cap):
        t = tcp_of(data)
        if not t:
            continue
        src, _, sport, _, seq, ack, flags, _, plen, opts = t
        if me is None:
            if not (flags & 2) or (flags & 16):
                continue  # before the sender's SYN
            me, isn, t0 = (src, sport), (seq + 1) & 0xffffffff, ts
            continue
        ms = 1000 * (ts - t0)
        if (src, sport) == me:
            lo = (seq - isn) & 0xffffffff
            yield ms, True, lo, lo + plen, None, []
        elif flags & 16:
            rel = [((a - isn) & 0xffffffff, (b - isn) & 0xffffffff) for a, b in sack_blocks(opts)]
            yield ms, False, 0, 0, (ack - isn) & 0xffffffff, rel
