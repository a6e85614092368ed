#!/usr/bin/env python3
"""tcp_trace_plot.py [--start S] OUTDIR [OUTDIR2 ...] — the send runs'
connection traces of bench/tcp_wan.sh side by side, one PNG per cell.

Reads OUTDIR/traces/*.tsv (bench/tcp_wan.sh) and OUTDIR/*/traces/*.tsv
(bench/tcp_ab.sh: one tcp_wan.sh folder per binary, delay and repetition,
BIN-DELAY-REP/traces/DELAY-LOSS-STACK-send-1.tsv).  A trace is skiff's
(`skiff tcp-client --tcp-trace`) or Linux's (`tests/tcp_echo.py send
--trace`, TCP_INFO); both have the columns ms, cwnd, pipe, srtt_us and
pacing_rate in bytes, us and bytes/s, and the bytes acked (skiff's `acked`,
Linux's `bytes_acked`; skiff's traces from before that column have no
progress curve).  Only each trace's first connection (skiff's conn 0) is
drawn.

For each cell (one-way delay, loss) it writes OUTDIR/trace-DELAY-LOSS.png:
four panels over the seconds since the SYN, one line per run (stack,
repetition, and for tcp_ab.sh the binary): MiB acked (progress); cwnd
(solid) and pipe (dashed), KiB; pacing rate (solid) and, for Linux, its
delivery rate (dashed), Mbit/s; smoothed RTT, ms.  With --start S > 0 also
OUTDIR/trace-DELAY-LOSS-start.png, the same over the first S seconds
(startup).  The plots are gnuplot's (pngcairo), like bench/tcp_wan_report.py.

It prints (and writes to OUTDIR/trace-summary.md) one row per run:
  goodput    MiB acked at the end / the time the last byte was acked
  est        the first ESTABLISHED sample, ms since the SYN (the times
             below count from it, but startup end: a lost SYN shifts a run)
  cwnd@+100, cwnd@+300, pace@+100, pace@+300
             cwnd (KiB) and pacing rate (Mbit/s) 100 and 300 ms after est
  startup end
             ms since the SYN of the first sample in another state than
             startup where the trace names BBR's (bbr_mode, in samples with
             an estimate: skiff's since 2026-12-07, Linux's from TCP_CC_INFO;
             "—": never), else of the
             first sample whose pacing rate is below 0.6x the largest before
             it (BBR's drain, or a loss response); and the largest pacing rate
             before it; samples before the first RTT sample (srtt 0) are left
             out
  med pace, med cwnd, med pipe, med srtt
             medians of the samples from est + 300 ms
  rtx        retransmissions at the end (skiff's and Linux's counters)"""
import argparse
import csv
import glob
import os
import re
import statistics
import subprocess
import sys
import tempfile

NAME = re.compile(r"^([0-9.]+)-([0-9.]+)-(.+)-(send|client|server)-([0-9]+)\.tsv$")
AB_DIR = re.compile(r"^([^-]+)-([0-9.]+)-([0-9]+)$")  # tcp_ab.sh's BIN-DELAY-REP
DROP = 0.6


def num(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


class Run:
    """One trace: its label, cell and samples (seconds, then the columns in
    plotting units; None where a column is missing)."""

    def __init__(self, path, sub, delay, loss, stack, rep):
        self.path, self.delay, self.loss, self.stack = path, delay, loss, stack
        m = AB_DIR.match(sub) if sub else None
        if m:
            self.label = f"{stack} {m.group(1)} r{m.group(3)}"
        elif sub:
            self.label = f"{stack} {sub} r{rep}"
        else:
            self.label = f"{stack} r{rep}"
        self.rows = []
        with open(path) as f:
            for r in csv.DictReader(f, delimiter="\t"):
                if r.get("conn", "0") != "0":
                    continue
                ms = num(r.get("ms"))
                if ms is None:
                    continue
                acked = num(r.get("acked", r.get("bytes_acked")))
                self.rows.append({
                    "s": ms / 1000, "ms": ms, "acked": acked, "state": r.get("state", ""),
                    "cwnd": num(r.get("cwnd")), "pipe": num(r.get("pipe")),
                    "pacing": num(r.get("pacing_rate")),
                    "delivery": num(r.get("delivery_rate")),
                    "srtt": num(r.get("srtt_us")), "rtx": num(r.get("retransmits")),
                    # BBR's state where it has an estimate (Linux's
                    # traces before 2026-12-07 01:10 named one without).
                    "mode": r.get("bbr_mode") or "" if num(r.get("bbr_bw")) else "",
                    "bw": num(r.get("bbr_bw")), "ca": r.get("ca_state", "")})

    def at(self, ms, key):
        """The column's value in the last sample at or before ms."""
        v = None
        for r in self.rows:
            if r["ms"] > ms:
                break
            v = r[key]
        return v

    def course(self):
        """BBR's course (bench/tcp_modes.py): (end ms, ms it left startup
        or None, its estimate then or None, its largest estimate, the share
        of samples in recovery) over the samples with an estimate; None
        where the trace has none."""
        rows = [r for r in self.rows if r["bw"]]
        if not rows:
            return None
        left = next((r for r in rows if r["mode"] != "startup"), None)
        rec = sum(1 for r in rows if r["ca"] == "recovery") / len(rows)
        return (rows[-1]["ms"], left["ms"] if left else None, left["bw"] if left else None,
                max(r["bw"] for r in rows), rec)

    def summary(self):
        # Times from the first ESTABLISHED sample (a lost SYN would shift
        # every run's curve by an RTO); the pacing rates before the first RTT
        # sample (srtt 0: an initial guess) are not BBR's estimate.
        est = next((r["ms"] for r in self.rows if r["state"] == "ESTABLISHED"), None)
        if est is None:
            return [None] * len(SUMMARY_HEAD[2:])
        rows = [r for r in self.rows if r["ms"] >= est]
        late = [r for r in rows if r["ms"] > est + 300]

        def med(key, scale):
            xs = [r[key] for r in late if r[key] is not None]
            return statistics.median(xs) / scale if xs else None

        good = None
        ackeds = [(r["s"], r["acked"]) for r in rows if r["acked"] is not None]
        if ackeds:
            top = max(a for _, a in ackeds)
            t = next(s for s, a in ackeds if a == top)
            good = top / (1 << 20) / t if t > 0 and top > 0 else None
        end_ms = peak = None
        best = 0.0
        named = any(r["mode"] for r in rows)
        for r in rows:
            p = r["pacing"]
            if p is None or p <= 0 or not r["srtt"]:
                continue
            if named and r["mode"] not in ("", "startup"):
                end_ms, peak = r["ms"], best or None
                break
            if not named and best > 0 and p < DROP * best:
                end_ms, peak = r["ms"], best
                break
            best = max(best, p)
        last = rows[-1] if rows else {}

        def sc(x, k):
            return None if x is None else x / k

        return [good, est, sc(self.at(est + 100, "cwnd"), 1024),
                sc(self.at(est + 300, "cwnd"), 1024), sc(self.at(est + 100, "pacing"), 125000),
                sc(self.at(est + 300, "pacing"), 125000),
                end_ms, sc(peak, 125000), med("pacing", 125000), med("cwnd", 1024),
                med("pipe", 1024), med("srtt", 1000), last.get("rtx")]


SUMMARY_HEAD = ["run", "cell", "goodput MiB/s", "est ms", "cwnd@+100 KiB", "cwnd@+300 KiB",
                "pace@+100 Mbit/s", "pace@+300 Mbit/s", "startup end ms",
                "peak pace Mbit/s", "med pace Mbit/s", "med cwnd KiB", "med pipe KiB",
                "med srtt ms", "rtx"]


def fmt(x, nd):
    return "—" if x is None else f"{x:.{nd}f}"


def find(out):
    runs = []
    for path in sorted(glob.glob(os.path.join(out, "traces", "*.tsv")) +
                       glob.glob(os.path.join(out, "*", "traces", "*.tsv"))):
        m = NAME.match(os.path.basename(path))
        if not m:
            continue
        sub = os.path.relpath(os.path.dirname(os.path.dirname(path)), out)
        r = Run(path, "" if sub == "." else sub, float(m.group(1)), float(m.group(2)),
                m.group(3), m.group(5))
        if r.rows:
            runs.append(r)
    return runs


def plot(runs, png, title, xmax, tmp):
    files = []
    for i, r in enumerate(runs):
        dat = os.path.join(tmp, f"{i}.dat")
        with open(dat, "w") as f:
            for x in r.rows:
                # Before the first RTT sample (srtt 0) the pacing rate is an
                # initial guess and the RTT none: not drawn; nor a rate of 0
                # (unpaced: CUBIC past slow start), on the log scale.
                rtt = bool(x["srtt"])
                vals = [x["s"], x["acked"] and x["acked"] / (1 << 20),
                        x["cwnd"] and x["cwnd"] / 1024, x["pipe"] and x["pipe"] / 1024,
                        x["pacing"] / 125000 if rtt and x["pacing"] else None,
                        x["delivery"] and x["delivery"] / 125000,
                        x["srtt"] / 1000 if rtt else None]
                f.write(" ".join("NaN" if v is None else f"{v:.6g}" for v in vals) + "\n")
        files.append((dat, r.label.replace("_", "\\_")))

    keys = {2: "acked", 3: "cwnd", 4: "pipe", 5: "pacing", 6: "delivery", 7: "srtt"}

    def has(i, col):
        # The rates' panel is on a log scale: only positive values count.
        if col in (5, 6):
            return any((x[keys[col]] or 0) > 0 for x in runs[i].rows)
        return any(x[keys[col]] is not None for x in runs[i].rows)

    def panel(col, dashed_col=None):
        """Column col per run, solid, and dashed_col dashed in the same
        colour (no key entry of its own: the axis label says what the dashes
        are); runs without the column are left out."""
        parts = []
        for i, (dat, lab) in enumerate(files):
            if has(i, col):
                parts.append(f"'{dat}' using 1:{col} with lines lw 1.5 lc {i + 1} title '{lab}'")
            if dashed_col and has(i, dashed_col):
                parts.append(f"'{dat}' using 1:{dashed_col} with lines lw 1 dt 2 lc {i + 1} notitle")
        if not parts:
            return ("set label 1 'no data' at graph 0.5, 0.5 center\n"
                    "plot [0:1] [0.1:1] 2 notitle\nunset label 1")  # log-safe ranges
        return "plot " + ", ".join(parts)

    g = [
        "set terminal pngcairo size 1400,1400 font 'sans,10'",
        f"set output '{png}'",
        "set datafile missing 'NaN'",
        f"set multiplot layout 4,1 title \"{title}\"",
        "set grid", "set key top left font 'sans,8'",
        f"set xrange [0:{xmax if xmax else '*'}]",
        "set lmargin 12",
        "set ylabel 'MiB acked'", panel(2),
        "set ylabel 'cwnd, pipe (dashed) KiB'", panel(3, 4),
        "set ylabel 'pacing, delivery (dashed) Mbit/s'", "set logscale y",
        "set yrange [0.1:*]", panel(5, 6), "unset logscale y", "set yrange [*:*]",
        "set key top right", "set ylabel 'srtt ms'", "set xlabel 'seconds since the SYN'", panel(7),
        "unset multiplot",
    ]
    subprocess.run(["gnuplot"], input="\n".join(g), text=True, check=True)


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="tcp_trace_plot.py [-h] [--start S] OUTDIR [OUTDIR ...]")
    ap.add_argument("outdirs", nargs="+", metavar="OUTDIR")
    ap.add_argument("--start", type=float, default=2.0, metavar="S",
                    help="also trace-D-L-start.png over the first S seconds (0: not; default 2)")
    a = ap.parse_args()
    rc = 0
    for out in a.outdirs:
        runs = find(out)
        if not runs:
            print(f"tcp_trace_plot.py: no traces in {out}", file=sys.stderr)
            rc = 1
            continue
        cells = sorted({(r.delay, r.loss) for r in runs})
        table = ["| " + " | ".join(SUMMARY_HEAD) + " |", "|" + "---|" * len(SUMMARY_HEAD)]
        with tempfile.TemporaryDirectory() as tmp:
            for d, l in cells:
                rs = sorted((r for r in runs if (r.delay, r.loss) == (d, l)),
                            key=lambda r: r.label)
                base = os.path.join(out, f"trace-{d:g}-{l:g}")
                title = f"send, {d:g} ms one way, {l:g} % loss each way"
                plot(rs, base + ".png", title, 0, tmp)
                span = max(r.rows[-1]["s"] for r in rs)
                if a.start > 0:
                    plot(rs, base + "-start.png", title + f": the first {min(a.start, span):.2g} s",
                         min(a.start, span), tmp)
                print(f"tcp_trace_plot.py: {base}.png ({len(rs)} runs)", file=sys.stderr)
                for r in rs:
                    s = r.summary()
                    nd = [2, 0, 0, 0, 1, 1, 0, 1, 1, 0, 0, 1, 0]
                    table.append(f"| {r.label} | {d:g} ms {l:g} % | " +
                                 " | ".join(fmt(v, n) for v, n in zip(s, nd)) + " |")
        text = "\n".join(table) + "\n"
        with open(os.path.join(out, "trace-summary.md"), "w") as f:
            f.write(text)
        print(text)
    return rc


if __name__ == "__main__":
    sys.exit(main())
