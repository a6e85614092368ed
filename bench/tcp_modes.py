#!/usr/bin/env python3
"""tcp_modes.py DIR [DIR ...] — BBR's course in each send run's trace.

Reads the traces bench/tcp_trace_plot.py reads (its find and Trace.course:
DIR/traces/*.tsv of bench/tcp_wan.sh, DIR/BIN-DELAY-REP/traces/ of
bench/tcp_ab.sh) where the trace has BBR's columns (skiff's
tcp-client --tcp-trace and tcp_echo.py send --trace write bbr_mode and
bbr_bw; tests/trace_check.py --bbr checks them) and prints one line per
trace: when the transfer ended, when BBR left startup (first sample in
another state; "-": it never did), its bandwidth estimate then and the
largest it had, and the share of samples in loss recovery (ca_state).
Traces without an estimate are skipped.  The samples are 10 ms apart, so
the times are to within 10 ms."""
import os
import sys

from tcp_trace_plot import find


def main() -> int:
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    n = 0
    print("trace\tend_ms\tleft_startup_ms\tbw_then_MBps\tbw_max_MBps\tin_recovery")
    for d in sys.argv[1:]:
        for t in find(d):
            c = t.course()
            if not c:
                continue
            end, left, bw_then, bw_max, rec = c
            n += 1
            print(f"{os.path.relpath(t.path, d)}\t{end:.0f}\t{'-' if left is None else f'{left:.0f}'}\t"
                  f"{'-' if bw_then is None else f'{bw_then / 1e6:.1f}'}\t{bw_max / 1e6:.1f}\t{rec:.0%}")
    if not n:
        print(f"tcp_modes.py: no trace with BBR's columns under {' '.join(sys.argv[1:])}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
