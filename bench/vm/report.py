#!/usr/bin/env python3
"""report.py — results.md and rps.png from a bench/vm/bench.sh run.

    report.py DIR        (reads DIR/runs.csv and DIR/meta.txt)

Medians are over the runs with status "ok" only; failed runs are counted
next to the median and listed, never folded in.  rps.png is drawn with
gnuplot (a grouped bar chart of the medians of the 41-byte body).

Per backend: the 41-byte table (every load), then, if the run had them, the
files (--sizes): req/s, the QEMU process's CPU per request (µs, median) and
the client's CPU (% of one core, median; "client-bound" when ab, one
thread, used 90% or more).  Runs of bench.sh before the files had no body
column: they read as 41 bytes.
"""
import csv, os, statistics, subprocess, sys

LOADS = [
    ("ab-k-c1", "ab -k -c 1"), ("ab-k-c8", "ab -k -c 8"), ("ab-k-c64", "ab -k -c 64"),
    ("ab-c1", "ab -c 1"), ("ab-c16", "ab -c 16"), ("ab-c64", "ab -c 64"),
    ("wrk-close-c1000", "wrk -c 1000, Connection: close"),
]
NAMES = {"linux": "Linux guest", "nginx": "Linux guest, nginx", "skiff": "skiff unikernel"}
NETS = {"user": "user networking (slirp), hostfwd 127.0.0.1", "tap": "TAP in a namespace"}
CLIENT_BOUND = 90.0  # % of one core: ab is one thread


def body_of(r):
    return int(r.get("body") or 41)


def size_label(b):
    if b >= 1 << 20 and b % (1 << 20) == 0:
        return f"{b >> 20} MiB"
    if b >= 1 << 10 and b % (1 << 10) == 0:
        return f"{b >> 10} KiB"
    return f"{b} B"


def smp_table(w, rows, meta):
    """The 1-vs-N vCPU rows (bench.sh --smp, net "tap-smp", issue 17)."""
    ns = sorted({int(r.get("vcpus") or 1) for r in rows})
    guests = [g for g in ("skiff", "linux") if any(r["guest"] == g for r in rows)]
    reps = max(int(r["rep"]) for r in rows)

    def scell(g, n, load):
        rs = [r for r in rows if r["guest"] == g and int(r.get("vcpus") or 1) == n and r["load"] == load]
        ok = [r for r in rs if r["status"] == "ok"]
        c = {"n": len(rs), "ok": len(ok), "bad": sum(r["status"] == "failed" for r in rs),
             "why": next((r["note"] for r in rs if r["status"] == "unavailable"), None),
             "note": next((r["note"] for r in rs if r["note"] and r["status"] == "ok"), None)}
        for k, col in (("rps", "rps"), ("cpu", "qemu_cpu_pct"), ("us", "qemu_us_req"),
                       ("client", "client_cpu_pct"), ("host", "host_cpu_pct")):
            v = [float(r[col]) for r in ok if r.get(col)]
            if v:
                c[k] = statistics.median(v)
        return c

    w(f"## More than one vCPU: {' vs '.join(map(str, ns))} vCPUs on a TAP (multi-queue for N > 1)\n")
    w(f"{meta.get('accel', '')}; QEMU -smp N with `-accel tcg,thread=multi` for N > 1, "
      f"--mem {meta.get('smp', '').split('smp_mem=')[-1] or '?'} for every N; for N > 1 the TAP is "
      "multi_queue and both guests get queues=N,vhost=off and mq=on,vectors=2N+2 (the "
      "unikernel: a stack per vCPU; the Linux guest: N combined channels set by /init, N "
      "SO_REUSEPORT servers pinned one per vCPU); for N = 1 a plain TAP and the usual line. "
      f"Median of {reps} repetition(s), order reversed every repetition. QEMU: its CPU in % "
      "of one host core and µs per request; client: ab's CPU in % of one core (one thread: "
      f"{CLIENT_BOUND:.0f}% or more is client-bound); host: the busy share of all host cores "
      "over the run (everything on the machine, other sessions included).\n")
    hdr = "| load | guest |" + "".join(f" {n} vCPU req/s |" for n in ns)
    if len(ns) > 1:
        hdr += f" {ns[-1]} / {ns[0]} |"
    for n in ns:
        hdr += f" QEMU % / µs/req ({n}) | client % ({n}) | host % ({n}) |"
    w(hdr)
    w("|---|---|" + "--:|" * (len(ns) + (len(ns) > 1) + 3 * len(ns)))
    bound = []
    notes = []
    for load, label in LOADS:
        for g in guests:
            cs = [scell(g, n, load) for n in ns]
            if not any(c["n"] for c in cs):
                continue
            line = f"| {label} | {NAMES[g]} |"
            for n, c in zip(ns, cs):
                if "rps" in c:
                    line += f" {c['rps']:,.0f}" + (f" ({c['ok']} of {c['ok'] + c['bad']} clean)" if c["bad"] else "") + " |"
                elif c["why"]:
                    line += " unavailable |"
                else:
                    line += " failed |" if c["bad"] else " – |"
                if c["note"]:
                    notes.append(f"{NAMES[g]} at {n} vCPU: {c['note']}")
            if len(ns) > 1:
                a, b = cs[0], cs[-1]
                line += f" {b['rps'] / a['rps']:.2f}x |" if "rps" in a and "rps" in b and a["rps"] else " – |"
            for n, c in zip(ns, cs):
                line += (f" {c['cpu']:.0f} / {c['us']:,.0f} |" if "cpu" in c and "us" in c
                         else (f" {c['cpu']:.1f} (idle) |" if "cpu" in c else " – |"))
                if "client" in c:
                    mark = " client-bound" if c["client"] >= CLIENT_BOUND else ""
                    line += f" {c['client']:.0f}{mark} |"
                    if mark:
                        bound.append(f"{NAMES[g]} {n} vCPU {label}")
                else:
                    line += " – |"
                line += f" {c['host']:.0f} |" if "host" in c else " – |"
            w(line)
    for g in guests:
        # Any status: runs.csv before the fix wrote "ok0.4" for an idle row.
        idle = []
        for n in ns:
            v = [float(r["qemu_cpu_pct"]) for r in rows if r["guest"] == g and r["load"] == "idle"
                 and int(r.get("vcpus") or 1) == n and r["qemu_cpu_pct"]]
            idle.append(f" {statistics.median(v):.1f} / – |" if v else " – |")
        w(f"| idle, 10 s | {NAMES[g]} |" + " – |" * (len(ns) + (len(ns) > 1))
          + "".join(x + " – | – |" for x in idle))
    w("")
    if len(ns) > 1 and "skiff" in guests and "linux" in guests:
        n = ns[-1]
        parts = []
        for load, label in LOADS:
            a, b = scell("linux", n, load), scell("skiff", n, load)
            if "rps" in a and "rps" in b and a["rps"]:
                parts.append(f"{label} {b['rps'] / a['rps']:.2f}x")
        if parts:
            w(f"skiff / Linux guest at {n} vCPUs: {'; '.join(parts)}.\n")
    if bound:
        w(f"Client-bound (ab at {CLIENT_BOUND:.0f}% or more of its core): {'; '.join(bound)}.\n")
    if notes:
        w("Notes: " + "; ".join(sorted(set(notes))) + ".\n")
    whys = sorted({f"{NAMES[r['guest']]} at {r.get('vcpus') or 1} vCPU: {r['note']}"
                   for r in rows if r["status"] == "unavailable"})
    if whys:
        w("Unavailable: " + "; ".join(whys) + ".\n")


def main():
    d = sys.argv[1]
    meta = {}
    with open(os.path.join(d, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    rows = list(csv.DictReader(open(os.path.join(d, "runs.csv"))))
    nets = [n for n in ("user", "tap") if any(r["net"] == n for r in rows)]
    guests = [g for g in ("linux", "nginx", "skiff") if any(r["guest"] == g for r in rows)]
    reps = max((int(r["rep"]) for r in rows), default=0)

    files = sorted({body_of(r) for r in rows} - {41})

    def cell(net, guest, load, body=41):
        rs = [r for r in rows if r["net"] == net and r["guest"] == guest and r["load"] == load
              and body_of(r) == body]
        ok = [r for r in rs if r["status"] == "ok"]
        bad = [r for r in rs if r["status"] == "failed"]
        unav = [r for r in rs if r["status"] == "unavailable"]
        res = {"n": len(rs), "ok": len(ok), "bad": len(bad), "unav": len(unav),
               "skip": sum(r["status"] == "skipped" for r in rs)}
        if ok:
            res["rps"] = statistics.median(float(r["rps"]) for r in ok)
            cpu = [float(r["qemu_cpu_pct"]) for r in ok if r["qemu_cpu_pct"]]
            if cpu:
                res["cpu"] = statistics.median(cpu)
            # Older runs.csv: from the CPU share and req/s of the same run.
            us = [float(r["qemu_us_req"]) if r.get("qemu_us_req")
                  else float(r["qemu_cpu_pct"]) * 1e4 / float(r["rps"])
                  for r in ok if r.get("qemu_us_req") or (r["qemu_cpu_pct"] and float(r["rps"] or 0))]
            if us:
                res["us"] = statistics.median(us)
            cc = [float(r["client_cpu_pct"]) for r in ok if r.get("client_cpu_pct")]
            if cc:
                res["client"] = statistics.median(cc)
        if unav and not ok and not bad:
            res["why"] = unav[0]["note"]
        return res

    def fmt(c):
        if "rps" in c:
            s = f"{c['rps']:,.0f}"
            if c["bad"]:
                s += f" ({c['ok']} of {c['ok'] + c['bad']} runs clean)"
            return s
        if c["bad"]:
            return f"failed ({c['bad']} of {c['bad']} runs had errors)"
        if c.get("skip"):
            return "skipped (time budget)"
        if c["unav"]:
            return "unavailable"
        return "–"

    out = []
    w = out.append
    w(f"# bench-vm: skiff unikernel vs Linux guest ({meta.get('date', '')})\n")
    w(f"Mode `{meta.get('mode', '')}`. Requests per second, median of the clean runs "
      f"(no failed request, no non-2xx answer, no socket error) of {reps} repetition(s); "
      "guests alternating at every repetition; each run follows an unmeasured warm-up of "
      "the same load (`warmup=` seconds above). Runs with errors are shown as such and "
      "are not in the medians. QEMU CPU is the QEMU process's user+system time over the "
      "run, in % of one host core, and per request in µs (medians); the client's CPU is "
      "ab's or wrk's user+system time over the run in % of one core (median). Under user "
      "networking QEMU's CPU includes slirp, the host side of the network.\n")
    w("| | |\n|---|---|")
    w(f"| machine | {meta.get('cpu', '')}, host kernel {meta.get('host_kernel', '')}, "
      f"load average at start {meta.get('host_load', '')} (shared machine) |")
    w(f"| accelerator | {meta.get('accel', '')} |")
    w(f"| QEMU | {meta.get('qemu', '')}; 1 vCPU, 256 MiB, virtio-net-pci disable-legacy=on |")
    w(f"| Linux guest | {meta.get('linux_kernel', '')}; initramfs /init = bench/vm/init.c, "
      "server = `skiff serve --stack linux --port 80` linked static |")
    w(f"| skiff | commit {meta.get('skiff_commit', '')}, build/skiff-uk.elf |")
    w(f"| load tools | {meta.get('ab', '')}; {meta.get('wrk', '')} |")
    if files:
        w(f"| files | {meta.get('site', '')} (bench/http/bench.py's names and bytes); "
          f"skiff: `skiff vm --root TREE`; Linux guest: {meta.get('site_initrd', '')}, "
          "`skiff serve --stack linux --port 80 --root /site` |")
    w("")
    for net in nets:
        w(f"## {NETS[net]}\n")
        pair = "linux" in guests and "skiff" in guests
        fl = [b for b in files if any(r["net"] == net and body_of(r) == b for r in rows)]
        has41 = any(r["net"] == net and body_of(r) == 41 for r in rows)
        if has41:
            w("### The built-in 41-byte body\n")
        else:
            w("(No 41-byte rows in this run: --sizes left them out.)\n")
        hdr = "| load |" + "".join(f" {NAMES[g]} req/s |" for g in guests)
        sep = "|---|" + "--:|" * len(guests)
        if pair:
            hdr += " skiff / Linux |"
            sep += "--:|"
        hdr += "".join(f" {NAMES[g]} QEMU CPU % |" for g in guests)
        sep += "--:|" * len(guests)
        hdr += "".join(f" {NAMES[g]} QEMU µs/req |" for g in guests)
        sep += "--:|" * len(guests)
        if has41:
            w(hdr)
            w(sep)
        for load, label in LOADS if has41 else []:
            cs = [cell(net, g, load) for g in guests]
            line = f"| {label} |" + "".join(f" {fmt(c)} |" for c in cs)
            if pair:
                a, b = cs[guests.index("linux")], cs[guests.index("skiff")]
                line += f" {b['rps'] / a['rps']:.2f}x |" if "rps" in a and "rps" in b and a["rps"] else " – |"
            line += "".join(f" {c['cpu']:.0f} |" if "cpu" in c else " – |" for c in cs)
            line += "".join(f" {c['us']:,.0f} |" if "us" in c else " – |" for c in cs)
            w(line)
        idle = []
        for g in guests:
            v = [float(r["qemu_cpu_pct"]) for r in rows
                 if r["net"] == net and r["guest"] == g and r["load"] == "idle" and r["qemu_cpu_pct"]]
            idle.append(f"{statistics.median(v):.1f}" if v else "–")
        if has41:
            w("| idle, 10 s, no load |" + " – |" * len(guests)
              + (" |" if pair else "") + "".join(f" {x} |" for x in idle) + " – |" * len(guests))
            w("")
        if fl:
            w(f"### Files on {net}: req/s, QEMU µs per request, client CPU\n")
            hdr = "| body, load |" + "".join(f" {NAMES[g]} req/s |" for g in guests)
            sep = "|---|" + "--:|" * len(guests)
            if pair:
                hdr += " skiff / Linux |"
                sep += "--:|"
            hdr += "".join(f" {NAMES[g]} QEMU µs/req |" for g in guests)
            hdr += "".join(f" {NAMES[g]} MB/s |" for g in guests)
            hdr += "".join(f" client CPU % ({g}) |" for g in guests)
            sep += "--:|" * (3 * len(guests))
            w(hdr)
            w(sep)
            bound = []
            for b in fl:
                for load, label in LOADS:
                    cs = [cell(net, g, load, b) for g in guests]
                    if not any(c["n"] for c in cs):
                        continue
                    line = f"| {size_label(b)}, {label} |" + "".join(f" {fmt(c)} |" for c in cs)
                    if pair:
                        a, c2 = cs[guests.index("linux")], cs[guests.index("skiff")]
                        line += (f" {c2['rps'] / a['rps']:.2f}x |"
                                 if "rps" in a and "rps" in c2 and a["rps"] else " – |")
                    line += "".join(f" {c['us']:,.0f} |" if "us" in c else " – |" for c in cs)
                    line += "".join(f" {c['rps'] * b / 1e6:.1f} |" if "rps" in c else " – |" for c in cs)
                    for g, c in zip(guests, cs):
                        if "client" in c:
                            mark = " (client-bound)" if c["client"] >= CLIENT_BOUND else ""
                            line += f" {c['client']:.0f}{mark} |"
                            if mark:
                                bound.append(f"{NAMES[g]} at {size_label(b)}, {label}")
                        else:
                            line += " – |"
                    w(line)
            w("")
            if bound:
                w(f"Client-bound (ab at {CLIENT_BOUND:.0f}% or more of its core, so these "
                  f"rows measure the client as much as the guest): {'; '.join(bound)}.\n")
        whys = {g: cell(net, g, "ab-k-c1").get("why") for g in guests}
        for g, why in whys.items():
            if why:
                w(f"{NAMES[g]} on {net}: unavailable ({why}).\n")
        for g in guests:
            why = next((cell(net, g, ld, b).get("why") for b in fl for ld, _ in LOADS
                        if cell(net, g, ld, b).get("why")), None)
            if why:
                w(f"{NAMES[g]} on {net}, files: unavailable ({why}).\n")
    smp_rows = [r for r in rows if r["net"] == "tap-smp"]
    if smp_rows:
        smp_table(w, smp_rows, meta)
    bad = [r for r in rows if r["status"] == "failed"]
    if bad:
        w("## Runs with errors (not in the medians)\n")
        w("| rep | net | guest | body | load | requests | errors | req/s | note |\n"
          "|--:|---|---|--:|---|--:|--:|--:|---|")
        for r in bad:
            w(f"| {r['rep']} | {r['net']} | {r['guest']} | {body_of(r)} | {r['load']} | {r['requests']} | "
              f"{r['failed']} | {r['rps']} | {r['note']} |")
        w("")
    # The 41-byte rows only: a file's slowest request is long by its size.
    slow = [r for r in rows if r["status"] == "ok" and (r.get("max_latency_ms") or "").isdigit()
            and int(r["max_latency_ms"]) >= 1000 and body_of(r) == 41]
    if slow:
        w("## Clean runs with a request slower than 1 s (in the medians)\n")
        w("ab and wrk count these as successful. On TCG such a request is most likely a "
          "retransmitted SYN or SYN-ACK (1 s initial timeout, then doubling); under user "
          "networking a stall of about 6 s matches slirp's own initial SYN retransmission "
          "timeout. See logs/ for each run's latency distribution.\n")
        w("| rep | net | guest | body | load | req/s | slowest request ms |\n|--:|---|---|--:|---|--:|--:|")
        for r in slow:
            w(f"| {r['rep']} | {r['net']} | {r['guest']} | {body_of(r)} | {r['load']} | {r['rps']} | "
              f"{r['max_latency_ms']} |")
        w("")
    w("## Exact commands\n")
    w("```")
    for k, v in meta.items():
        if k.startswith("qemu_"):
            w(f"# {k[5:]}\n{v}")
    dur = meta.get("mode", "").split("dur=")[-1].split()[0] if "dur=" in meta.get("mode", "") else "?"
    w(f"ab -r -k -c C -t {dur} -n 1000000 URL      # C = 1, 8, 64")
    w(f"ab -r    -c C -t {dur} -n 1000000 URL      # C = 1, 16, 64")
    w(f"wrk -t 2 -c 1000 -d {dur}s --timeout 10s -H 'Connection: close' URL")
    w("```")
    w("URL: http://127.0.0.1:PORT/ (user networking, hostfwd to guest :80) or "
      "http://198.18.0.2/ from inside the namespace (TAP); for the files, the path of each "
      "(/x6000.bin, /x102400.bin, /x1048576.bin).\n")
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write("\n".join(out) + "\n")

    # rps.png: one cluster per load, one bar per guest and network (41 B).
    if not any(body_of(r) == 41 and r["net"] in nets for r in rows):
        return  # e.g. --smp-only: the 1-vs-N table has no chart
    series = [(n, g) for n in nets for g in guests]
    dat = os.path.join(d, "rps.dat")
    # A series with no clean run at all is drawn as zeros (gnuplot would
    # drop it and shift the others) and says so in its title.
    empty = {(n, g) for n, g in series if not any("rps" in cell(n, g, l) for l, _ in LOADS)}
    with open(dat, "w") as f:
        f.write("# load " + " ".join(f"{g}/{n}" for n, g in series) + "\n")
        for load, _ in LOADS:
            vals = []
            for n, g in series:
                c = cell(n, g, load)
                vals.append(f"{c['rps']:.0f}" if "rps" in c else ("0" if (n, g) in empty else "?"))
            f.write(load + " " + " ".join(vals) + "\n")
    cols = " , ".join(f"'{dat}' using {i + 2}:xtic(1) title '{NAMES[g]} ({n})"
                      f"{', unavailable' if (n, g) in empty else ''}'"
                      for i, (n, g) in enumerate(series))
    gp = f"""set terminal pngcairo size 1100,560 font 'sans,10'
set output '{os.path.join(d, 'rps.png')}'
set title "requests/s, median of clean runs ({meta.get('accel', '').split(':')[0]}, 1 vCPU, virtio-net) — {meta.get('date', '')}"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set datafile missing '?'
set key top right
set ylabel 'requests/s'
set yrange [0:*]
set grid ytics
plot {cols}
"""
    subprocess.run(["gnuplot"], input=gp.encode(), check=True)


if __name__ == "__main__":
    main()
