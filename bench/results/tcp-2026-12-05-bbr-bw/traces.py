#!/usr/bin/env python3
"""traces.py ROOT [ROOT...]: from the skiff-bbr runs' --tcp-trace files
(ROOT/<bin>-<delay>-<rep>/traces/<delay>-<loss>-skiff-bbr-send-1.tsv, one row
per 10 ms) and the runs' goodput (runs.tsv): the median pacing rate against
the goodput (pacing_rate is gain x BtlBw, so it shows the estimate against what
the path delivered), and, in the rows where the sender was held by pacing
alone (more than 3 segments of room in cwnd, over 64 KiB unsent), the flight
against pacing_rate x srtt (1.0: the pacing delivers the rate it is set to)."""
import csv, glob, os, statistics, sys

print('| run | goodput MB/s | pacing rate median (max) MB/s | pacing / goodput | rows pacing-limited | flight / (pacing x srtt), median |')
print('|---|--:|--:|--:|--:|--:|')
for root in sys.argv[1:]:
    for f in sorted(glob.glob(os.path.join(root, '*', 'traces', '*-skiff-bbr-send-1.tsv'))):
        run = f.split(os.sep)[-3]
        cellf = os.path.basename(f)
        d, l = cellf.split('-')[:2]
        gp = None
        for r in csv.DictReader(open(os.path.join(root, run, 'runs.tsv')), delimiter='\t'):
            if r['stack'] == 'skiff-bbr' and r['delay_ms'] == d and r['loss_pct'] == l:
                gp = float(r['goodput_mib_s']) * 1.048576
        rows = [r for r in csv.DictReader(open(f), delimiter='\t') if r['state'] == 'ESTABLISHED']
        if not rows or not gp:
            continue
        p = [int(r['pacing_rate']) for r in rows]
        lim = [r for r in rows if int(r['cwnd']) - int(r['pipe']) > 3 * 1448 and int(r['unsent']) > 65536
               and int(r['srtt_us']) > 0 and int(r['pacing_rate']) > 0]
        ratio = [int(r['pipe']) / (int(r['pacing_rate']) * int(r['srtt_us']) / 1e6) for r in lim]
        pm = statistics.median(p) / 1e6
        print(f"| {run} {d} ms {l} % | {gp:.1f} | {pm:.1f} ({max(p) / 1e6:.0f}) | {pm / gp:.1f}x | "
              f"{100 * len(lim) / len(rows):.0f} % | {statistics.median(ratio) if ratio else float('nan'):.2f} |")
