#!/usr/bin/env python3
"""Aggregate /tmp/abN/<bin>-<d>-<rep>/runs.tsv: medians per binary/stack/cell,
plus retransmits/rto from the runs, and lost_retransmits/sack_score_full/dsacks_in
from the saved .stats files."""
import sys, os, glob, statistics, re
root = sys.argv[1]; old, new = sys.argv[2], sys.argv[3]
rows = {}
allrows = []
for d in sorted(glob.glob(os.path.join(root, '*-*-*'))):
    if not os.path.isdir(d): continue
    b, delay, rep = os.path.basename(d).split('-')
    f = os.path.join(d, 'runs.tsv')
    if not os.path.exists(f): continue
    lines = open(f).read().split('\n')
    hdr = lines[0].split('\t')
    for ln in lines[1:]:
        if not ln.strip(): continue
        r = dict(zip(hdr, ln.split('\t')))
        key = (b if r['stack'] == 'skiff-bbr' else 'linux', int(r['delay_ms']), r['loss_pct'])
        st = {}
        sf = os.path.join(d, 'traces', f"{r['delay_ms']}-{r['loss_pct']}-{r['stack']}-send-1.stats")
        if r['stack'] == 'skiff-bbr' and os.path.exists(sf):
            for m in re.finditer(r'^tcp_(\w+) (\d+)$', open(sf).read(), re.M):
                st[m.group(1)] = int(m.group(2))
        rows.setdefault(key, []).append((float(r['goodput_mib_s']), int(r['ok']), int(r['retrans']), int(r['rto']), st))
        allrows.append((b, r['stack'], delay, r['loss_pct'], rep, r['ok'], r['goodput_mib_s'], r['retrans'], r['rto'],
                        st.get('lost_retransmits', ''), st.get('sack_score_full', ''), st.get('dsacks_in', '')))
def med(v): return statistics.median(v) if v else float('nan')
print('| delay | loss | old | new | new / old | Linux BBR | new / Linux | rtx old → new | RTOs old → new (sum) | lost rtx found (new, sum) | failed |')
print('|---|---|--:|--:|--:|--:|--:|---|---|---|---|')
for delay in (10, 25, 50):
    for loss in ('1', '2'):
        o = rows.get((old, delay, loss), []); n = rows.get((new, delay, loss), []); l = rows.get(('linux', delay, loss), [])
        if not o and not n: continue
        go = med([x[0] for x in o]); gn = med([x[0] for x in n]); gl = med([x[0] for x in l])
        fo = sum(1 for x in o + n + l if not x[1])
        rng = lambda v: f"{min(x[0] for x in v):.2f}–{max(x[0] for x in v):.2f}" if v else ''
        print(f"| {delay} ms | {loss} % | {go:.2f} ({rng(o)}) | {gn:.2f} ({rng(n)}) | {gn/go:.2f}x | {gl:.2f} ({rng(l)}) | {gn/gl:.2f}x | "
              f"{med([x[2] for x in o]):.0f} → {med([x[2] for x in n]):.0f} | {sum(x[3] for x in o)} → {sum(x[3] for x in n)} | "
              f"{sum(x[4].get('lost_retransmits',0) for x in n)} | {fo} |")
with open(os.path.join(root, 'ab-runs.tsv'), 'w') as f:
    f.write('bin\tstack\tdelay_ms\tloss_pct\trep\tok\tgoodput_mib_s\tretrans\trto\tlost_retransmits\tsack_score_full\tdsacks_in\n')
    for r in allrows: f.write('\t'.join(map(str, r)) + '\n')
