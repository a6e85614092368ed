#!/usr/bin/env python3
"""tcp_ab.py ROOT [BINS]: the tables of a bench/tcp_ab.sh A/B.

Reads ROOT/<bin>-<delay>-<rep>/runs.tsv (and, for skiff's runs, the
--stats files under traces/).  BINS ("old new new2"; default: "old" first if
present, the rest sorted) orders the binaries; the first is the baseline.
Prints one markdown table per skiff stack found (skiff-bbr beside Linux BBR
of the same repetitions, skiff's CUBIC beside Linux CUBIC where the runs had
it, AB_LINUX=linux-cubic): per cell the median goodput
(range, n) of each binary, each against the baseline and against Linux,
the median retransmissions per transfer and the failed transfers; then per
pair: the median over the repetitions of each binary's goodput over the
baseline's and over Linux's in the same repetition (the same seed and the
same minute: a steadier figure than the ratio of medians, which the runs'
spread moves), with how many pairs it beat.  Writes
ROOT/ab-runs.tsv: every run, with rto and, from --stats, lost_retransmits,
dsacks_in, sack_score_full, sack_score_grows, sack_recoveries,
fast_retransmits and recovery_chained (episodes begun on the ACK that
ended the last)."""
import glob
import os
import re
import statistics
import sys

STATS = ('lost_retransmits', 'dsacks_in', 'sack_score_full', 'sack_score_grows', 'sack_recoveries',
         'fast_retransmits', 'recovery_chained')


def pairs_table(rows, stack, lin, bins, cells):
    """Per cell, each binary against the baseline and against Linux, pair by
    pair (transfers that matched only): median ratio, pairs, pairs beaten."""
    base = bins[0]

    def by_rep(who, st, delay, loss):
        return {x[3]: x[0] for x in rows.get((who, st, delay, loss), []) if x[1]}

    def ratio(a, b):
        reps = sorted(set(a) & set(b))
        if not reps:
            return '–'
        q = [a[r] / b[r] for r in reps]
        return f"{statistics.median(q):.2f}x (n={len(q)}, {sum(1 for x in q if x > 1)} above)"

    cols = [f' {b} / {base} |' for b in bins[1:]] + ([f' {b} / Linux |' for b in bins] if lin else [])
    if not cols:
        return
    print(f"\n{stack}, per pair (the same repetition):\n")
    hdr = '| delay | loss |' + ''.join(cols)
    print(hdr)
    print('|' + '|'.join(['---'] * (hdr.count('|') - 1)) + '|')
    for delay, loss in cells:
        v = {b: by_rep(b, stack, delay, loss) for b in bins}
        if not any(v.values()):
            continue
        line = f"| {delay} ms | {loss} % |" + ''.join(f" {ratio(v[b], v[base])} |" for b in bins[1:])
        if lin:
            lv = by_rep('linux', lin, delay, loss)
            line += ''.join(f" {ratio(v[b], lv)} |" for b in bins)
        print(line)


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    root = sys.argv[1]
    rows, allrows, found = {}, [], set()
    for d in sorted(glob.glob(os.path.join(root, '*-*-*'))):
        f = os.path.join(d, 'runs.tsv')
        if not os.path.isdir(d) or not os.path.exists(f):
            continue
        b, _delay, rep = os.path.basename(d).split('-')
        found.add(b)
        lines = open(f).read().split('\n')
        hdr = lines[0].split('\t')
        for ln in lines[1:]:
            if not ln.strip():
                continue
            r = dict(zip(hdr, ln.split('\t')))
            st = {}
            sf = os.path.join(d, 'traces', f"{r['delay_ms']}-{r['loss_pct']}-{r['stack']}-{r['role']}-1.stats")
            if os.path.exists(sf):
                for m in re.finditer(r'^tcp_(\w+) (\d+)$', open(sf).read(), re.M):
                    st[m.group(1)] = int(m.group(2))
            who = b if r['stack'].startswith('skiff') else 'linux'
            key = (who, r['stack'], int(r['delay_ms']), r['loss_pct'])
            rows.setdefault(key, []).append((float(r['goodput_mib_s']), int(r['ok']), int(r['retrans']), rep))
            allrows.append([b, r['stack'], r['delay_ms'], r['loss_pct'], rep, r['ok'], r['goodput_mib_s'],
                            r['retrans'], r['rto']] + [st.get(k, '') for k in STATS])
    if len(sys.argv) > 2:
        bins = [b for b in sys.argv[2].split() if b in found]
    else:
        bins = (['old'] if 'old' in found else []) + sorted(found - {'old'})
    if not bins:
        print(f"tcp_ab.py: no runs under {root}", file=sys.stderr)
        return 1
    base = bins[0]
    cells = sorted({(k[2], k[3]) for k in rows}, key=lambda c: (c[0], float(c[1])))
    stacks = sorted({k[1] for k in rows if k[0] != 'linux'}, key=lambda s: s != 'skiff-bbr')

    def med(v):
        return statistics.median(v) if v else float('nan')

    def cell(v):
        if not v:
            return '–'
        g = [x[0] for x in v]
        return f"{med(g):.2f} ({min(g):.2f}–{max(g):.2f}, n={len(g)})"

    for stack in stacks:
        lin = {'skiff-bbr': 'linux-bbr', 'skiff': 'linux-cubic'}[stack]
        if not any(k[1] == lin for k in rows):
            lin = None
        lname = {'linux-bbr': 'Linux BBR', 'linux-cubic': 'Linux CUBIC'}.get(lin)
        print(f"\n{stack}:\n")
        hdr = '| delay | loss |' + ''.join(f' {b} MiB/s |' for b in bins)
        hdr += ''.join(f' {b} / {base} |' for b in bins[1:])
        if lin:
            hdr += f' {lname} MiB/s |' + ''.join(f' {b} / Linux |' for b in bins)
        hdr += ' rtx (median) ' + ' / '.join(bins) + (' / Linux' if lin else '') + ' | failed |'
        print(hdr)
        print('|' + '|'.join(['---'] * (hdr.count('|') - 1)) + '|')
        for delay, loss in cells:
            v = {b: rows.get((b, stack, delay, loss), []) for b in bins}
            l = rows.get(('linux', lin, delay, loss), []) if lin else []
            if not any(v.values()):
                continue
            g = {b: med([x[0] for x in v[b]]) for b in bins}
            line = f"| {delay} ms | {loss} % |" + ''.join(f" {cell(v[b])} |" for b in bins)
            line += ''.join(f" {g[b] / g[base]:.2f}x |" for b in bins[1:])
            if lin:
                gl = med([x[0] for x in l])
                line += f" {cell(l)} |" + ''.join(f" {g[b] / gl:.2f}x |" for b in bins)
            rt = [f"{med([x[2] for x in v[b]]):.0f}" for b in bins]
            rt += [f"{med([x[2] for x in l]):.0f}"] if lin else []
            line += ' ' + ' / '.join(rt) + ' |'
            line += f" {sum(1 for b in bins for x in v[b] if not x[1]) + sum(1 for x in l if not x[1])} |"
            print(line)
        pairs_table(rows, stack, lin, bins, cells)

    with open(os.path.join(root, 'ab-runs.tsv'), 'w') as f:
        f.write('\t'.join(('bin', 'stack', 'delay_ms', 'loss_pct', 'rep', 'ok', 'goodput_mib_s', 'retrans',
                           'rto') + STATS) + '\n')
        for r in allrows:
            f.write('\t'.join(map(str, r)) + '\n')
    return 0


if __name__ == '__main__':
    sys.exit(main())
