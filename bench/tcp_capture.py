"""tcp_capture.py: a bench-tcp capture (BENCH_TCP_PCAP=1, taken beside the sender) as one
connection's segments, for readers of a send run's capture (bench/results/*/stall.py).

segments(cap) yields, in capture order, (ms, out, lo, hi, ack):
  ms      milliseconds since the sender's first SYN
  out     True for the sender's segments, False for its peer's
  lo, hi  a segment's sequence range relative to the sender's ISN (lo == hi: no payload)
  ack     the peer's cumulative ACK relative to the sender's ISN (None on the sender's)
(SACK blocks are not read: a reader that wants them should get them from tcp_pcap_flow.py's
option walk, parse_opts, extended, not from a second one.)
The sender is the side that sent the first SYN (bench-tcp's client and send roles).  Frames are
read by tests/pcap_frames.py and bench/tcp_pcap_flow.py's header parser; nothing else is needed.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcap_frames import frames  # noqa: E402
from tcp_pcap_flow import tcp_of  # noqa: E402


def segments(cap):
    me = isn = t0 = None
    for ts, data in frames(cap):
        t = tcp_of(data)
        if not t:
            continue
        src, _, sport, _, seq, ack, flags, _, plen, _ = t
        if me is None:
            if not (flags & 2) or (flags & 16):
                continue  # before the sender's SYN
            me, isn, t0 = (src, sport), (seq + 1) & 0xffffffff, ts
            continue
        ms = 1000 * (ts - t0)
        if (src, sport) == me:
            lo = (seq - isn) & 0xffffffff
            yield ms, True, lo, lo + plen, None
        elif flags & 16:
            yield ms, False, 0, 0, (ack - isn) & 0xffffffff
