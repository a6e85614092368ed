# storm_read.py CAP: the spurious retransmissions (D-SACKed later) of skiff's send in a bench-tcp
# capture (BENCH_TCP_PCAP=1, taken on skiff's side): whether each was SACKed before it was
# resent, how long after its first send, and how much was SACKed above it then.
# SRC: skiff's address in the capture (default 198.18.0.2, a serial run's namespace; the
# parallel grid's jobs use 198.18.N.2).
import re, sys, subprocess
if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
    print('usage: storm_read.py CAP [SRC]')
    sys.exit(0 if len(sys.argv) >= 2 else 2)
cap = sys.argv[1]
out = subprocess.run(['tcpdump', '-r', cap, '-tt', '-n', '-S'], capture_output=True, text=True).stdout.splitlines()
src = sys.argv[2] if len(sys.argv) > 2 else '198.18.0.2'
sent = {}      # seq -> count
sacked = []    # list of (l,r) ever sacked (merged lazily)
ever = []      # intervals ever sacked
una = None
t0 = None
rtx_events = []  # (t, seq, end, was_sacked_before, una_at)
dsack = []
def covered(l, r):
    for a, b in ever:
        if a <= l and r <= b:
            return True
    return False
for ln in out:
    m = re.match(r'(\d+\.\d+) IP (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\](.*)', ln)
    if not m: continue
    t = float(m.group(1)); t0 = t0 or t
    rest = m.group(7)
    if m.group(2) == src:
        ms = re.search(r'seq (\d+):(\d+)', rest)
        if ms:
            l, r = int(ms.group(1)), int(ms.group(2))
            # split per mss-ish: key by start
            if l in sent:
                rtx_events.append((t - t0, l, r, covered(l, r), una))
            sent[l] = sent.get(l, 0) + 1
    else:
        ma = re.search(r'ack (\d+)', rest)
        if ma: una = int(ma.group(1))
        mb = re.search(r'sack \d+ \{([^}]*)\}', rest)
        if mb:
            blocks = [tuple(map(int, b.split(':'))) for b in mb.group(1).split('}{')]
            for i, (l, r) in enumerate(blocks):
                if una is not None and r <= una:
                    dsack.append((t - t0, l, r))
                else:
                    ever.append((l, r))
sp = set((l) for _, l, r in dsack)
n = len(rtx_events)
spur = [e for e in rtx_events if any(dl <= e[1] < dr for _, dl, dr in dsack)]
print(f"retransmitted segments {n}, D-SACKed ones {len(spur)}, of them SACKed before their resend {sum(1 for e in spur if e[3])}")
# group spurious by time bursts
last = -1; start = None; cnt = 0; cov = 0
for e in spur:
    if e[0] - last > 0.005:
        if cnt: print(f"  burst at {start:.3f}s: {cnt} spurious resends, {cov} of them SACKed before")
        start = e[0]; cnt = 0; cov = 0
    cnt += 1; cov += e[3]; last = e[0]
if cnt: print(f"  burst at {start:.3f}s: {cnt} spurious resends, {cov} of them SACKed before")
# detail: original send time of the spurious ones
first = {}
hi = {}
una = None; top = 0
events = []
for ln in out:
    m = re.match(r'(\d+\.\d+) IP (\S+)\.(\d+) > (\S+)\.(\d+): Flags \[([^\]]*)\](.*)', ln)
    if not m: continue
    t = float(m.group(1)) - t0; rest = m.group(7)
    if m.group(2) == src:
        ms = re.search(r'seq (\d+):(\d+)', rest)
        if ms:
            l = int(ms.group(1))
            if l not in first: first[l] = t
            else: events.append((t, l, int(ms.group(2)), first[l], una, top))
    else:
        ma = re.search(r'ack (\d+)', rest)
        if ma: una = int(ma.group(1))
        mb = re.search(r'sack \d+ \{([^}]*)\}', rest)
        if mb:
            for b in mb.group(1).split('}{'):
                l, r = map(int, b.split(':'))
                if una is None or r > una: top = max(top, r)
base = min(first)
spurset = set(e[1] for e in spur)
shown = 0
for t, l, r, ft, u, tp in events:
    if l in spurset and shown < 25:
        print(f"  t {t:.4f} resend {l-base}:{r-base} first sent {ft:.4f} (age {1000*(t-ft):.1f} ms) una {u-base} top-sacked {tp-base} (above: {(tp-r)//1448} segs)")
        shown += 1
ages = sorted(1000 * (t - ft) for t, l, r, ft, u, tp in events if l in spurset)
abv = sorted((tp - r) // 1448 for t, l, r, ft, u, tp in events if l in spurset)
if ages:
    md = lambda v: v[len(v) // 2]
    print(f"spurious resends: age since first sent {ages[0]:.1f}/{md(ages):.1f}/{ages[-1]:.1f} ms (min/median/max); segments SACKed above {abv[0]}/{md(abv)}/{abv[-1]}")
