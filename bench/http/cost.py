#!/usr/bin/env python3
"""cost.py --skiff BIN --cost BENCH_COST --ring BENCH_RING --out FILE

`make bench-cost`: the "What it costs" report (seed 003's form): medians
and 99th percentiles in cycles and ns, one paragraph per row.  Sources:
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
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (namespaces, servers, cleanup)

AB_N = int(os.environ.get("COST_AB_N", "20000"))


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--skiff", required=True)
    ap.add_argument("--cost", required=True)
    ap.add_argument("--ring", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    skiff = os.path.abspath(a.skiff)

    print("bench-cost: ring (bench_ring) ...", flush=True)
    ring, ring_info, _ = ring_rows(a.ring)
    print("bench-cost: timers, http, tcp, park/wake (bench_cost) ...", flush=True)
    rows, info, pending, (crc, cerr) = cost_rows(a.cost)
    if crc != 0:
        print(f"bench-cost: bench_cost exited {crc}: {cerr}", flush=True)

    sysc = {}
    if os.geteuid() == 0:
        work = tempfile.mkdtemp(prefix="skb-cost.")
        os.chmod(work, 0o755)
        try:
            bench.cleanup_stale()
            with open(os.path.join(bench.HERE, "nginx.conf.in")) as f:
                conf = f.read()
            conf = (conf.replace("@WORK@", work).replace("@ROOT@", work)
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
    L = []
    L.append("# What it costs")
    L.append("")
    L.append(f"Generated by `make bench-cost` on {datetime.date.today().isoformat()}: "
             f"{bench.machine_line()}, TSC {ghz:.3f} GHz "
             f"(one cycle is {1 / ghz if ghz else 0:.3f} ns). Cycles are lfenced `rdtsc` "
             f"differences with the cost of an empty timed region "
             f"({info.get('timer_overhead_cycles', '?')} cycles) taken out; the micro-benchmarks "
             f"run pinned to CPU {bench.SCPU}. The machine is shared, which shows in the 99th "
             "percentiles. Rerun it and compare: the numbers depend on the machine.")
    L.append("")
    L.append("| what | median cycles | p99 cycles | median ns | p99 ns |")
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
         "**One keep-alive request.** The server's readiness callback for a connection "
         "holding one `GET / HTTP/1.1` (ab's three headers): the read from the socket, the "
         "parse, the response head with the cached Date, the 41-byte body copied behind it, "
         "the one `writev` (here a fake loop that counts the bytes: "
         f"{info.get('http_response_bytes', '?')} per response), and the read that finds "
         "nothing more. No system call and no TCP: the application's share of a request.")
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
    crow("park/wake round trip, one CPU (eventfd + epoll_wait)", "park/wake round trip, one CPU",
         "**Park/wake, one CPU.** The same with both threads on one CPU: two context switches "
         "and no IPI.")

    L.append("")
    L.append("System calls per request (ab -k -c 8, "
             f"{AB_N:,} requests, 41-byte body):")
    L.append("")
    L.append("| server | syscalls per request | detail |")
    L.append("|---|--:|---|")
    for name in ("skiff-xdp", "skiff-packet", "skiff-tap", "linux-app", "nginx"):
        how = "strace -c -f"
        v, why = sysc.get(name, (None, "not run"))
        if v is None:
            L.append(f"| {name} | pending | {why} |")
        else:
            L.append(f"| {name} | {v[0]:.2f} | {how}: {v[1]} |")
    paras.append(("syscalls",
                  "**System calls per request.** Every system call the server's processes made "
                  "under `strace -c -f` during a short `ab -k` run, over the requests served "
                  "(strace slows the server; the count, not the time, is the figure). For "
                  "skiff on a hosted device the device's own counters from `skiff serve "
                  "--stats` (`dev.rx_syscalls`, `dev.tx_syscalls` over `http.requests`) are "
                  "given beside it: with `packet:` and `xdp:` one system call moves a batch of "
                  "frames, so under load this falls well below one. A skiff row is pending "
                  "while `--stack skiff` does not run."))
    L.append("")
    for _, p in paras:
        if p:
            L.append(p)
            L.append("")
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        f.write("\n".join(L))
    print(f"bench-cost: wrote {a.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
