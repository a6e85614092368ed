#!/usr/bin/env python3
"""pace_check.py PCAP --src ADDR --rate B_PER_S --mss BYTES [--slack-ms MS]

Does a capture of a paced TCP sender keep to its pacing?  Reads PCAP
(tcpdump -w; Ethernet, IPv4 or IPv6), takes the TCP segments from ADDR that
carry data (retransmissions too: they are paced as well), and finds the
window of the capture, between any two of them, whose payload most exceeds

    rate * (t_last - t_first + slack) + quantum

(the payload of every segment from the first to the last, both counted),
where quantum is what the sender sends at once at that rate: skiff's rule
(tcp_pace_quantum in src/net/tcp_int.h, cut to whole segments in
tcp_output_data): a millisecond at the rate, at least two segments (one
below 150,000 B/s), at most 64 KiB.
The sender keeps "over any interval, bytes sent <= rate * interval + one
quantum" on its own clock; the capture stamps a frame when the kernel gets
it, which can be later than the sender's clock said by a scheduling delay,
and a late first frame makes the window look shorter by that delay: the
slack allows it (in ms at the rate).

Prints one line: segments, bytes, the worst window (start, length, bytes,
allowed) and its excess; exits 0 when no window exceeds, 1 when one does,
2 on a capture it cannot read or with no data segment from ADDR."""
import argparse
import ipaddress
import struct
import sys

import pcap_frames


def segments(path, src):
    """(time s, payload bytes) of the data segments from src, in capture order."""
    want = ipaddress.ip_address(src)
    out = []
    for t, pkt in pcap_frames.frames(path):
        if len(pkt) < 14:
            continue
        et = struct.unpack("!H", pkt[12:14])[0]
        p = 14
        if et == 0x8100 and len(pkt) >= 18:  # one VLAN tag
            et = struct.unpack("!H", pkt[16:18])[0]
            p = 18
        if et == 0x0800 and len(pkt) >= p + 20:
            ihl = (pkt[p] & 15) * 4
            if pkt[p + 9] != 6 or ipaddress.ip_address(pkt[p + 12:p + 16]) != want:
                continue
            iplen = struct.unpack("!H", pkt[p + 2:p + 4])[0]
            tcp = p + ihl
            pay_total = iplen - ihl
        elif et == 0x86DD and len(pkt) >= p + 40:
            # No extension headers: skiff sends none.
            if pkt[p + 6] != 6 or ipaddress.ip_address(pkt[p + 8:p + 24]) != want:
                continue
            tcp = p + 40
            pay_total = struct.unpack("!H", pkt[p + 4:p + 6])[0]
        else:
            continue
        if len(pkt) < tcp + 13:
            continue  # the snap length cut the TCP header: cannot tell
        doff = (pkt[tcp + 12] >> 4) * 4
        n = pay_total - doff
        if n > 0:
            out.append((t, n))
    return out


def quantum(rate: float, mss: int) -> int:
    """skiff's pacing quantum at `rate` bytes/s for segments of `mss`."""
    q = int(rate) // 1000
    if q < 2 * mss:
        q = mss if rate < 150000 else 2 * mss
    q = min(q, 65536)
    return max(q - q % mss, mss)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pcap")
    ap.add_argument("--src", required=True, help="the paced sender's address")
    ap.add_argument("--rate", type=float, required=True, help="pacing rate, bytes/s")
    ap.add_argument("--mss", type=int, required=True,
                    help="the sender's segment payload (its effective MSS), bytes")
    ap.add_argument("--slack-ms", type=float, default=0.0,
                    help="the capture's delay allowed, ms at the rate (default 0)")
    a = ap.parse_args()
    try:
        segs = segments(a.pcap, a.src)
    except (OSError, ValueError) as e:
        print(f"pace_check: {a.pcap}: {e}")
        return 2
    if not segs or a.rate <= 0:
        print(f"pace_check: no data segment from {a.src} (or rate {a.rate} not > 0)")
        return 2
    # excess(i, j) = (B[j] - B[i-1]) - rate * (t[j] - t[i]) - allowance, for
    # i <= j, where B is the running sum of the payload; for each j the
    # worst i is the one with the least B[i-1] - rate * t[i] so far: one pass.
    slack = a.rate * a.slack_ms / 1000.0
    a.quantum = quantum(a.rate, a.mss)
    t0 = segs[0][0]
    best = None  # (excess, i, j)
    low, low_i = None, 0
    total = 0
    for j, (t, n) in enumerate(segs):
        v = total - a.rate * (t - t0)  # B[j-1] - rate * t[j], as i = j
        if low is None or v < low:
            low, low_i = v, j
        total += n
        ex = (total - a.rate * (t - t0)) - low - a.quantum - slack
        if best is None or ex > best[0]:
            best = (ex, low_i, j)
    ex, i, j = best
    length = segs[j][0] - segs[i][0]
    got = sum(n for _, n in segs[i:j + 1])
    allowed = a.rate * length + a.quantum + slack
    print(f"pace_check: {len(segs)} data segments, {total} bytes over "
          f"{segs[-1][0] - t0:.3f} s; worst window at +{segs[i][0] - t0:.6f} s, "
          f"{length * 1e3:.3f} ms, {j - i + 1} segments, {got} bytes, allowed "
          f"{allowed:.0f} (rate {a.rate:.0f} B/s, quantum {a.quantum}, slack "
          f"{a.slack_ms:g} ms): {'excess ' + format(ex, '.0f') if ex > 0 else 'within'}")
    return 1 if ex > 0 else 0


if __name__ == "__main__":
    sys.exit(main())
