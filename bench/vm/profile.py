#!/usr/bin/env python3
"""profile.py PORT UPORT SECONDS — per-request costs inside the Linux guest.

For each load (ab -k -c 1, ab -c 1) against http://127.0.0.1:PORT/, reads
the guest's counters through init.c's control port (UDP 127.0.0.1:UPORT ->
guest :9) before and after, and prints them per request: CPU time split
(user, system, softirq, irq, idle; USER_HZ ticks, so coarse), context
switches, interrupts, NET_RX/NET_TX softirqs, TCP segments, the server's
own user/system time, and every TcpExt counter (/proc/net/netstat) that
moved during the run.
"""
import re, socket, subprocess, sys

port, uport, dur = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
HZ = 100  # USER_HZ in the guest's /proc


def snap():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(5)
    s.sendto(b"stat", ("127.0.0.1", uport))
    data = s.recv(65536).decode(errors="replace")
    files = dict(re.findall(r"==> (\S+)\n(.*?)(?=\n==> |\Z)", data, re.S))
    out = {}
    for line in files.get("/proc/stat", "").splitlines():
        f = line.split()
        if f and f[0] == "cpu":
            for k, v in zip(["user", "nice", "system", "idle", "iowait", "irq", "softirq"], f[1:8]):
                out["cpu." + k] = int(v)
        elif f and f[0] in ("ctxt", "intr"):
            out[f[0]] = int(f[1])
    for line in files.get("/proc/softirqs", "").splitlines():
        f = line.split()
        if f and f[0] in ("NET_RX:", "NET_TX:", "TIMER:", "HRTIMER:", "RCU:", "SCHED:"):
            out["softirq." + f[0][:-1]] = sum(int(x) for x in f[1:])
    for line in files.get("/proc/interrupts", "").splitlines():
        f = line.split()
        if len(f) > 2 and f[0].endswith(":") and ("virtio" in line or f[0] in ("LOC:", "RES:", "CAL:")):
            name = f[-1] if "virtio" in line else f[0][:-1]
            try:
                out["irq." + name] = int(f[1])
            except ValueError:
                pass
    snmp = [l.split() for l in files.get("/proc/net/snmp", "").splitlines() if l.startswith("Tcp:")]
    if len(snmp) == 2:
        for k, v in zip(snmp[0][1:], snmp[1][1:]):
            if k in ("ActiveOpens", "PassiveOpens", "InSegs", "OutSegs", "RetransSegs"):
                out["tcp." + k] = int(v)
    ext = [l.split() for l in files.get("/proc/net/netstat", "").splitlines() if l.startswith("TcpExt:")]
    if len(ext) == 2:
        for k, v in zip(ext[0][1:], ext[1][1:]):
            out["TcpExt." + k] = int(v)
    for path, body in files.items():
        if re.match(r"/proc/\d+/stat$", path):
            f = body.rsplit(")", 1)[1].split()
            out["server.utime"], out["server.stime"] = int(f[11]), int(f[12])
    return out


for label, args in (("ab -k -c 1", ["-k", "-c", "1"]), ("ab -c 1", ["-c", "1"])):
    a = snap()
    r = subprocess.run(["timeout", str(dur + 30), "ab", "-r", *args, "-t", str(dur), "-n", "1000000",
                        f"http://127.0.0.1:{port}/"], capture_output=True, text=True)
    b = snap()
    m = re.search(r"Complete requests:\s+(\d+)", r.stdout)
    fails = re.search(r"Failed requests:\s+(\d+)", r.stdout)
    rps = re.search(r"Requests per second:\s+([\d.]+)", r.stdout)
    n = int(m.group(1)) if m else 0
    print(f"\n== {label}: {n} requests, {fails.group(1) if fails else '?'} failed, "
          f"{rps.group(1) if rps else '?'} req/s (guest counters per request)")
    if not n:
        continue
    ticks = sum(b[k] - a[k] for k in b if k.startswith("cpu."))
    for k in sorted(b):
        d = b[k] - a.get(k, 0)
        if k.startswith("cpu.") or k.startswith("server."):
            us = d / HZ / n * 1e6
            share = f"  ({100 * d / ticks:4.1f}% of guest CPU time)" if k.startswith("cpu.") and ticks else ""
            print(f"  {k:22s} {us:9.1f} us/request{share}")
        elif k.startswith("TcpExt."):
            if d:
                print(f"  {k:22s} {d:9d} in the run")
        else:
            print(f"  {k:22s} {d / n:9.2f} /request")
    slow = re.search(r"100%\s+(\d+)", r.stdout)
    print(f"  slowest request: {slow.group(1) if slow else '?'} ms")
