#!/usr/bin/env python3
"""ab.py ROOT: aggregate ROOT/<old|new>-<delay>-<rep>/runs.tsv (ab.sh's output):
medians (and ranges) of goodput per binary, stack and cell, retransmissions per
transfer, RTOs, and from the skiff runs' --stats: sack_score_full,
sack_score_grows, dsacks_in.  Prints two markdown tables (skiff-bbr with Linux
BBR; skiff CUBIC) and writes ROOT/ab-runs.tsv (every run)."""
import glob, os, re, statistics, sys

root = sys.argv[1]
rows, allrows = {}, []
for d in sorted(glob.glob(os.path.join(root, '*-*-*'))):
    if not os.path.isdir(d):
        continue
    b, delay, rep = os.path.basename(d).split('-')
    f = os.path.join(d, 'runs.tsv')
    if not os.path.exists(f):
        continue
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
        rows.setdefault(key, []).append((float(r['goodput_mib_s']), int(r['ok']), int(r['retrans']), int(r['rto']), st))
        allrows.append((b, r['stack'], delay, r['loss_pct'], rep, r['ok'], r['goodput_mib_s'], r['retrans'], r['rto'],
                        st.get('sack_score_full', ''), st.get('sack_score_grows', ''), st.get('dsacks_in', ''),
                        st.get('lost_retransmits', '')))

def med(v):
    return statistics.median(v) if v else float('nan')

def rng(v):
    return f"{min(x[0] for x in v):.2f}–{max(x[0] for x in v):.2f}" if v else ''

def stat(v, k):
    return sum(x[4].get(k, 0) for x in v)

for stack, lin in (('skiff-bbr', 'linux-bbr'), ('skiff', None)):
    print(f"\n{stack}:\n")
    hdr = '| delay | loss | old MiB/s | new MiB/s | new / old |'
    if lin:
        hdr += ' Linux BBR | new / Linux | old / Linux |'
    hdr += ' rtx old → new (median) | RTOs old → new (sum) | sack_score_full old → new (sum) | dsacks_in old → new (sum) | boards taken (new, sum) | runs | failed |'
    print(hdr)
    print('|' + '|'.join(['---'] * (hdr.count('|') - 1)) + '|')
    for delay in (10, 25, 50):
        for loss in ('1', '2'):
            o = rows.get(('old', stack, delay, loss), [])
            n = rows.get(('new', stack, delay, loss), [])
            l = rows.get(('linux', lin, delay, loss), []) if lin else []
            if not o and not n:
                continue
            go, gn = med([x[0] for x in o]), med([x[0] for x in n])
            line = f"| {delay} ms | {loss} % | {go:.2f} ({rng(o)}) | {gn:.2f} ({rng(n)}) | {gn / go:.2f}x |"
            if lin:
                gl = med([x[0] for x in l])
                line += f" {gl:.2f} ({rng(l)}) | {gn / gl:.2f}x | {go / gl:.2f}x |"
            line += (f" {med([x[2] for x in o]):.0f} → {med([x[2] for x in n]):.0f}"
                     + (f" (Linux {med([x[2] for x in l]):.0f})" if l else '') + " |")
            line += f" {sum(x[3] for x in o)} → {sum(x[3] for x in n)} |"
            line += f" {stat(o, 'sack_score_full')} → {stat(n, 'sack_score_full')} |"
            line += f" {stat(o, 'dsacks_in')} → {stat(n, 'dsacks_in')} |"
            line += f" {stat(n, 'sack_score_grows')} |"
            line += f" {len(o)}/{len(n)}{'/' + str(len(l)) if lin else ''} |"
            line += f" {sum(1 for x in o + n + l if not x[1])} |"
            print(line)

with open(os.path.join(root, 'ab-runs.tsv'), 'w') as f:
    f.write('bin\tstack\tdelay_ms\tloss_pct\trep\tok\tgoodput_mib_s\tretrans\trto\tsack_score_full\tsack_score_grows\tdsacks_in\tlost_retransmits\n')
    for r in allrows:
        f.write('\t'.join(map(str, r)) + '\n')
