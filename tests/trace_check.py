#!/usr/bin/env python3
"""trace_check.py FILE --bytes N [--linux]: checks a connection trace as
bench-tcp records it (issue 37's deliverable 1), so that a trace the plotter
(bench/tcp_trace_plot.py) reads is what the columns say.

skiff's (tcp-client --tcp-trace) and Linux's (tcp_echo.py send --trace, from
TCP_INFO) have the columns ms, cwnd, pipe, srtt_us and pacing_rate in
common; the bytes acked are `acked` in skiff's and `bytes_acked` in Linux's.
Checked: the header has every column named; there are rows; every value of
those columns is a whole number (Linux may leave a field it did not return
empty); ms never goes back; the bytes acked never go back and end at N
(skiff's reads one byte low while its SYN or FIN is unacked: N - 1 is taken
too; Linux's tcpi_bytes_acked is the advance of snd_una, which counts the SYN
and the FIN: up to N + 2); cwnd is positive once the connection is
up; a paced sender (--paced) shows a pacing rate in some row.  With --bbr
(both traces have the columns ca_state, bbr_bw and bbr_mode): ca_state is
open or recovery (skiff's) or one of Linux's five loss states; bbr_mode is
empty or one of BBR's four states, and empty exactly where there is no
bandwidth estimate in Linux's (skiff names its state from the start); some
row has an estimate.  Not that the first estimate is in startup: BBR begins
there, but 10 ms samples can miss it (Linux over loopback leaves startup
within the first; ci-fresh at 3447a55 failed on that).

Prints "trace_check: ROWS rows, ... " and exits 0, or the first problem and 1.
"""
import argparse
import sys

COMMON = ("ms", "cwnd", "pipe", "srtt_us", "pacing_rate")
CA_STATES = ("open", "disorder", "cwr", "recovery", "loss")
BBR_MODES = ("startup", "drain", "probe_bw", "probe_rtt")


def check_bbr(head: list, rows: list, linux: bool) -> str:
    """The --bbr columns (see the top); returns a problem, or a summary
    starting with ", " for the printed line."""
    missing = [c for c in ("ca_state", "bbr_bw", "bbr_mode") if c not in head]
    if missing:
        return f"no column {', '.join(missing)}"
    ci, bi, mi = head.index("ca_state"), head.index("bbr_bw"), head.index("bbr_mode")
    modes, rec, est = [], 0, 0
    for n, f in rows:
        ca, bw, mode = f[ci], f[bi], f[mi]
        if ca not in CA_STATES:
            return f"line {n}: ca_state is '{ca}'"
        rec += ca == "recovery"
        if mode and mode not in BBR_MODES:
            return f"line {n}: bbr_mode is '{mode}'"
        if not bw.isdigit():
            return f"line {n}: bbr_bw is '{bw}'"
        if linux and bool(mode) != (int(bw) > 0):
            return f"line {n}: bbr_mode '{mode}' with bbr_bw {bw}"
        if int(bw) > 0:
            est += 1
            if mode not in modes:
                modes.append(mode)
    if not est:
        return "no row with a bandwidth estimate"
    return f", modes {' '.join(modes)}, {rec} rows in recovery"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--bytes", type=int, required=True, help="bytes the sender sent")
    ap.add_argument("--linux", action="store_true", help="tcp_echo.py's trace (bytes_acked)")
    ap.add_argument("--paced", action="store_true", help="a pacing rate must show")
    ap.add_argument("--bbr", action="store_true", help="BBR's model and the loss state must show")
    a = ap.parse_args()
    acked_col = "bytes_acked" if a.linux else "acked"
    try:
        with open(a.file) as f:
            lines = [ln.rstrip("\n") for ln in f if ln.strip()]
    except OSError as e:
        print(f"trace_check: {e}")
        return 1
    if len(lines) < 3:
        print(f"trace_check: {a.file}: {len(lines)} lines, want a header and rows")
        return 1
    head = lines[0].split("\t")
    want = COMMON + (acked_col,)
    missing = [c for c in want if c not in head]
    if missing:
        print(f"trace_check: {a.file}: no column {', '.join(missing)} in {head}")
        return 1
    col = {c: head.index(c) for c in want}
    prev_ms = prev_acked = -1.0
    paced = 0
    cwnd_max = 0
    rows = []
    for n, ln in enumerate(lines[1:], 2):
        f = ln.split("\t")
        if len(f) != len(head):
            print(f"trace_check: line {n}: {len(f)} fields, the header has {len(head)}")
            return 1
        rows.append((n, f))
        v = {}
        for c in want:
            s = f[col[c]]
            if s == "" and a.linux and c != "ms":
                v[c] = None
                continue
            try:
                v[c] = float(s) if c == "ms" else int(s)
            except ValueError:
                print(f"trace_check: line {n}: {c} is '{s}'")
                return 1
            if v[c] < 0:
                print(f"trace_check: line {n}: {c} is negative ({s})")
                return 1
        if v["ms"] < prev_ms:
            print(f"trace_check: line {n}: ms {v['ms']} after {prev_ms}")
            return 1
        prev_ms = v["ms"]
        if v[acked_col] is not None:
            if v[acked_col] < prev_acked:
                print(f"trace_check: line {n}: {acked_col} {v[acked_col]} after {prev_acked}")
                return 1
            prev_acked = v[acked_col]
        if v["cwnd"]:
            cwnd_max = max(cwnd_max, v["cwnd"])
        if v["pacing_rate"]:
            paced += 1
    low, high = (a.bytes, a.bytes + 2) if a.linux else (a.bytes - 1, a.bytes)
    if not low <= prev_acked <= high:
        print(f"trace_check: the last {acked_col} is {prev_acked:.0f}, want {a.bytes}")
        return 1
    if not cwnd_max:
        print("trace_check: cwnd never positive")
        return 1
    if a.paced and not paced:
        print("trace_check: no row with a pacing rate")
        return 1
    bbr = ""
    if a.bbr:
        bbr = check_bbr(head, rows, a.linux)
        if not bbr.startswith(", "):
            print(f"trace_check: {a.file}: {bbr}")
            return 1
    print(f"trace_check: {len(lines) - 1} rows over {prev_ms:.0f} ms, {acked_col} "
          f"{prev_acked:.0f} of {a.bytes}, cwnd up to {cwnd_max}, {paced} rows paced{bbr}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
