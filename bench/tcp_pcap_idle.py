#!/usr/bin/env python3
"""tcp_pcap_idle.py CAP [TRACE] — where the sender of a bench-tcp send run sent
nothing, and (with its trace) why.

bench/tcp_wan.sh with BENCH_TCP_PCAP=1 captures each transfer beside the
stack under test; a send run's stack sends the payload.  This finds every gap
of more than --gap ms (default 5) between two of its data segments after the
first --skip ms from its first one (default 150: slow start's round trips
are gaps by nature), and prints their sum, their count and the transfer's
length (first to last data segment).  A stack that paces spreads its sends over the
round trip; one whose window holds it sends in bursts and waits.

With TRACE (the run's traces/DELAY-LOSS-STACK-send-REP.tsv, skiff's
--tcp-trace or tcp_echo.py's, sampled every 10 ms) each gap is put in a class
by the middle one of the trace's samples inside it (skiff's trace starts at
its SYN, tcp_echo.py's at its connect; gaps too short to hold a sample are
"short"):

  sndbuf  less than two segments queued unsent (the app or the buffer)
  rwnd    what is unacked fills the peer's window
  cwnd    pipe fills the congestion window
  other   none of these (pacing, or a timer)
  end     the connection is past ESTABLISHED with nothing queued

The capture is read by tests/pcap_frames.py and bench/tcp_pcap_flow.py's
header parser; nothing else is needed.
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pcap_frames import frames  # noqa: E402
from tcp_pcap_flow import tcp_of  # noqa: E402


def sends(cap):
    """The ms of every data segment the sender sent, from its first SYN (a
    lost SYN's timeout included), and of its first data segment."""
    recs, syn = [], None
    bytes_by = collections.Counter()
    for ts, data in frames(cap):
        t = tcp_of(data)
        if not t:
            continue
        src, _, sport, _, _, _, flags, _, plen, _ = t
        if syn is None and flags & 2:
            syn = ts
        bytes_by[(src, sport)] += plen
        recs.append((ts, (src, sport), plen))
    if syn is None or not bytes_by:
        return [], 0
    me = bytes_by.most_common(1)[0][0]
    out = [1000 * (ts - syn) for ts, who, plen in recs if who == me and plen > 0]
    return out, (out[0] if out else 0)


def trace_rows(path):
    with open(path) as f:
        head = f.readline().rstrip('\n').split('\t')
        return [dict(zip(head, line.rstrip('\n').split('\t'))) for line in f]


def classify(row, mss=1448):
    n = {k: int(v) for k, v in row.items() if v.lstrip('-').isdigit()}
    if row.get('state') != 'ESTABLISHED' and n.get('unsent', n.get('notsent', 0)) == 0:
        return 'end'
    if n.get('unsent', n.get('notsent', mss * 2)) < 2 * mss:
        return 'sndbuf'
    if 'snd_wnd' in n and n['unacked'] + mss > n['snd_wnd']:
        return 'rwnd'
    if n['pipe'] + mss > n['cwnd']:
        return 'cwnd'
    return 'other'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 epilog='Classes: see the module text (head -30 of this file).')
    ap.add_argument('cap', help="a send run's pcap (BENCH_TCP_PCAP=1)")
    ap.add_argument('trace', nargs='?', help="the run's trace (traces/*.tsv)")
    ap.add_argument('--gap', type=float, default=5, help='least gap counted, ms (default 5)')
    ap.add_argument('--skip', type=float, default=150, help='ms from the SYN left out (default 150)')
    a = ap.parse_args()
    ts, first = sends(a.cap)
    if len(ts) < 2:
        sys.exit(f'{a.cap}: no data segments')
    gaps = [(x, y) for x, y in zip(ts, ts[1:]) if y - x > a.gap and x - first > a.skip]
    print(f'{os.path.basename(a.cap)}: {len(gaps)} gaps over {a.gap:g} ms after {a.skip:g} ms, '
          f'{sum(y - x for x, y in gaps):.0f} ms idle of {ts[-1] - first:.0f} ms')
    if not a.trace:
        return
    rows = trace_rows(a.trace)
    # skiff's trace begins with the SYN; tcp_echo.py's clock with the connect.
    t0 = float(rows[0]['ms']) if rows and rows[0].get('state') == 'SYN_SENT' else 0
    by = collections.Counter()
    for x, y in gaps:
        inside = [r for r in rows if x < float(r['ms']) - t0 < y]
        by['short' if not inside else classify(inside[len(inside) // 2])] += y - x
    print('  by class (ms):', ' '.join(f'{k} {v:.0f}' for k, v in by.most_common()))


if __name__ == '__main__':
    main()
