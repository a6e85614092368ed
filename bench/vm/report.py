#!/usr/bin/env python3
"""report.py — results.md and rps.png from a bench/vm/bench.sh run.

    report.py DIR        (reads DIR/runs.csv and DIR/meta.txt)

Medians are over the runs with status "ok" only; failed runs are counted
next to the median and listed, never folded in.  rps.png is drawn with
gnuplot (a grouped bar chart of the medians).
"""
import csv, os, statistics, subprocess, sys

LOADS = [
    ("ab-k-c1", "ab -k -c 1"), ("ab-k-c8", "ab -k -c 8"), ("ab-k-c64", "ab -k -c 64"),
    ("ab-c1", "ab -c 1"), ("ab-c16", "ab -c 16"), ("ab-c64", "ab -c 64"),
    ("wrk-close-c1000", "wrk -c 1000, Connection: close"),
]
NAMES = {"linux": "Linux guest", "nginx": "Linux guest, nginx", "skiff": "skiff unikernel"}
NETS = {"user": "user networking (slirp), hostfwd 127.0.0.1", "tap": "TAP in a namespace"}


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

    def cell(net, guest, load):
        rs = [r for r in rows if r["net"] == net and r["guest"] == guest and r["load"] == load]
        ok = [r for r in rs if r["status"] == "ok"]
        bad = [r for r in rs if r["status"] == "failed"]
        unav = [r for r in rs if r["status"] == "unavailable"]
        res = {"n": len(rs), "ok": len(ok), "bad": len(bad), "unav": len(unav),
               "skip": sum(r["status"] == "skipped" for r in rs)}
        if ok:
            res["rps"] = statistics.median(float(r["rps"]) for r in ok)
            res["cpu"] = statistics.median(float(r["qemu_cpu_pct"]) for r in ok if r["qemu_cpu_pct"])
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
      "run, in % of one host core (median).\n")
    w("| | |\n|---|---|")
    w(f"| machine | {meta.get('cpu', '')}, host kernel {meta.get('host_kernel', '')}, "
      f"load average at start {meta.get('host_load', '')} (shared machine) |")
    w(f"| accelerator | {meta.get('accel', '')} |")
    w(f"| QEMU | {meta.get('qemu', '')}; 1 vCPU, 256 MiB, virtio-net-pci disable-legacy=on |")
    w(f"| Linux guest | {meta.get('linux_kernel', '')}; initramfs /init = bench/vm/init.c, "
      "server = `skiff serve --stack linux --port 80` linked static |")
    w(f"| skiff | commit {meta.get('skiff_commit', '')}, build/skiff-uk.elf |")
    w(f"| load tools | {meta.get('ab', '')}; {meta.get('wrk', '')} |")
    w("")
    for net in nets:
        w(f"## {NETS[net]}\n")
        pair = "linux" in guests and "skiff" in guests
        hdr = "| load |" + "".join(f" {NAMES[g]} req/s |" for g in guests)
        sep = "|---|" + "--:|" * len(guests)
        if pair:
            hdr += " skiff / Linux |"
            sep += "--:|"
        hdr += "".join(f" {NAMES[g]} QEMU CPU % |" for g in guests)
        sep += "--:|" * len(guests)
        w(hdr)
        w(sep)
        for load, label in LOADS:
            cs = [cell(net, g, load) for g in guests]
            line = f"| {label} |" + "".join(f" {fmt(c)} |" for c in cs)
            if pair:
                a, b = cs[guests.index("linux")], cs[guests.index("skiff")]
                line += f" {b['rps'] / a['rps']:.2f}x |" if "rps" in a and "rps" in b and a["rps"] else " – |"
            line += "".join(f" {c['cpu']:.0f} |" if "cpu" in c else " – |" for c in cs)
            w(line)
        idle = []
        for g in guests:
            v = [float(r["qemu_cpu_pct"]) for r in rows
                 if r["net"] == net and r["guest"] == g and r["load"] == "idle" and r["qemu_cpu_pct"]]
            idle.append(f"{statistics.median(v):.1f}" if v else "–")
        w("| idle, 10 s, no load |" + " – |" * len(guests)
          + (" |" if pair else "") + "".join(f" {x} |" for x in idle))
        w("")
        whys = {g: cell(net, g, "ab-k-c1").get("why") for g in guests}
        for g, why in whys.items():
            if why:
                w(f"{NAMES[g]} on {net}: unavailable ({why}).\n")
    bad = [r for r in rows if r["status"] == "failed"]
    if bad:
        w("## Runs with errors (not in the medians)\n")
        w("| rep | net | guest | load | requests | errors | req/s | note |\n|--:|---|---|---|--:|--:|--:|---|")
        for r in bad:
            w(f"| {r['rep']} | {r['net']} | {r['guest']} | {r['load']} | {r['requests']} | "
              f"{r['failed']} | {r['rps']} | {r['note']} |")
        w("")
    slow = [r for r in rows if r["status"] == "ok" and (r.get("max_latency_ms") or "").isdigit()
            and int(r["max_latency_ms"]) >= 1000]
    if slow:
        w("## Clean runs with a request slower than 1 s (in the medians)\n")
        w("ab and wrk count these as successful. On TCG such a request is most likely a "
          "retransmitted SYN or SYN-ACK (1 s initial timeout, then doubling); under user "
          "networking a stall of about 6 s matches slirp's own initial SYN retransmission "
          "timeout. See logs/ for each run's latency distribution.\n")
        w("| rep | net | guest | load | req/s | slowest request ms |\n|--:|---|---|---|--:|--:|")
        for r in slow:
            w(f"| {r['rep']} | {r['net']} | {r['guest']} | {r['load']} | {r['rps']} | {r['max_latency_ms']} |")
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
      "http://198.18.0.2/ from inside the namespace (TAP).\n")
    with open(os.path.join(d, "results.md"), "w") as f:
        f.write("\n".join(out) + "\n")

    # rps.png: one cluster per load, one bar per guest and network.
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
