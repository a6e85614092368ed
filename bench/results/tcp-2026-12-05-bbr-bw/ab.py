#!/usr/bin/env python3
"""ab.py ROOT: aggregate ROOT/<bin>-<delay>-<rep>/runs.tsv (ab.sh's output) for
the binaries old, new, new2 (those present): medians (ranges) of goodput per
binary, stack and cell, each against old and Linux BBR, and median
retransmissions per transfer.  Prints two markdown tables (skiff-bbr with
Linux BBR; skiff CUBIC) and writes ROOT/ab-runs.tsv (every run, with
lost_retransmits and dsacks_in from the skiff runs' --stats).  (The
tcp-2026-12-05-bbr-sack folder's ab.py, for more than two binaries.)"""
import glob, os, re, statistics, sys

root = sys.argv[1]
rows, allrows, bins = {}, [], []
for d in sorted(glob.glob(os.path.join(root, '*-*-*'))):
    if not os.path.isdir(d):
        continue
    b, delay, rep = os.path.basename(d).split('-')
    f = os.path.join(d, 'runs.tsv')
    if not os.path.exists(f):
        continue
    if b not in bins:
        bins.append(b)
    lines = open(f).read().split('\n')
    hdr = lines[0].split('\t')
    for ln in lines[1:]:
        if not ln.strip():
            continue
        r = dict(zip(hdr, ln.split('\t')))
        st = {}
        sf = os.path.join(d, 'traces', f"{r['delay_ms']}-{r['loss_pct']}-{r['stack']}-send-1.stats")
        if os.path.exists(sf):
            for m in re.finditer(r'^tcp_(\w+) (\d+)$', open(sf).read(), re.M):
                st[m.group(1)] = int(m.group(2))
        who = b if r['stack'].startswith('skiff') else 'linux'
        key = (who, r['stack'], int(r['delay_ms']), r['loss_pct'])
        rows.setdefault(key, []).append((float(r['goodput_mib_s']), int(r['ok']), int(r['retrans'])))
        allrows.append((b, r['stack'], delay, r['loss_pct'], rep, r['ok'], r['goodput_mib_s'], r['retrans'],
                        r['rto'], st.get('lost_retransmits', ''), st.get('dsacks_in', '')))
bins = [b for b in ('old', 'new', 'new2') if b in bins]

def med(v):
    return statistics.median(v) if v else float('nan')

def cell(v):
    if not v:
        return '–'
    g = [x[0] for x in v]
    return f"{med(g):.2f} ({min(g):.2f}–{max(g):.2f}, n={len(g)})"

for stack, lin in (('skiff-bbr', 'linux-bbr'), ('skiff', None)):
    print(f"\n{stack}:\n")
    hdr = '| delay | loss |' + ''.join(f' {b} MiB/s |' for b in bins)
    hdr += ''.join(f' {b} / old |' for b in bins if b != 'old')
    if lin:
        hdr += ' Linux BBR MiB/s |' + ''.join(f' {b} / Linux |' for b in bins)
    hdr += ' rtx (median) ' + ' / '.join(bins) + (' / Linux' if lin else '') + ' | failed |'
    print(hdr)
    print('|' + '|'.join(['---'] * (hdr.count('|') - 1)) + '|')
    for delay in (10, 25, 50):
        for loss in ('1', '2'):
            v = {b: rows.get((b, stack, delay, loss), []) for b in bins}
            l = rows.get(('linux', lin, delay, loss), []) if lin else []
            if not any(v.values()):
                continue
            g = {b: med([x[0] for x in v[b]]) for b in bins}
            line = f"| {delay} ms | {loss} % |" + ''.join(f" {cell(v[b])} |" for b in bins)
            line += ''.join(f" {g[b] / g['old']:.2f}x |" for b in bins if b != 'old')
            if lin:
                gl = med([x[0] for x in l])
                line += f" {cell(l)} |" + ''.join(f" {g[b] / gl:.2f}x |" for b in bins)
            rt = [f"{med([x[2] for x in v[b]]):.0f}" for b in bins] + ([f"{med([x[2] for x in l]):.0f}"] if lin else [])
            line += ' ' + ' / '.join(rt) + ' |'
            line += f" {sum(1 for b in bins for x in v[b] if not x[1]) + sum(1 for x in l if not x[1])} |"
            print(line)

with open(os.path.join(root, 'ab-runs.tsv'), 'w') as f:
    f.write('bin\tstack\tdelay_ms\tloss_pct\trep\tok\tgoodput_mib_s\tretrans\trto\tlost_retransmits\tdsacks_in\n')
    for r in allrows:
        f.write('\t'.join(map(str, r)) + '\n')
