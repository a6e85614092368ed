#!/usr/bin/env python3
"""tls_libs.py — the TLS libraries Debian 12 packages, side by side, in
cycles, in-process, on one core (make bench-tls-libs; docs/cost.md, "TLS
libraries").

  bench/tls_libs.py BUILD_BENCH_DIR [--reps N] [--core C]

Runs build/bench/bench_tls (skiff's OpenSSL 3.0 engine), bench_tls
--engine gnutls (skiff's GnuTLS 3.7 engine), bench_tls_wolfssl and
bench_tls_gnutls (the libraries alone) N times each (default 5), alternating the order at
every repetition, each pinned to core C (default: the last one) with
taskset.  Each run prints per row the median of its samples (300
handshakes, 2,000 records); the table gives, per row and library, the
median of the N run medians, in cycles and in µs, and the spread (the
lowest and highest run median), so a noisy run shows as such.  Nothing is
discarded.
"""
import os
import re
import statistics
import subprocess
import sys

LIBS = [("OpenSSL 3.0 (skiff's engine)", ["bench_tls"]),
        ("GnuTLS 3.7 (skiff's engine)", ["bench_tls", "--engine", "gnutls"]),
        ("wolfSSL 5.5", ["bench_tls_wolfssl"]),
        ("GnuTLS 3.7", ["bench_tls_gnutls"])]
OPS = [("full handshake (ECDSA P-256 + X25519)", lambda n: "full handshake" in n),
       ("resumed, PSK with X25519 (psk_dhe_ke)",
        lambda n: "resumed" in n and "psk_ke" not in n),
       ("resumed, PSK alone (psk_ke)", lambda n: "resumed" in n and "psk_ke" in n),
       ("seal, per KiB (16 KiB record, AES-128-GCM)", lambda n: "seal" in n),
       ("open, per KiB (16 KiB record, AES-128-GCM)", lambda n: "open" in n)]


def run(cmd, core):
    path = cmd[0]
    out = subprocess.run(["taskset", "-c", str(core)] + cmd, capture_output=True, text=True,
                         timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{path} exited {out.returncode}: {out.stderr.strip()[-300:]}")
    rows, info = {}, {}
    for line in out.stdout.splitlines():
        f = line.split("|")
        if f[0] == "row":
            rows[f[1]] = (float(f[3]), float(f[5]))  # median cycles, median ns
        elif f[0] == "info":
            info[f[1]] = f[2]
    return rows, info


def main():
    a = sys.argv[1:]
    if not a or a[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if a else 2
    d, reps, core = a[0], 5, os.cpu_count() - 1
    i = 1
    while i < len(a):
        if a[i] == "--reps":
            reps = int(a[i + 1])
        elif a[i] == "--core":
            core = int(a[i + 1])
        else:
            print(__doc__, file=sys.stderr)
            return 2
        i += 2
    got = {lib: {} for lib, _ in LIBS}  # lib -> op -> [(cyc, ns)]
    ghz = []
    for r in range(reps):
        order = LIBS[r % len(LIBS):] + LIBS[:r % len(LIBS)]
        for lib, cmd in order:
            rows, info = run([os.path.join(d, cmd[0])] + cmd[1:], core)
            ghz.append(float(info.get("tsc_ghz", "0")))
            for op, match in OPS:
                for name, v in rows.items():
                    if match(name):
                        got[lib].setdefault(op, []).append(v)
        print(f"tls_libs: repetition {r + 1} of {reps} done", file=sys.stderr, flush=True)
    print(f"TSC {statistics.median(ghz):.3f} GHz; {reps} runs per library, alternating, "
          f"pinned to core {core}; per cell: median of the run medians in cycles (µs), "
          f"[lowest run - highest run] in k cycles\n")
    print("| server side, TLS 1.3 | " + " | ".join(lib for lib, _ in LIBS) + " |")
    print("|---|" + "---:|" * len(LIBS))
    for op, _ in OPS:
        cells = []
        for lib, _ in LIBS:
            v = got[lib].get(op)
            if not v:  # skiff's engine keeps (EC)DHE on resumption: never psk_ke
                cells.append("not enabled")
                continue
            cyc = statistics.median(x[0] for x in v)
            us = statistics.median(x[1] for x in v) / 1000.0
            lo, hi = min(x[0] for x in v), max(x[0] for x in v)
            if cyc >= 10000:
                cells.append(f"{cyc / 1000:,.0f} k ({us:,.0f} µs) [{lo / 1000:,.0f}-{hi / 1000:,.0f}]")
            else:
                cells.append(f"{cyc:,.0f} ({us * 1000:,.0f} ns) [{lo / 1000:.2f}-{hi / 1000:.2f}]")
        print(f"| {op} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
