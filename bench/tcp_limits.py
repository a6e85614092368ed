#!/usr/bin/env python3
"""tcp_limits.py DIR... — what held each sender of bench-tcp's send runs, and
for how long, skiff's beside Linux's.

A DIR is a bench/tcp_wan.sh output folder (or a folder holding such
folders, as bench/tcp_ab.sh leaves them).  For each send run in its
traces/ folder:

  skiff   the run's --stats (traces/DELAY-LOSS-STACK-send-REP.stats):
          tcp_busy_us, and within it tcp_rwnd_limited_us,
          tcp_sndbuf_limited_us, tcp_cwnd_limited_us, tcp_pace_limited_us
          (src/net/tcp.h, enum tcp_limit);
  Linux   the last line of its trace (tcp_echo.py send --trace): the
          kernel's chronographs busy_us, rwnd_limited_us and
          sndbuf_limited_us (Linux does not count cwnd or pacing apart).

Prints one line per run (busy ms, then each state's share of busy in %),
then per cell and stack the medians.  A run without the counters (an older
binary or kernel) is left out and counted.
"""
import argparse
import collections
import glob
import os
import statistics
import sys

SKIFF = ("rwnd", "sndbuf", "cwnd", "pace")
LINUX = ("rwnd", "sndbuf")


def skiff_run(path):
    """{busy, rwnd, ...} in us from a --stats file, or None."""
    got = {}
    with open(path) as f:
        for line in f:
            k, _, v = line.strip().partition(" ")
            if k.startswith("tcp_") and k.endswith("_us") and v.isdigit():
                got[k[4:-3]] = int(v)
    if "busy" not in got:
        return None
    out = {"busy": got["busy"]}
    for s in SKIFF:
        out[s] = got.get(s + "_limited", 0)
    return out


def linux_run(path):
    """The same from the last line of a tcp_echo.py trace, or None."""
    with open(path) as f:
        rows = [ln.rstrip("\n").split("\t") for ln in f if ln.strip()]
    if len(rows) < 2:
        return None
    last = dict(zip(rows[0], rows[-1]))
    if not last.get("busy_us"):
        return None
    out = {"busy": int(last["busy_us"])}
    for s in LINUX:
        out[s] = int(last.get(s + "_limited_us") or 0)
    return out


def runs(dirs):
    """(cell, stack, run name, counters) for every send run found."""
    seen = set()
    for d in dirs:
        for tdir in sorted(glob.glob(os.path.join(d, "**", "traces"), recursive=True)):
            tdir = os.path.realpath(tdir)
            if tdir in seen:
                continue
            seen.add(tdir)
            for f in sorted(glob.glob(os.path.join(tdir, "*-send-*.*"))):
                base = os.path.basename(f)
                parts = base.rsplit(".", 1)[0].split("-")
                # DELAY-LOSS-STACK...-send-REP
                if len(parts) < 5:
                    continue
                cell = f"{parts[0]} ms {parts[1]} %"
                stack = "-".join(parts[2:-2])
                name = os.path.relpath(f, os.path.dirname(os.path.dirname(tdir)))
                if stack.startswith("skiff") and base.endswith(".stats"):
                    yield cell, stack, name, skiff_run(f)
                elif stack.startswith("linux") and base.endswith(".tsv"):
                    yield cell, stack, name, linux_run(f)


def share(c, s):
    return 100.0 * c[s] / c["busy"] if c["busy"] else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--quiet", action="store_true", help="the medians only")
    a = ap.parse_args()
    cells = collections.defaultdict(list)
    missing = 0
    for cell, stack, name, c in runs(a.dirs):
        if c is None:
            missing += 1
            continue
        cells[(cell, stack)].append(c)
        if not a.quiet:
            keys = SKIFF if stack.startswith("skiff") else LINUX
            print(f"{name}: busy {c['busy'] / 1000:.0f} ms, " +
                  ", ".join(f"{k} {share(c, k):.0f} %" for k in keys))
    if not cells:
        print("tcp_limits: no send run with the counters", file=sys.stderr)
        return 1
    print("| cell | stack | runs | busy ms | rwnd % | sndbuf % | cwnd % | pace % |")
    print("|---|---|--:|--:|--:|--:|--:|--:|")

    def order(k):
        d, _, l, _ = k[0].split()
        return float(d), float(l), k[1]

    for k in sorted(cells, key=order):
        cs = cells[k]
        med = {s: statistics.median(share(c, s) for c in cs) for s in SKIFF if s in cs[0]}
        busy = statistics.median(c["busy"] for c in cs) / 1000
        cols = [f"{med[s]:.0f}" if s in med else "—" for s in SKIFF]
        print(f"| {k[0]} | {k[1]} | {len(cs)} | {busy:.0f} | " + " | ".join(cols) + " |")
    if missing:
        print(f"({missing} runs without the counters left out)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
