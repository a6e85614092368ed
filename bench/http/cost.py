#!/usr/bin/env python3
"""cost.py --skiff BIN --cost BENCH_COST --ring BENCH_RING --out FILE

`make bench-cost`: the "What it costs" report (seed 003's form): medians
and 99th percentiles in cycles and ns, one paragraph per row.  Sources:
  - live: `skiff serve --trace --stats` on xdp, packet, tap (and the same
    server on --stack linux for the server's own stages) in the namespaces
    of bench.py, under `ab -k -n COST_KA_N -c 8` and, in a second server
    run, `ab -n COST_CLOSE_N -c 8`; the histograms the server prints at
    exit ("trace NAME samples=.. median=.. p99=.. cycles ..");
  - the cost of tracing itself: the same ab -k run on xdp with and without
    --trace, alternating, COST_OVERHEAD_REPS times each, medians of req/s;
  - build/bench/bench_ring (make bench-ring): ring rx/tx per frame;
  - build/bench/bench_cost: timers, one keep-alive request inside the
    server, the TCP engine's established path and accept-to-close, and a
    park/wake round trip;
  - system calls per request: `strace -c -f` on every server under a short
    `ab -k` run, and for skiff on a hosted device (when --stack skiff runs)
    the device counters of `skiff serve --stats` (dev.rx_syscalls,
    dev.tx_syscalls over http.requests) beside it.
Rows that cannot be measured yet are written "pending" with the reason.
The micro-benchmarks run pinned to BENCH_SERVER_CPU (default 1).
"""
import argparse
import datetime
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (namespaces, servers, cleanup)

AB_N = int(os.environ.get("COST_AB_N", "20000"))
KA_N = int(os.environ.get("COST_KA_N", "50000"))
CLOSE_N = int(os.environ.get("COST_CLOSE_N", "5000"))
OVERHEAD_REPS = int(os.environ.get("COST_OVERHEAD_REPS", "5"))
LIVE_SERVERS = ("skiff-xdp", "skiff-packet", "skiff-tap", "linux-app")

TRACE_RE = re.compile(r"^trace (\w+) samples=(\d+) median=(\d+) p99=(\d+) max=(\d+) "
                      r"mean=([\d.]+) cycles median_ns=([\d.]+) p99_ns=([\d.]+)\s*$")
TRACE_CAL_RE = re.compile(r"^trace tsc_ghz=([\d.]+) ns_per_cycle=([\d.]+) "
                          r"empty_region_cycles=(\d+)")
TRACE_SYS_RE = re.compile(r"^trace syscalls_per_request=([\d.]+) rx=([\d.]+) tx=([\d.]+) "
                          r"requests=(\d+)")


def ab_cmd(ns, n, keepalive, url):
    cmd = ["timeout", "120", "ip", "netns", "exec", ns, "taskset", "-c", str(bench.CCPU),
           "ab", "-q", "-r", "-s", "5"]
    if keepalive:
        cmd.append("-k")
    return cmd + ["-n", str(n), "-c", "8", url]


def ab_run(ns, n, keepalive):
    rc, out, _ = run(ab_cmd(ns, n, keepalive, f"http://{bench.SRV_IP}/"), timeout=130)
    res = bench.parse_ab(out) or {"completed": 0, "failed": -1, "req_s": 0.0}
    return res


def read_trace(path):
    """The --trace lines of a server log: stages, calibration, syscalls."""
    stages, cal, sysc = {}, {}, None
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = TRACE_RE.match(line)
                if m:
                    stages[m.group(1)] = {
                        "n": int(m.group(2)), "med": int(m.group(3)), "p99": int(m.group(4)),
                        "max": int(m.group(5)), "mean": float(m.group(6)),
                        "med_ns": float(m.group(7)), "p99_ns": float(m.group(8))}
                    continue
                m = TRACE_CAL_RE.match(line)
                if m:
                    cal = {"ghz": float(m.group(1)), "npc": float(m.group(2)),
                           "empty": int(m.group(3))}
                    continue
                m = TRACE_SYS_RE.match(line)
                if m:
                    sysc = tuple(float(m.group(i)) for i in range(1, 4)) + (int(m.group(4)),)
    except OSError:
        pass
    return stages, cal, sysc


def serve_once(name, skiff, work, trace, loads, warmup=False):
    """Start one server (with --trace if asked), run the loads [(n,
    keepalive)], stop it; returns (why, [ab results], stages, cal, syscalls).
    warmup: an unmeasured ab -k -n 2000 first (the first requests after a
    start pay page faults and cold caches)."""
    srv = bench.Server(name, skiff, work)
    orig = srv.command
    if trace:
        srv.command = lambda root: orig(root) + ["--trace"]
    try:
        why = srv.start(None)
        if why:
            return why, [], {}, {}, None
        if warmup:
            ab_run(srv.topo.cli, 2000, True)
        res = [ab_run(srv.topo.cli, n, ka) for (n, ka) in loads]
    finally:
        srv.stop()
    stages, cal, sysc = read_trace(srv.log)
    return None, res, stages, cal, sysc


def live(skiff, work):
    """Every --trace run: {server: {"ka": ..., "close": ...}}, and the
    tracing-overhead runs."""
    out = {}
    for name in LIVE_SERVERS:
        out[name] = {}
        for key, n, ka in (("ka", KA_N, True), ("close", CLOSE_N, False)):
            what = f"ab{' -k' if ka else ''} -n {n} -c 8"
            print(f"bench-cost: --trace, {name}, {what} ...", flush=True)
            why, res, stages, cal, sysc = serve_once(name, skiff, work, True, [(n, ka)])
            r = res[0] if res else None
            if why or not r or r["completed"] != n or r["failed"]:
                why = why or f"ab: {r['completed'] if r else 0} of {n} complete, " \
                             f"{r['failed'] if r else '?'} failed"
                print(f"bench-cost:   {why}", flush=True)
            out[name][key] = {"why": why, "ab": r, "stages": stages, "cal": cal, "sys": sysc}
    over = {"off": [], "on": []}
    for rep_i in range(OVERHEAD_REPS):
        for mode in ("off", "on"):
            print(f"bench-cost: tracing overhead, skiff-xdp --trace {mode}, ab -k -n {KA_N}"
                  f" -c 8, run {rep_i + 1} of {OVERHEAD_REPS} ...", flush=True)
            why, res, _, _, _ = serve_once("skiff-xdp", skiff, work, mode == "on",
                                           [(KA_N, True)], warmup=True)
            if not why and res and res[0]["completed"] == KA_N and not res[0]["failed"]:
                over[mode].append(res[0]["req_s"])
    return out, over


def run(cmd, timeout=600):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    return r.returncode, r.stdout, r.stderr


def ring_rows(ring_bin):
    rc, out, err = run(["taskset", "-c", str(bench.SCPU), ring_bin])
    rows = {}
    info = ""
    for line in out.splitlines():
        m = re.match(r"^\|\s*(ring rx|ring tx)\s*\|\s*(\d+)\s*\|\s*(\d+)\s*\|\s*([\d.]+)\s*\|"
                     r"\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|", line)
        if m:
            rows[(m.group(1), int(m.group(2)))] = tuple(float(m.group(i)) for i in range(4, 8))
        elif line.startswith("TSC"):
            info = line.strip()
    return rows, info, (rc, err)


def cost_rows(cost_bin):
    rc, out, err = run(["taskset", "-c", str(bench.SCPU), cost_bin])
    rows, info, pending = {}, {}, {}
    for line in out.splitlines():
        p = line.split("|")
        if p[0] == "row" and len(p) == 7:
            rows[p[1]] = (int(p[2]),) + tuple(float(x) for x in p[3:7])
        elif p[0] == "info" and len(p) == 3:
            info[p[1]] = p[2]
        elif p[0] == "pending" and len(p) == 3:
            pending[p[1]] = p[2]
    return rows, info, pending, (rc, err.strip())


def ab_k(ns, url):
    rc, out, _ = run(["timeout", "120", "ip", "netns", "exec", ns, "taskset", "-c",
                      str(bench.CCPU), "ab", "-q", "-k", "-r", "-n", str(AB_N), "-c", "8", url],
                     timeout=130)
    m = re.search(r"^Complete requests:\s+(\d+)", out, re.M)
    f = re.search(r"^Failed requests:\s+(\d+)", out, re.M)
    return (int(m.group(1)) if m else 0), (int(f.group(1)) if f else -1)


def strace_syscalls(name, skiff, work):
    """Syscalls per request of a kernel server under strace -c -f."""
    srv = bench.Server(name, skiff, work)
    trace = os.path.join(work, f"strace-{name}.txt")
    orig = srv.command

    def traced(root):
        cmd = orig(root)
        # taskset -c N strace ... server
        return cmd[:3] + ["strace", "-f", "-c", "-o", trace] + cmd[3:]
    srv.command = traced
    try:
        why = srv.start(None)
        if why:
            return None, why
        time.sleep(0.3)
        done, failed = ab_k(srv.topo.cli, f"http://{bench.SRV_IP}/")
        # Stop the traced server (not strace), so strace writes its summary.
        for p in srv.pids()[1:]:
            try:
                os.kill(p, signal.SIGTERM)
            except ProcessLookupError:
                pass
    finally:
        srv.stop()
    total, calls = 0, {}
    try:
        with open(trace) as f:
            for line in f:
                m = re.match(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)\s*$", line)
                if m:
                    calls[m.group(2)] = int(m.group(1))
                m = re.match(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?total\s*$", line)
                if m:
                    total = int(m.group(1))
    except OSError:
        return None, "strace wrote no summary"
    if not done or failed:
        return None, f"ab -k: {done} complete, {failed} failed"
    # The requests ab made, plus the readiness probe (one curl) of start().
    reqs = done + 1
    top = sorted(calls.items(), key=lambda kv: -kv[1])[:4]
    detail = ", ".join(f"{k} {v / reqs:.2f}" for k, v in top)
    st = srv.stats
    if st.get("http.requests") and ("dev.rx_syscalls" in st or "dev.tx_syscalls" in st):
        detail += "; --stats: dev rx %.2f, tx %.2f per request" % (
            st.get("dev.rx_syscalls", 0) / st["http.requests"],
            st.get("dev.tx_syscalls", 0) / st["http.requests"])
    return (total / reqs, detail), None


def fmt(x):
    if x >= 10000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    return f"{x:.1f}"


# The live rows: (stage, run, label, paragraph).  `run` is "ka" (the ab -k
# run) or "close" (the ab run, one connection per request).
LIVE_ROWS = [
    ("rx_sync", "ka", "device rx sync, per frame",
     "**Device rx sync, per frame.** the run loop (`src/runner/runner.c`) times `dev_rx_sync` when it brings frames and "
     "divides by their number: the device's own receive work, which on `tap:` is one `read` "
     "per frame (and one more that finds nothing), on `packet:` a read of the status word "
     "of the kernel's TPACKET_V3 block and a copy of each frame into skiff's rx ring, on "
     "`xdp:` the AF_XDP rx and fill rings, where the frame is already in shared memory (no "
     "system call on either: the table of system calls below shows rx 0.00). One sample "
     "per batch, so a batch of 8 frames is one sample of its average."),
    ("ring_rx", "ka", "ring rx, per frame (the stack's walk: Ethernet, IPv4, tcp_input)",
     "**Ring rx, per frame.** `iface_rx` over the batch the rx sync brought, divided by its "
     "frames: the walk of the rx ring and, for each frame, Ethernet and IPv4 demux and "
     "validation and the whole of `tcp_input` (the next row). It is what a frame costs the "
     "stack once it is in memory; the application runs later in the turn and is not in it."),
    ("ring_tx", "ka", "ring tx, per frame (tx sync)",
     "**Ring tx, per frame.** `dev_tx_sync`, once per turn for everything the turn queued, "
     "divided by the frames it sent: the hand-over of the tx ring to the device. On `tap:` "
     "that is one `write` per frame, on `packet:` one `sendmmsg` per batch, on `xdp:` one "
     "`sendto` kick per batch and the completion ring. It is the most expensive row "
     "because the system call is where Linux does the sending: on a veth, AF_XDP in copy "
     "mode builds an skb and the veth hands it to the peer, whose receive processing can "
     "run on this CPU before the call returns, so part of this figure is Linux's work "
     "charged to skiff's CPU. Under `ab -k -c 8` a turn rarely has more than one or two "
     "frames to send, so the batching that would spread it barely happens. Filling the "
     "slots is in the TCP segment-out row, not here."),
    ("tcp_in", "ka", "TCP segment in, established (tcp_input)",
     "**TCP segment in.** `tcp_input` of one segment that finds its socket ESTABLISHED and "
     "carries data or an ACK (no SYN, no RST): header parse and checksum, 4-tuple lookup, "
     "PAWS and window checks, ACK processing, the copy into the receive ring, the readiness "
     "edge, the timer update. Under `ab -k` almost every such segment is a 78-byte request."),
    ("tcp_out", "ka", "TCP segment out (tcp_emit + ip_output)",
     "**TCP segment out.** One segment leaving the engine: `tcp_emit` (header, options, "
     "checksum over the payload) and the IP layer's `ip_output` (route, ARP cache, Ethernet "
     "and IPv4 headers, the copy into a tx slot). Every segment is a sample: responses, pure "
     "ACKs, SYN-ACKs and FINs."),
    ("http_request", "ka", "one keep-alive request in the server (parse to writev returned)",
     "**One keep-alive request.** From the start of the parse of a request whose head is "
     "complete to the return of the `writev` that took its response (the head with the "
     "cached Date and the 41-byte body behind it), divided by the responses in that "
     "`writev` (one under `ab -k`). On `--stack skiff` the `writev` is `tcp_send` into the "
     "socket's ring; on `--stack linux` it is the kernel's `writev`, the whole of the "
     "kernel's TCP send path included. The read that brought the request is not in it."),
    ("conn", "close", "accept to close of a connection (wall time, one request)",
     "**Accept to close.** Cycles from the server's `loop_accept` of a connection to its "
     "`loop_close`, under `ab -c 8` with one request per connection. It is elapsed time, not "
     "work: it includes waiting for the client's request to arrive after the handshake and "
     "everything else the loop did (and the time it was parked) meanwhile for the seven "
     "other connections. The engine's handshake before the accept and its FIN exchange "
     "after the close are not in it; the micro-benchmark row of the same name is the work."),
    ("timer_arm", "close", "timer arm (loop_timer_set)",
     "**Timer arm.** One `loop_timer_set` as the server makes it: through the loop's ops "
     "table into its binary heap (`timerq_set`). The server arms lazily, so this happens "
     "about once per connection (the header timeout at the accept), not once per request: "
     "under `ab -k` a busy connection never re-arms. The new deadline is the latest in the "
     "heap, so it sifts no further than its leaf, and the median is at the resolution of "
     "the counter: the same as an empty timed region."),
    ("timer_cancel", "close", "timer cancel (loop_timer_cancel)",
     "**Timer cancel.** One `loop_timer_cancel` of an armed timer, at the close: the heap's "
     "last entry moves into the hole and sifts."),
    ("park_wake", "ka", "park/wake round trip, under ab -k -c 8",
     "**Park/wake round trip.** the run loop parks in `ppoll` after a turn with no work "
     "and its learned spin (at most `--spin-us`, 100 µs); this is the time from the decision to park to "
     "running again after `ppoll` returned because a frame came. It is what it is: the idle "
     "time until the next frame is in it, and nothing is subtracted, so the figure is "
     "dominated by how long the client left the server idle, not by the cost of the two "
     "system calls and the wake-up (the micro-benchmark rows below give those); the p99 "
     "and the maximum take in the idle seconds before and after the load. The samples are "
     "few because under load the loop rarely parks."),
    ("park_wake", "close", "park/wake round trip, under ab -c 8", None),
]


def fmt_c(x):
    return f"{x:,.0f}" if x >= 1000 else f"{x:.0f}"


def fmt_ns(x):
    if x >= 1e6:
        return f"{x / 1e6:,.2f} ms"
    if x >= 1e4:
        return f"{x / 1e3:,.1f} µs"
    return f"{x:,.0f} ns" if x >= 100 else f"{x:.1f} ns"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", required=True)
    ap.add_argument("--cost", required=True)
    ap.add_argument("--ring", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tls", help="build/bench/bench_tls: the TLS engine's rows")
    a = ap.parse_args()
    skiff = os.path.abspath(a.skiff)

    print("bench-cost: ring (bench_ring) ...", flush=True)
    ring, ring_info, _ = ring_rows(a.ring)
    print("bench-cost: timers, http, tcp, park/wake (bench_cost) ...", flush=True)
    rows, info, pending, (crc, cerr) = cost_rows(a.cost)
    if crc != 0:
        print(f"bench-cost: bench_cost exited {crc}: {cerr}", flush=True)
    if a.tls:
        print("bench-cost: TLS handshakes and records (bench_tls) ...", flush=True)
        trows, _, _, (trc, terr) = cost_rows(a.tls)
        rows.update(trows)
        if trc != 0:
            pending["tls"] = f"bench_tls exited {trc}: {terr[-200:]}"

    sysc, lv, over = {}, {}, {"off": [], "on": []}
    root = os.geteuid() == 0
    if root:
        # SIGTERM, like Ctrl-C, ends in the finally below: no namespace or
        # server outlives the run.
        def on_signal(sig, _frm):
            raise KeyboardInterrupt
        signal.signal(signal.SIGTERM, on_signal)
        work = tempfile.mkdtemp(prefix="skb-cost.")
        os.chmod(work, 0o755)
        try:
            bench.cleanup_stale()
            lv, over = live(skiff, work)
            with open(os.path.join(bench.HERE, "nginx.conf.in")) as f:
                conf = f.read()
            conf = (conf.replace("@TLS@", "").replace("@WORK@", work).replace("@ROOT@", work)
                    .replace("@CONNS@", "4096").replace("@NOFILE@", "8192"))
            with open(os.path.join(work, "nginx.conf"), "w") as f:
                f.write(conf)
            for name in ("skiff-xdp", "skiff-packet", "skiff-tap", "linux-app", "nginx"):
                print(f"bench-cost: syscalls per request, {name} (strace -c -f) ...", flush=True)
                sysc[name] = strace_syscalls(name, skiff, work)
        finally:
            bench.cleanup()
            subprocess.run(["rm", "-rf", work])
    else:
        for name in ("skiff-xdp", "skiff-packet", "skiff-tap", "linux-app", "nginx"):
            sysc[name] = (None, "needs root (namespaces)")

    ghz = float(info.get("tsc_ghz", "0") or 0)
    xdp = lv.get("skiff-xdp", {})
    cal = (xdp.get("ka") or {}).get("cal") or {}
    L = []
    L.append("# What it costs")
    L.append("")
    L.append(f"Generated by `make bench-cost` on {datetime.date.today().isoformat()} at the "
             "working tree of that day, on "
             f"{bench.machine_line()}; the cycle counter (TSC) runs at {ghz:.3f} GHz, so one "
             f"cycle is {1 / ghz if ghz else 0:.3f} ns. The server is pinned to CPU "
             f"{bench.SCPU} and the client (Linux's TCP and ab) to CPU {bench.CCPU}. The "
             "machine is a shared virtual machine, which shows in the 99th percentiles and "
             "in the maxima. The numbers depend on the machine: run `make bench-cost` and "
             "compare.")
    L.append("")
    L.append("Two kinds of figures. The **live** ones come from `skiff serve --trace`: "
             "timestamps (`lfence; rdtsc`) taken along the request path of the real server "
             "while `ab` loads it, recorded into fixed histograms (`src/base/hist.h`, 16 "
             "buckets per power of two, so a median or a p99 is within 3 % of a recorded "
             "value) and printed at exit. They include one empty timed region each ("
             f"{cal.get('empty', '?')} cycles here: two counter reads and their fences), "
             "which is not subtracted. The **micro-benchmark** ones come from "
             "`bench_ring` and `bench_cost`: the same code in one process, in a loop, no "
             "device, with the empty region subtracted. Where both measure the same thing, "
             "the live figure is the one that says what a request pays; the micro-benchmark "
             "says what the code costs with warm caches and nothing else running.")
    L.append("")

    # ---- live, xdp
    L.append("## Live, along the request path (`skiff serve --trace`)")
    L.append("")
    ka_ab = (xdp.get("ka") or {}).get("ab") or {}
    cl_ab = (xdp.get("close") or {}).get("ab") or {}
    L.append(f"`--stack skiff --dev xdp:vs0`. \"ab -k\" is `ab -k -n {KA_N} -c 8` (one "
             f"server run, {ka_ab.get('req_s', 0):,.0f} req/s with tracing on), \"ab\" is "
             f"`ab -n {CLOSE_N} -c 8`, one connection per request (a second server run, "
             f"{cl_ab.get('req_s', 0):,.0f} req/s). Samples: how many the histogram holds "
             "(a batch stage records one per batch).")
    L.append("")
    L.append("| what | load | samples | median cycles | p99 cycles | median | p99 |")
    L.append("|---|---|--:|--:|--:|--:|--:|")
    paras = []
    for stage, run_key, label, para in LIVE_ROWS:
        r = xdp.get(run_key) or {}
        st = (r.get("stages") or {}).get(stage)
        load = "ab -k" if run_key == "ka" else "ab"
        if not st or not st["n"]:
            why = r.get("why") or ("needs root (namespaces)" if not root else "no samples")
            L.append(f"| {label} | {load} | pending: {why} | | | | |")
        else:
            L.append(f"| {label} | {load} | {st['n']:,} | {fmt_c(st['med'])} | "
                     f"{fmt_c(st['p99'])} | {fmt_ns(st['med_ns'])} | {fmt_ns(st['p99_ns'])} |")
        if para:
            paras.append(para)
    L.append("")
    for p in paras:
        L.append(p)
        L.append("")

    # ---- live, every device
    L.append("### The same stages on every device")
    L.append("")
    L.append("Median / p99 in cycles, same loads. `linux` is `skiff serve --stack linux` "
             "(kernel sockets, epoll): only the server's own stages exist there, and its "
             "`writev` is the kernel's.")
    L.append("")
    L.append("| stage | load | " + " | ".join(n.replace("skiff-", "") for n in LIVE_SERVERS)
             + " |")
    L.append("|---|---|" + "--:|" * len(LIVE_SERVERS))
    for stage, run_key, label, _ in LIVE_ROWS:
        cells = []
        for name in LIVE_SERVERS:
            st = ((lv.get(name, {}).get(run_key) or {}).get("stages") or {}).get(stage)
            cells.append(f"{fmt_c(st['med'])} / {fmt_c(st['p99'])}" if st and st["n"]
                         else "—")
        L.append(f"| {stage} | {'ab -k' if run_key == 'ka' else 'ab'} | " + " | ".join(cells)
                 + " |")
    L.append("")
    L.append("The device rows differ by what each device does per frame (above). The "
             "engine and server rows should not differ between devices beyond noise: it is "
             "the same code on the same CPU; where their tails differ, the likeliest cause is "
             "what the device's system calls leave in the caches, not the code.")
    L.append("")

    # ---- syscalls per request
    L.append("### System calls per request")
    L.append("")
    L.append("| server | ab -k: device rx + tx per request | ab: the same | "
             f"strace -c -f, all system calls (ab -k -n {AB_N:,}) |")
    L.append("|---|--:|--:|---|")
    for name in ("skiff-xdp", "skiff-packet", "skiff-tap", "linux-app", "nginx"):
        cells = []
        for key in ("ka", "close"):
            sy = (lv.get(name, {}).get(key) or {}).get("sys")
            cells.append(f"{sy[0]:.2f} ({sy[1]:.2f} + {sy[2]:.2f})" if sy else "—")
        v, why = sysc.get(name, (None, "not run"))
        st = f"pending: {why}" if v is None else f"{v[0]:.2f}: {v[1]}"
        L.append(f"| {name} | {cells[0]} | {cells[1]} | {st} |")
    L.append("")
    L.append("**System calls per request.** The first two columns are the device's own "
             "counters from `skiff serve --stats` (`dev.rx_syscalls` + `dev.tx_syscalls`, "
             "over `http.requests`), printed by `--trace` as `syscalls_per_request`, in the "
             "same traced runs as the tables above. A hosted skiff's only other system calls "
             "are those of a park (`ppoll` and two `rt_sigprocmask`), per park, not per "
             "request; the clock is the vDSO. With `packet:` and `xdp:` receiving costs no "
             "system call and one call sends a batch, so the figure falls as batches grow "
             "(strace, slowing the server, makes them bigger: hence its lower count); "
             "`tap:` pays a `read` or a `write` per frame. The last column counts every system call of the "
             "server's processes under `strace -c -f` in a separate short `ab -k` run (strace "
             "slows the server, which changes batching: the count, not the time, is the "
             "figure); for the Linux servers it is the only measure.")
    L.append("")

    # ---- overhead of tracing
    L.append("### What tracing costs")
    L.append("")
    if over["off"] and over["on"]:
        off, on = statistics.median(over["off"]), statistics.median(over["on"])
        overlap = min(over["on"]) <= max(over["off"]) and min(over["off"]) <= max(over["on"])
        L.append(f"`ab -k -n {KA_N} -c 8` on `xdp:` after an unmeasured `ab -k -n 2000`, "
                 f"alternating a server without and one with `--trace`, {OVERHEAD_REPS} runs "
                 f"each: median {off:,.0f} req/s without, {on:,.0f} req/s with "
                 f"({(on - off) / off * 100:+.1f} %; without: "
                 f"{', '.join(f'{x:,.0f}' for x in over['off'])}; with: "
                 f"{', '.join(f'{x:,.0f}' for x in over['on'])}). "
                 + ("The two sets of runs overlap: on this machine the cost of tracing is "
                    "below the run-to-run spread of the load, which is set mostly by the "
                    "client (Linux's TCP and ab on the other CPU)." if overlap else
                    "The two sets of runs do not overlap."))
    else:
        L.append("*Pending: the overhead runs need root (namespaces).*")
    L.append("")
    ka = xdp.get("ka") or {}
    nreq = (ka.get("ab") or {}).get("completed") or 0
    nsamp = sum(v["n"] for k, v in (ka.get("stages") or {}).items() if k != "park_wake")
    per = nsamp / nreq if nreq else 0
    empty = cal.get("empty", 0)
    L.append("With `--trace` off every stage is a test of a pointer that is NULL (the "
             "`struct sk_trace *` in the TCP engine, in the server's config and in the run loop) "
             "at its start and at its end, a branch that is always predicted; no counter is "
             "read, nothing is written, and it is the same binary. Under `ab -k` a request "
             f"crosses about {per:.0f} timed stages (the samples of the ab -k run over its "
             f"requests), so about {2 * per:.0f} such tests, and each turn of the loop two "
             "more for its syncs: a few cycles against the thousands a request costs the "
             "server, below anything a run-to-run comparison can see. With "
             f"`--trace` on, each stage reads the counter twice, {empty} cycles for the pair "
             "here (`lfence; rdtsc`: the fence serialises, so more than a bare `rdtsc`), "
             "and updates a histogram (an index computation, a division for batch stages and "
             "four stores into a table that stays in cache), about "
             f"{per * (empty + 30):,.0f} cycles per keep-alive request in all: that is why "
             "it is off by default, and why the live rows above carry the empty region in "
             "them.")
    L.append("")

    # ---- micro-benchmarks
    L.append("## Micro-benchmarks (the same code, in one process)")
    L.append("")
    L.append(f"Cycles are lfenced `rdtsc` differences with the cost of an empty timed region "
             f"({info.get('timer_overhead_cycles', '?')} cycles) taken out; pinned to CPU "
             f"{bench.SCPU}.")
    L.append("")
    L.append("| what (micro-benchmark) | median cycles | p99 cycles | median ns | p99 ns |")
    L.append("|---|--:|--:|--:|--:|")
    paras = []
    def row(label, v, para):
        if v is None:
            L.append(f"| {label} | pending | | | |")
        else:
            L.append(f"| {label} | {fmt(v[0])} | {fmt(v[1])} | {fmt(v[2])} | {fmt(v[3])} |")
        paras.append((label, para))

    for (path, batch) in [("ring rx", 1), ("ring rx", 32), ("ring tx", 1), ("ring tx", 32)]:
        v = ring.get((path, batch))
        row(f"{path}, per frame, batch {batch}", v,
            None if (path, batch) != ("ring tx", 32) else
            "**Ring rx/tx, per frame.** From `make bench-ring` (" + (ring_info or "bench_ring") +
            "): the device side fills slots and publishes `tail`, the stack reads them and "
            "publishes `head` (rx), or the reverse (tx), one thread, 64-byte frames. It is the "
            "cost of the ring ABI itself (index loads and release stores, slot and buffer "
            "lookup, a 64-byte touch); what a device adds on top is system calls, below.")

    def crow(key, label, para):
        v = rows.get(key)
        row(label, v[1:] if v else None, para if v else para + " *Pending: " +
            pending.get(key.split()[0], "not measured in this run") + ".*")

    crow("tcp segment in (established, 41 B, tcp_input)", "TCP segment in, established path",
         "**TCP segment in.** `tcp_input` of one 41-byte data segment on an established "
         "connection: checksum verification, 4-tuple hash lookup, sequence and window checks, "
         "the copy into the receive ring, the readiness edge. Two engines back to back in one "
         "process, no device and no IP layer: this is the TCP engine alone.")
    crow("tcp segment out (41 B answer: tcp_send + tcp_poll)", "TCP segment out, established path",
         "**TCP segment out.** `tcp_send` of a 41-byte answer and the `tcp_poll` that emits it "
         "as one segment with the ACK piggybacked: the copy into the send ring, header and "
         "checksum, the hand-off to `ip_output` (here a copy into a queue).")
    crow("http keep-alive request (parse to response enqueued)",
         "one keep-alive request in the server (parse to response enqueued)",
         "**One keep-alive request.** The HTTP engine's (`src/http/app.c`) readiness callback "
         "for a connection holding one `GET / HTTP/1.1` (ab's three headers), answered as "
         "`skiff serve` without `--root` answers it (its `route = / { return 200 ...; }` "
         "through the sites router, `src/router/sites.c`): the read from the socket, the "
         "parse, the routing, the response head with the cached Date, the 41-byte body "
         "behind it, the one `writev` (here a fake loop that counts the bytes: "
         f"{info.get('http_response_bytes', '?')} per response), and the read that finds "
         "nothing more. No system call and no TCP: the application's share of a request.")
    crow("http keep-alive file request (files handler, GET / -> index.html)",
         "one keep-alive file request in the server (parse to response enqueued)",
         "**One keep-alive file request.** The same request answered by the files handler "
         "(`src/http/files_handler.c`), as `skiff serve --root DIR` answers it: the lookup "
         "of `/`, a directory, then of its `index.html` (a 41-byte file held in memory: the "
         "hosted file cache in front of the lookup is not timed), the validators, the "
         "answer's header lines, and the body sent from the file's memory "
         f"({info.get('http_file_response_bytes', '?')} bytes per response).")
    crow("http connection per request (accept to close)",
         "a connection per request in the server (accept to close)",
         "**A connection per request.** The same engine and route as the keep-alive row, "
         "for what `ab` without `-k` asks: the listener's accept and the watch of the new "
         "socket, one `GET /` with `Connection: close`, the answer "
         f"({info.get('http_close_response_bytes', '?')} bytes), the close, and the state "
         "and buffer set given back. The engine's share only: TCP's is the next row.")
    crow("tcp accept to close (server engine + app, one request)",
         "accept to close of a connection (server side, one request)",
         "**Accept to close.** Everything the server's engine and application do for one "
         "short connection: SYN in, SYN-ACK out, the ACK and the request in, `tcp_accept`, "
         "`tcp_recv`, the answer with the FIN, `tcp_close`, the client's ACK and FIN in, the "
         "last ACK out. The HTTP server's own work is the row above; the client's engine is "
         "not counted.")
    crow("timer arm+cancel (loop timerq, 1000 armed)", "timer arm + cancel (loop heap)",
         "**Timer arm and cancel.** One `timerq_set` and one `timerq_cancel` (the loop's "
         "binary heap behind `loop_timer_set`) in a heap already holding 1,000 deadlines, "
         "64 pairs per sample. The server arms lazily: a busy keep-alive connection pays this "
         "not once per request but once per timeout period.")
    crow("timer set+remove (tcp timer heap, 1000 armed)", "timer set + remove (TCP engine heap)",
         "**TCP timer set and remove.** The same for `net/timer.h`, the heap of one deadline "
         "per socket inside the TCP engine.")
    crow("park/wake round trip, two CPUs (eventfd + epoll_wait)",
         "park/wake round trip, two CPUs",
         "**Park/wake, two CPUs.** Two threads on two CPUs, each parked in `epoll_wait` on its "
         "own eventfd; one writes the other's eventfd and parks, the other wakes, reads, "
         "answers the same way: two wake-ups across CPUs, three system calls on each side (`write`, `epoll_wait`, `read`). "
         "This is what a loop pays when it parks instead of spinning and the next frame comes "
         "at once, and why the loop spins a bounded while first. In a VM a cross-CPU wake-up "
         "is an IPI through the hypervisor, which dominates here.")
    crow("tls full handshake (server, TLS 1.3, ECDSA P-256, X25519)",
         "TLS full handshake, server side (TLS 1.3, ECDSA P-256, X25519)",
         "**TLS full handshake.** `bench/bench_tls.c`: what skiff's TLS engine "
         "(`src/tls/tls_openssl.c`, OpenSSL 3) spends on the server side of one full TLS 1.3 "
         "handshake with an OpenSSL client in the same process on memory BIOs: the connection's "
         "creation, the ClientHello in, the server's flight out (X25519, the ECDSA P-256 "
         "signature), the client's Finished in, the ticket out, and the connection's release. "
         "Only the server engine's calls are timed. nginx drives the same library, so this is "
         "the part of a handshake that no code around it can save.")
    crow("tls resumed handshake (server, TLS 1.3 ticket, X25519)",
         "TLS resumed handshake, server side (TLS 1.3 ticket, X25519)",
         "**TLS resumed handshake.** The same with the ticket of the previous connection: no "
         "signature, but X25519 again (TLS 1.3 resumption keeps forward secrecy), and a new "
         "ticket out.")
    crow("tls seal, per KiB (16 KiB record, AES-128-GCM)", "TLS seal, per KiB (AES-128-GCM)",
         "**TLS seal and open.** One 16 KiB write sealed into one record by the engine, and one "
         "16 KiB record from the client opened and read, divided by 16.")
    crow("tls open, per KiB (16 KiB record, AES-128-GCM)", "TLS open, per KiB (AES-128-GCM)", "")
    crow("park/wake round trip, one CPU (eventfd + epoll_wait)", "park/wake round trip, one CPU",
         "**Park/wake, one CPU.** The same with both threads on one CPU: two context switches "
         "and no IPI.")

    L.append("")
    for _, p in paras:
        if p:
            L.append(p)
            L.append("")
    L.append("## How it was made")
    L.append("")
    L.append("`make bench-cost` (as root) builds `build/skiff`, `build/bench/bench_cost` and "
             "`build/bench/bench_ring`, then runs `bench/http/cost.py`, which:")
    L.append("")
    L.append(f"1. runs `taskset -c {bench.SCPU} build/bench/bench_ring` and `taskset -c "
             f"{bench.SCPU} build/bench/bench_cost` (the micro-benchmark rows);")
    L.append("2. for each of xdp, packet, tap and linux, twice (once per load), creates the "
             "namespaces of `make bench` (`skb-<pid>-cli` and `skb-<pid>-srv` joined by a "
             "veth pair, offloads off; for tap one namespace `skb-<pid>-tap`), 198.18.0.1 the "
             "client and 198.18.0.2 the server, and runs")
    L.append("")
    L.append("   ```")
    L.append(f"   ip netns exec skb-<pid>-srv taskset -c {bench.SCPU} build/skiff serve --port 80 "
             f"--stats --max-conns {bench.MAX_CONNS} \\")
    L.append("       --stack skiff --dev xdp:vs0 --ip 198.18.0.2/24 --trace   "
             "# packet:vs0, tap:sk0; or --stack linux --ip 198.18.0.2")
    L.append(f"   ip netns exec skb-<pid>-cli taskset -c {bench.CCPU} ab -q -r -s 5 -k -n {KA_N}"
             " -c 8 http://198.18.0.2/")
    L.append(f"   ip netns exec skb-<pid>-cli taskset -c {bench.CCPU} ab -q -r -s 5 -n {CLOSE_N}"
             " -c 8 http://198.18.0.2/   # in the second server run")
    L.append("   ```")
    L.append("")
    L.append("   and reads the `trace ...` lines the server prints at SIGTERM;")
    L.append(f"3. runs the ab -k load {OVERHEAD_REPS} times on xdp without and with `--trace`, "
             "alternating;")
    L.append(f"4. runs each server under `strace -f -c` with `ab -k -n {AB_N} -c 8`;")
    L.append("5. removes every namespace it made (also on Ctrl-C), and writes this file.")
    L.append("")
    L.append("Knobs: `COST_KA_N`, `COST_CLOSE_N`, `COST_OVERHEAD_REPS`, `COST_AB_N`, "
             "`BENCH_SERVER_CPU`, `BENCH_CLIENT_CPU`.")
    L.append("")
    # The "TLS libraries" section (make bench-tls-libs, bench/tls_libs.py)
    # is measured apart: kept as it stands, after the rest.
    keep = ""
    try:
        with open(a.out) as f:
            old = f.read()
        at = old.find("\n## TLS libraries")
        keep = old[at:] if at >= 0 else ""
    except OSError:
        pass
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(L) + keep)
    print(f"bench-cost: wrote {a.out}", flush=True)
    return 0




if __name__ == "__main__":
    sys.exit(main())
