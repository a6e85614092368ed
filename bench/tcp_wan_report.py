#!/usr/bin/env python3
"""tcp_wan_report.py OUT — the tables and the chart of bench/tcp_wan.sh.

Reads OUT/runs.tsv (one line per transfer) and OUT/meta.txt, writes
OUT/table.md (goodput medians per cell, role and stack; retransmissions per
mechanism, medians per transfer; failed transfers counted, never dropped)
and OUT/goodput.png (gnuplot, pngcairo)."""
import csv
import os
import statistics
import subprocess
import sys

STACKS = ["skiff", "skiff-bbr", "skiff-fixed", "linux-cubic", "linux-bbr"]
ROLES = ["server", "client", "send"]
ROLE_DOC = {"server": "the stack under test is the echo server (Linux client sends)",
            "client": "the stack under test is the client (sends to a Linux echo server)",
            "send": "one way: the stack under test sends, a Linux sink receives "
                    "(seconds from the sink's accept to EOF)"}
MECH = ["retrans", "rto", "fast_rtx", "sack_recoveries", "tlp_probes", "tlp_recoveries", "undos"]


def med(xs):
    return statistics.median(xs) if xs else None


def goodput(r):
    """MiB/s from the size and the seconds (the column is derived from them)."""
    secs = float(r["secs"])
    return float(r["mib"]) / secs if secs > 0 else 0.0


def fmt(x, nd=2):
    return "—" if x is None else f"{x:.{nd}f}"


def main() -> int:
    out = sys.argv[1]
    with open(os.path.join(out, "runs.tsv")) as f:
        runs = list(csv.DictReader(f, delimiter="\t"))
    meta = open(os.path.join(out, "meta.txt")).read().strip() if os.path.exists(
        os.path.join(out, "meta.txt")) else ""
    # Sorted: a parallel grid (BENCH_TCP_JOBS) appends its rows in the
    # order its jobs finish.
    cells = sorted({(float(r["delay_ms"]), float(r["loss_pct"])) for r in runs})
    stacks = [s for s in STACKS if any(r["stack"] == s for r in runs)]
    roles = [x for x in ROLES if any(r["role"] == x for r in runs)]

    def sel(d, l, s, role):
        return [r for r in runs if float(r["delay_ms"]) == d and float(r["loss_pct"]) == l
                and r["stack"] == s and r["role"] == role]

    lines = ["# skiff's TCP against Linux's through skiff impair", "", "```", meta, "```", "",
             "Goodput in MiB/s (payload of one direction / seconds), median of the runs "
             "that matched (sha256); `n/N` when some failed.  One-way delay and loss "
             "applied in both directions.  Stacks: skiff is skiff's default, CUBIC; "
             "skiff-bbr its BBR v1 (--tcp-cc bbr); skiff-fixed CUBIC with fixed "
             "buffers; linux-cubic and linux-bbr set per socket (TCP_CONGESTION).", ""]
    failed = [r for r in runs if r["ok"] != "1"]
    lines.append(f"Transfers: {len(runs)}, failed (sha256 mismatch, error or timeout): "
                 f"{len(failed)}" + "".join(
                     f"; {r['delay_ms']} ms {r['loss_pct']} % {r['stack']} {r['role']} "
                     f"rep {r['rep']}" for r in failed) + ".")
    phases = {}
    for r in runs:
        phases.setdefault(r.get("phase") or "serial", set()).add(
            (float(r["delay_ms"]), float(r["loss_pct"])))
    if "parallel" in phases:
        lines.append("Cells run alone (serial): " + (", ".join(
            f"{d:g} ms {l:g} %" for d, l in sorted(phases.get("serial", ()))) or "none")
            + "; the others in parallel jobs (BENCH_TCP_JOBS).")
    lines.append("")
    chart = []
    for role in roles:
        lines += [f"## role {role}: {ROLE_DOC[role]}", ""]
        head = "| delay | loss | MiB | " + " | ".join(stacks)
        if "skiff" in stacks and "linux-cubic" in stacks:
            head += " | skiff / cubic"
        if "skiff" in stacks and "linux-bbr" in stacks:
            head += " | skiff / bbr"
        if "skiff-bbr" in stacks and "linux-bbr" in stacks:
            head += " | skiff-bbr / bbr"
        if "skiff" in stacks and "skiff-fixed" in stacks:
            head += " | sized / fixed"
        lines += [head + " |", "|" + "---|" * head.count("|")]
        for d, l in cells:
            mib = sorted({r["mib"] for r in runs if float(r["delay_ms"]) == d
                          and float(r["loss_pct"]) == l})
            row = [f"{d:g} ms", f"{l:g} %", "/".join(mib)]
            g = {}
            for s in stacks:
                rs = sel(d, l, s, role)
                ok = [goodput(r) for r in rs if r["ok"] == "1"]
                g[s] = med(ok)
                cell = fmt(g[s])
                if len(ok) != len(rs):
                    cell += f" ({len(ok)}/{len(rs)})"
                row.append(cell)
            if "skiff" in stacks and "linux-cubic" in stacks:
                a, b = g.get("skiff"), g.get("linux-cubic")
                row.append(f"{a / b:.2f}x" if a and b else "—")
            if "skiff" in stacks and "linux-bbr" in stacks:
                a, b = g.get("skiff"), g.get("linux-bbr")
                row.append(f"{a / b:.2f}x" if a and b else "—")
            if "skiff-bbr" in stacks and "linux-bbr" in stacks:
                a, b = g.get("skiff-bbr"), g.get("linux-bbr")
                row.append(f"{a / b:.2f}x" if a and b else "—")
            if "skiff" in stacks and "skiff-fixed" in stacks:
                a, b = g.get("skiff"), g.get("skiff-fixed")
                row.append(f"{a / b:.2f}x" if a and b else "—")
            lines.append("| " + " | ".join(row) + " |")
            chart.append((role, d, l, [g.get(s) for s in stacks]))
        lines.append("")
    lines += ["## retransmissions per transfer (medians)", "",
              "skiff: --stats counters (retransmits, rto_fires, fast_retransmits, "
              "sack_recoveries, tlp_probes, tlp_recoveries, spurious_undos).  Linux: the "
              "srv namespace's Tcp RetransSegs and TcpExt TCPTimeouts, TCPFastRetrans, "
              "TCPSackRecovery, TCPLossProbes, TCPLossProbeRecovery, "
              "TCPDSACKUndo + TCPSpuriousRTOs.  Relay CPU: % of a core during the transfer.", "",
              "| delay | loss | role | stack | " + " | ".join(MECH) + " | relay cpu % |",
              "|" + "---|" * (5 + len(MECH))]
    for d, l in cells:
        for role in roles:
            for s in stacks:
                rs = sel(d, l, s, role)
                if not rs:
                    continue
                vals = [fmt(med([float(r[m]) for r in rs]), 0) for m in MECH]
                cpu = fmt(med([float(r["relay_cpu_pct"]) for r in rs]), 0)
                lines.append(f"| {d:g} ms | {l:g} % | {role} | {s} | " + " | ".join(vals)
                             + f" | {cpu} |")
    lines.append("")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("\n".join(lines))

    # The chart: one cluster of bars per (role, cell).
    dat = os.path.join(out, "goodput.dat")
    with open(dat, "w") as f:
        f.write("label " + " ".join(stacks) + "\n")
        for role, d, l, g in chart:
            f.write(f'"{role} {d:g}ms/{l:g}%" ' +
                    " ".join("0" if x is None else f"{x:.3f}" for x in g) + "\n")
    plot = [
        "set terminal pngcairo size 1600,560 font 'sans,10'",
        f"set output '{os.path.join(out, 'goodput.png')}'",
        "set title \"Goodput through skiff impair (one-way delay / loss each way), median\"",
        "set ylabel 'MiB/s'", "set logscale y", "set yrange [0.05:*]",
        "set style data histograms", "set style histogram clustered gap 1",
        "set style fill solid 0.8 border -1", "set key top right", "set grid ytics",
        "set xtics rotate by -30",
        "plot " + ", ".join(f"'{dat}' using {i + 2}:xtic(1) title columnheader"
                            for i in range(len(stacks))),
    ]
    subprocess.run(["gnuplot"], input="\n".join(plot), text=True, check=True)
    print(open(os.path.join(out, "table.md")).read())
    return 0


if __name__ == "__main__":
    sys.exit(main())
