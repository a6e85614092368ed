#!/usr/bin/env python3
# pairs.py TSV A B [STACK]: per cell of a tcp_ab.sh A/B (its ab-runs.tsv), the median of each
# repetition's B/A goodput ratio (n, how many B faster), and A and B each against Linux in the
# same repetition; STACK is skiff's stack compared (default skiff-bbr).
import sys, statistics as st, collections
tsv, A, B = sys.argv[1:4]; stack = sys.argv[4] if len(sys.argv) > 4 else 'skiff-bbr'
d = collections.defaultdict(dict)
for ln in open(tsv).read().split('\n')[1:]:
    if not ln.strip(): continue
    f = ln.split('\t')
    b, s, delay, loss, rep, ok, gp = f[:7]
    if int(ok) != 1: print('FAILED', f); continue
    who = b if s == stack else ('linux' if s.startswith('linux') else None)
    if who is None: continue
    d[(int(delay), loss)][(who, rep)] = float(gp)
for cell in sorted(d):
    m = d[cell]; reps = sorted({r for (_, r) in m})
    rb = [m[(B, r)] / m[(A, r)] for r in reps if (A, r) in m and (B, r) in m]
    la = [m[(A, r)] / m[('linux', r)] for r in reps if (A, r) in m and ('linux', r) in m]
    lb = [m[(B, r)] / m[('linux', r)] for r in reps if (B, r) in m and ('linux', r) in m]
    f = lambda x: f"{st.median(x):.2f}x" if x else '-'
    print(f"{cell[0]:>3} ms {cell[1]:>4} %  {B}/{A} {f(rb)} (n={len(rb)}, {sum(1 for x in rb if x > 1)} faster)"
          f"  {A}/linux {f(la)}  {B}/linux {f(lb)}"
          f"  med A {st.median([m[(A,r)] for r in reps if (A,r) in m]):.2f} B {st.median([m[(B,r)] for r in reps if (B,r) in m]):.2f}")
