# storm_read.py CAP [SRC]: the spurious retransmissions (D-SACKed later) of skiff's send in a
# bench-tcp capture (BENCH_TCP_PCAP=1, taken on skiff's side): whether each was SACKed before it
# was resent, how long after its first send, and how much was SACKed above it then.
# SRC: the sender's address in the capture (default 198.18.0.2, a serial run's namespace; the
# parallel grid's jobs use 198.18.N.2).
import re
import subprocess
import sys

if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
    print('usage: storm_read.py CAP [SRC]')
    sys.exit(0 if len(sys.argv) >= 2 else 2)
cap = sys.argv[1]
src = sys.argv[2] if len(sys.argv) > 2 else '198.18.0.2'
out = subprocess.run(['tcpdump', '-r', cap, '-tt', '-n', '-S'], capture_output=True,
                     text=True).stdout.splitlines()

first = {}    # segment start -> time of its first send
ever = []     # every SACK block above the cumulative ACK seen so far
dsack = []    # (l, r): blocks below the cumulative ACK, duplicates the peer got
resends = []  # (t, l, r, first sent, SACKed before, una, highest SACKed edge)
una = top = 0
t0 = None
for ln in out:
    m = re.match(r'(\d+\.\d+) IP (\S+)\.\d+ > \S+: Flags \[[^\]]*\](.*)', ln)
    if not m:
        continue
    t = float(m.group(1))
    t0 = t if t0 is None else t0
    t -= t0
    rest = m.group(3)
    if m.group(2) == src:
        ms = re.search(r'seq (\d+):(\d+)', rest)
        if ms:
            l, r = int(ms.group(1)), int(ms.group(2))
            if l in first:
                seen = any(a <= l and r <= b for a, b in ever)
                resends.append((t, l, r, first[l], seen, una, top))
            else:
                first[l] = t
        continue
    ma = re.search(r'ack (\d+)', rest)
    if ma:
        una = int(ma.group(1))
    mb = re.search(r'sack \d+ \{([^}]*)\}', rest)
    if mb:
        for b in mb.group(1).split('}{'):
            l, r = map(int, b.split(':'))
            if r <= una:
                dsack.append((l, r))
            else:
                ever.append((l, r))
                top = max(top, r)

spur = [e for e in resends if any(dl <= e[1] < dr for dl, dr in dsack)]
print(f"retransmitted segments {len(resends)}, D-SACKed ones {len(spur)}, "
      f"of them SACKed before their resend {sum(1 for e in spur if e[4])}")
last, start, cnt, cov = -1.0, 0.0, 0, 0
for e in spur:
    if e[0] - last > 0.005:
        if cnt:
            print(f"  burst at {start:.3f}s: {cnt} spurious resends, {cov} of them SACKed before")
        start, cnt, cov = e[0], 0, 0
    cnt += 1
    cov += e[4]
    last = e[0]
if cnt:
    print(f"  burst at {start:.3f}s: {cnt} spurious resends, {cov} of them SACKed before")
base = min(first) if first else 0
for t, l, r, ft, _, u, tp in spur[:25]:
    print(f"  t {t:.4f} resend {l-base}:{r-base} first sent {ft:.4f} (age {1000*(t-ft):.1f} ms) "
          f"una {u-base} top-sacked {tp-base} (above: {(tp-r)//1448} segs)")
if spur:
    ages = sorted(1000 * (e[0] - e[3]) for e in spur)
    above = sorted((e[6] - e[2]) // 1448 for e in spur)
    md = len(ages) // 2
    print(f"spurious resends: age since first sent {ages[0]:.1f}/{ages[md]:.1f}/{ages[-1]:.1f} ms "
          f"(min/median/max); segments SACKed above {above[0]}/{above[md]}/{above[-1]}")
