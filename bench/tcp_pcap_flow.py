#!/usr/bin/env python3
"""tcp_pcap_flow.py CAP [--bin MS] — one TCP connection of a bench-tcp capture,
summed by interval, as the stack under test saw it.

bench/tcp_wan.sh with BENCH_TCP_PCAP=1 captures each transfer at srv's vs0,
beside the stack under test, headers only.  There its own segments leave and
its peer's arrive, so this reads, per interval of --bin ms (default 200):

  in_KBps / out_KBps  new payload arriving / leaving (the sequence space above
                      the highest seen that way, gaps included), KiB per second
  in_rtx / out_rtx    segments that carried only bytes already seen that way
                      (or filled a gap: lost before the capture point)
  out_flight          the most bytes the stack had sent and the peer had not
                      acknowledged (exact here: both are seen at the stack)
  my_win / my_room    the largest window the stack advertised, and the least
                      room it left the peer (its ACK + window - the highest
                      byte that had arrived): 0 means the peer was held back
                      by the stack's receive window
  peer_win/peer_room  the same for the peer's window and the stack's data
  my_sacks            the stack's ACKs carrying SACK blocks (its loss reports)
  peer_sacks          the peer's

--totals prints one line instead, over the whole capture: in_bytes and
out_bytes (new payload each way: a whole transfer's bytes when the capture
saw all of it), in_rtx and out_rtx.

The stack under test is the side whose port is 7 (bench-tcp's server role);
otherwise the side that sent the first SYN (client and send roles).  The
capture is read as pcap (Ethernet, IPv4 or IPv6) by tests/pcap_frames.py;
nothing else is needed.
"""
import argparse
import collections
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from pcap_frames import frames  # noqa: E402  (tests/: the one pcap reader)


def tcp_of(data):
    """(src, dst, sport, dport, seq, ack, flags, win, payload_len, opts) or None."""
    if len(data) < 14:
        return None
    et = struct.unpack('>H', data[12:14])[0]
    o = 14
    if et == 0x8100 and len(data) >= 18:
        et = struct.unpack('>H', data[16:18])[0]
        o = 18
    if et == 0x0800:
        if len(data) < o + 20:
            return None
        ihl = (data[o] & 15) * 4
        tot = struct.unpack('>H', data[o + 2:o + 4])[0]
        if data[o + 9] != 6 or ihl < 20:
            return None
        src, dst = data[o + 12:o + 16], data[o + 16:o + 20]
        plen = tot - ihl
        t = o + ihl
    elif et == 0x86dd:
        if len(data) < o + 40 or data[o + 6] != 6:
            return None
        plen = struct.unpack('>H', data[o + 4:o + 6])[0]
        src, dst = data[o + 8:o + 24], data[o + 24:o + 40]
        t = o + 40
    else:
        return None
    if len(data) < t + 20:
        return None
    sport, dport, seq, ack, off, flags, win = struct.unpack('>HHIIBBH', data[t:t + 16])
    thl = (off >> 4) * 4
    if thl < 20 or plen < thl:
        return None
    opts = data[t + 20:min(t + thl, len(data))]
    return src, dst, sport, dport, seq, ack, flags, win, plen - thl, opts


def parse_opts(opts):
    ws, sack = None, False
    i = 0
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
        if k == 3 and n == 3 and i + 2 < len(opts):
            ws = min(opts[i + 2], 14)
        elif k == 5:
            sack = True
        i += n
    return ws, sack


def seq_gt(a, b):
    return ((a - b) & 0xffffffff) != 0 and ((a - b) & 0xffffffff) < 0x80000000


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0],
                                 epilog='Columns: see the module text (head -30 of this file).')
    ap.add_argument('cap', help='a pcap of one bench-tcp transfer (BENCH_TCP_PCAP=1)')
    ap.add_argument('--bin', type=float, default=200, help='interval in ms (default 200)')
    ap.add_argument('--totals', action='store_true',
                    help='one line instead: in_bytes, out_bytes, in_rtx, out_rtx over the whole capture')
    a = ap.parse_args()
    if a.bin <= 0:
        ap.error('--bin must be positive')

    me = None            # (addr, port) of the stack under test
    t0 = None
    wscale = {}          # side -> shift, from its SYN
    sack_ok = {}
    hi = {}              # side -> highest sequence end sent (absolute, wrapping)
    last_ack = {}        # side -> the latest ack it sent
    B = collections.defaultdict(lambda: collections.defaultdict(int))
    try:
        caps = list(frames(a.cap))
    except OSError as e:
        raise SystemExit(f'{a.cap}: {e.strerror}')
    except ValueError as e:
        raise SystemExit(f'{a.cap}: {e}')
    for ts, data in caps:
        p = tcp_of(data)
        if p is None:
            continue
        src, dst, sport, dport, seq, ack, flags, win, n, opts = p
        syn, ackf = flags & 2, flags & 16
        if me is None:
            if dport == 7:
                me = (dst, dport)
            elif sport == 7:
                me = (src, sport)
            elif syn and not ackf:
                me = (src, sport)
            else:
                continue
        if (src, sport) == me:
            side, other = 'my', 'peer'
        elif (dst, dport) == me:
            side, other = 'peer', 'my'
        else:
            continue
        if syn:
            ws, sk = parse_opts(opts)
            wscale[side] = ws
            sack_ok[side] = sk
            hi[side] = (seq + 1) & 0xffffffff
            if t0 is None:
                t0 = ts
            continue
        if t0 is None or side not in hi:
            continue
        b = int((ts - t0) * 1000 // a.bin)
        x = B[b]
        d = 'out' if side == 'my' else 'in'
        if n:
            end = (seq + n) & 0xffffffff
            if seq_gt(end, hi[side]):
                # A gap above the highest byte (a frame lost before the
                # capture point, or reordered) counts here: its bytes come
                # later as a retransmission.  So the sum is the stream's.
                x[d] += (end - hi[side]) & 0xffffffff
                hi[side] = end
            else:
                x[d + '_rtx'] += 1
        if ackf:
            # Window scaling applies only when both SYNs offered it.
            shift = wscale.get(side) if wscale.get('my') is not None and wscale.get('peer') is not None else 0
            w = win << (shift or 0)
            x[side + '_win'] = max(x[side + '_win'], w)
            if other in hi:
                room = (ack + w - hi[other]) & 0xffffffff
                if room >= 0x80000000:
                    room -= 1 << 32
                k = side + '_room'
                x[k] = room if k + '_set' not in x else min(x[k], room)
                x[k + '_set'] = 1
            last_ack[side] = ack
            _, sk = parse_opts(opts)
            if sk:
                x[side + '_sacks'] += 1
        if 'peer' in last_ack and 'my' in hi:
            fl = (hi['my'] - last_ack['peer']) & 0xffffffff
            if fl < 0x80000000:
                x['out_flight'] = max(x['out_flight'], fl)
    if me is None:
        raise SystemExit(f'{a.cap}: no TCP connection found')
    if a.totals:
        t = collections.Counter()
        for x in B.values():
            for k in ('in', 'out', 'in_rtx', 'out_rtx'):
                t[k] += x[k]
        print(f"in_bytes {t['in']} out_bytes {t['out']} in_rtx {t['in_rtx']} out_rtx {t['out_rtx']}")
        return 0
    cols = ['ms', 'in_KBps', 'out_KBps', 'in_rtx', 'out_rtx', 'out_flight',
            'my_win', 'my_room', 'peer_win', 'peer_room', 'my_sacks', 'peer_sacks']
    print('\t'.join(cols))
    k = 1000 / a.bin / 1024
    for b in sorted(B):
        x = B[b]
        room = lambda s: str(x[s + '_room']) if x.get(s + '_room_set') else '-'
        print('\t'.join([str(int(b * a.bin)), f"{x['in'] * k:.0f}", f"{x['out'] * k:.0f}",
                         str(x['in_rtx']), str(x['out_rtx']), str(x['out_flight']),
                         str(x['my_win']), room('my'), str(x['peer_win']), room('peer'),
                         str(x['my_sacks']), str(x['peer_sacks'])]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
