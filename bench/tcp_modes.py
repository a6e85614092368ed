#!/usr/bin/env python3
"""tcp_modes.py DIR [DIR ...] — BBR's course in each send run's trace.

Reads DIR/traces/*.tsv (bench/tcp_wan.sh's, or bench/tcp_ab.sh's
DIR/BIN-DELAY-REP/traces/) where the trace has BBR's columns (skiff's
tcp-client --tcp-trace and tcp_echo.py send --trace write bbr_mode and
bbr_bw; tests/trace_check.py --bbr checks them) and prints one line per
trace: when the transfer ended, when BBR left startup (first sample in
another state; "-": it never did), its bandwidth estimate then and the
largest it had, and the share of samples in loss recovery (ca_state).
Traces without an estimate are skipped.  The samples are 10 ms apart, so
the times are to within 10 ms."""
import csv
import glob
import os
import sys


def course(path: str):
    with open(path) as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if (r.get("bbr_bw") or "0") != "0"]
    if not rows:
        return None
    left = next((r for r in rows if r["bbr_mode"] != "startup"), None)
    rec = sum(1 for r in rows if r.get("ca_state") == "recovery") / len(rows)
    return (float(rows[-1]["ms"]), float(left["ms"]) if left else None,
            int(left["bbr_bw"]) if left else None, max(int(r["bbr_bw"]) for r in rows), rec)


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    n = 0
    print("trace\tend_ms\tleft_startup_ms\tbw_then_MBps\tbw_max_MBps\tin_recovery")
    for d in sys.argv[1:]:
        files = sorted(glob.glob(os.path.join(d, "traces", "*.tsv")) +
                       glob.glob(os.path.join(d, "*", "traces", "*.tsv")))
        for path in files:
            c = course(path)
            if not c:
                continue
            end, left, bw_then, bw_max, rec = c
            n += 1
            print(f"{os.path.relpath(path, d)}\t{end:.0f}\t{'-' if left is None else f'{left:.0f}'}\t"
                  f"{'-' if bw_then is None else f'{bw_then / 1e6:.1f}'}\t{bw_max / 1e6:.1f}\t{rec:.0%}")
    if not n:
        print(f"tcp_modes.py: no trace with BBR's columns under {' '.join(sys.argv[1:])}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
