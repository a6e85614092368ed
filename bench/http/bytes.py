#!/usr/bin/env python3
"""bytes.py — `make bench-bytes` (issue 31 item 4): real payloads, bytes and
CPU per byte, skiff against nginx with sendfile, offloads on and off.

Run `python3 bench/http/bytes.py --help` for the options; docs/bench-bytes.md
says how to read the output.  Needs root (network namespaces).

What one invocation measures, for every offload mode (BENCH_BYTES_OFFLOADS,
default "default off"):
  rows   bodies of 41 B, 6000 B, 100 KiB, 1 MiB and 16 MiB (files under one
         --root, random bytes), keep-alive (ab -k -c 8) and a connection per
         request (ab -c 16; not for 16 MiB, where the handshake is a rounding
         error of the transfer and the row would repeat keep-alive's)
  big    one connection downloading one 1 GiB file (curl), goodput and CPU
  tls    1 MiB keep-alive over HTTPS, skiff --stack linux and nginx (kTLS
         where the kernel has the tls ULP)
Servers (alternating A/B/A/B at every repetition of every row):
  nginx         Debian's nginx, bench/http/nginx.conf.in (sendfile on)
  linux-app     skiff serve --stack linux
  skiff-packet  skiff serve --stack skiff --dev packet:vs0
  skiff-tap     skiff serve --stack skiff --dev tap:sk0
Every run gets a fresh topology (namespaces skb-<pid>-cli and -srv, only
198.18.0.0/24): the client's vc0 198.18.0.1 is one end of a veth pair whose
other end vs0 is in the server's namespace.  nginx and linux-app hold
198.18.0.2 on vs0, skiff-packet owns vs0 as 198.18.0.2, and for skiff-tap
vs0 and the TAP sk0 are bridged (br0) in the server's namespace: every
server has the same client on the same veth.  Offload mode "default" leaves
the veth (and TAP, bridge) features as the kernel made them, as a user or a
container has them; "off" turns checksum and segmentation offloads off on
every one of them, as make bench and the tests do.

Per run: the server pinned to CPU 1 (taskset), the body checked byte for
byte (sha256) with curl, a short bounded warm-up, then the load pinned to
CPU 0, bounded in time and count.  Before and after the load: utime+stime
of the server's processes (/proc/PID/stat, every thread; nginx master and
worker) and /proc/stat's per-CPU busy time.  A run with any failed request,
non-2xx answer, socket error or wrong body is FAILED; a row with a FAILED
run is void (printed FAILED with the reason, no figure).
"""
import argparse
import csv
import datetime
import hashlib
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# bench.py reads its own BENCH_* settings at import and refuses unknown
# servers and loads; ours are not its, so it sees its defaults.
for _k in ("BENCH_SERVERS", "BENCH_LOADS", "BENCH_PASSES", "BENCH_TLS"):
    os.environ.pop(_k, None)
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (namespaces, /proc readers, ab's parser)

REPO = B.REPO
SRV_IP, CLI_IP = B.SRV_IP, B.CLI_IP
HZ = B.HZ
SERVER_NAMES = ["nginx", "linux-app", "skiff-packet", "skiff-tap"]
TLS_SERVERS = ["nginx", "linux-app"]
MODES = ["default", "off"]
DEFAULT_BODIES = [41, 6000, 102400, 1048576, 16777216]
SAT_PCT = 95.0
START_TIMEOUT = 8.0


def env(name, default):
    v = os.environ.get(name, "")
    return v if v.strip() else default


def parse_args():
    quick_env = env("BENCH_QUICK", "0") == "1"
    p = argparse.ArgumentParser(
        prog="bytes.py",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="make bench-bytes: body sizes from 41 B to 16 MiB, a 1 GiB single "
        "download and 1 MiB over HTTPS; skiff (packet:, tap:, --stack linux) against "
        "nginx with sendfile, with the veth's default offloads and with them off; req/s, "
        "MiB/s and server CPU per byte (ns/B).  Needs root.",
        epilog="Environment (the options win): BENCH_QUICK=1 (= --quick), BENCH_BYTES_REPS, "
        "BENCH_BYTES_DURATION, BENCH_BYTES_SERVERS, BENCH_BYTES_OFFLOADS, BENCH_BYTES_BODIES, "
        "BENCH_BYTES_BIG_MIB, BENCH_BYTES_KA_C, BENCH_BYTES_CLOSE_C, BENCH_BYTES_PARTS, "
        "BENCH_BYTES_SKIFF_ARGS, BENCH_OUT.  Output: BENCH_OUT or "
        "bench/results/bytes-<date>/ (results.md, runs.csv); raw client output "
        "in logs/ there (gitignored).  See docs/bench-bytes.md.")
    p.add_argument("skiff", nargs="?", default=os.path.join(REPO, "build", "skiff"),
                   help="the skiff binary (default build/skiff)")
    p.add_argument("--quick", action="store_true", default=quick_env,
                   help="smoke test: 1 repetition, 1 s per run, no warm-up, a 256 MiB "
                   "'big' file (about 3 minutes; the figures mean little)")
    p.add_argument("--reps", type=int, default=None,
                   help="repetitions of every row (default 3, quick 1)")
    p.add_argument("--duration", type=float, default=None,
                   help="seconds per ab run (default 2, quick 1)")
    p.add_argument("--servers", default=env("BENCH_BYTES_SERVERS", " ".join(SERVER_NAMES)),
                   help="servers, in alternation order (default: %(default)s)")
    p.add_argument("--offloads", default=env("BENCH_BYTES_OFFLOADS", " ".join(MODES)),
                   help="offload modes to run: default, off (default: %(default)s)")
    p.add_argument("--bodies", default=env("BENCH_BYTES_BODIES",
                                           " ".join(map(str, DEFAULT_BODIES))),
                   help="body sizes in bytes (default: %(default)s)")
    p.add_argument("--big-mib", type=int, default=None,
                   help="size of the single-connection download in MiB (default 1024, "
                   "quick 256; 0 skips it)")
    p.add_argument("--parts", default=env("BENCH_BYTES_PARTS", "rows big tls"),
                   help="which parts: rows big tls (default: %(default)s)")
    p.add_argument("--ka-c", type=int, default=int(env("BENCH_BYTES_KA_C", "8")),
                   help="ab -k concurrency of the keep-alive rows (default %(default)s)")
    p.add_argument("--close-c", type=int, default=int(env("BENCH_BYTES_CLOSE_C", "16")),
                   help="ab concurrency of the connection-per-request rows "
                   "(default %(default)s)")
    p.add_argument("--out", default=env("BENCH_OUT", ""),
                   help="output folder (default bench/results/bytes-<date>)")
    a = p.parse_args()
    if a.reps is None:
        a.reps = int(env("BENCH_BYTES_REPS", "1" if a.quick else "3"))
    if a.duration is None:
        a.duration = float(env("BENCH_BYTES_DURATION", "1" if a.quick else "2"))
    if a.big_mib is None:
        a.big_mib = int(env("BENCH_BYTES_BIG_MIB", "256" if a.quick else "1024"))
    a.servers = a.servers.split()
    a.offloads = a.offloads.split()
    a.bodies = [int(x) for x in a.bodies.split()]
    a.parts = a.parts.split()
    for s in a.servers:
        if s not in SERVER_NAMES:
            p.error(f"unknown server '{s}' (known: {' '.join(SERVER_NAMES)})")
    for m in a.offloads:
        if m not in MODES:
            p.error(f"unknown offload mode '{m}' (known: {' '.join(MODES)})")
    for x in a.parts:
        if x not in ("rows", "big", "tls"):
            p.error(f"unknown part '{x}' (known: rows big tls)")
    if a.reps < 1 or a.duration <= 0 or any(b < 1 for b in a.bodies):
        p.error("reps, duration and body sizes must be positive")
    a.skiff = os.path.abspath(a.skiff)
    return a


ARGS = None
log = B.log
sh = B.sh


def body_name(size):
    return f"x{size}.bin"


def human(size):
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return f"{size >> 20} MiB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size >> 10} KiB"
    return f"{size} B"


def write_random(path, size):
    """SIZE random bytes into PATH; returns their sha256 (hex)."""
    h = hashlib.sha256()
    with open("/dev/urandom", "rb") as src, open(path, "wb") as dst:
        left = size
        while left:
            chunk = src.read(min(left, 4 << 20))
            h.update(chunk)
            dst.write(chunk)
            left -= len(chunk)
    return h.hexdigest()


# ----------------------------------------------------------------- topology
class Topo:
    """The client's namespace and the server's, one veth between them; for
    skiff-tap also a TAP bridged with vs0 in the server's namespace."""

    def __init__(self, server, mode):
        self.cli, self.srv = B.ns_name("cli"), B.ns_name("srv")
        B.ns_add(self.cli)
        B.ns_add(self.srv)
        sh(["ip", "-n", self.cli, "link", "add", "vc0", "type", "veth", "peer", "name", "vs0",
            "netns", self.srv], check=True)
        ifs = [(self.cli, "vc0"), (self.srv, "vs0")]
        if server == "skiff-tap":
            for cmd in (["ip", "tuntap", "add", "dev", "sk0", "mode", "tap"],
                        ["ip", "link", "add", "br0", "type", "bridge"],
                        ["ip", "link", "set", "vs0", "master", "br0"],
                        ["ip", "link", "set", "sk0", "master", "br0"],
                        ["ip", "link", "set", "sk0", "up"],
                        ["ip", "link", "set", "br0", "up"]):
                sh(["ip", "netns", "exec", self.srv] + cmd, check=True)
            ifs += [(self.srv, "sk0"), (self.srv, "br0")]
        if mode == "off":
            for ns, ifn in ifs:
                B.offloads_off(ns, ifn)
        sh(["ip", "-n", self.cli, "addr", "add", f"{CLI_IP}/24", "dev", "vc0"], check=True)
        if server in ("nginx", "linux-app"):
            sh(["ip", "-n", self.srv, "addr", "add", f"{SRV_IP}/24", "dev", "vs0"], check=True)
        sh(["ip", "-n", self.cli, "link", "set", "vc0", "up"], check=True)
        sh(["ip", "-n", self.srv, "link", "set", "vs0", "up"], check=True)
        B.client_sysctls(self.cli)
        B.server_sysctls(self.srv)
        self.features = offload_summary(self.cli, "vc0")

    def close(self):
        for ns in (self.cli, self.srv):
            B.ns_del(ns)


def offload_summary(ns, ifn):
    """'tx-checksumming on, tcp-segmentation-offload on, ...' for the docs."""
    r = sh(["ip", "netns", "exec", ns, "ethtool", "-k", ifn])
    keep = ("tx-checksumming", "rx-checksumming", "tcp-segmentation-offload",
            "generic-segmentation-offload", "generic-receive-offload")
    out = []
    for line in r.stdout.splitlines():
        k, _, v = line.partition(":")
        if k.strip() in keep:
            out.append(f"{k.strip()} {v.split()[0] if v.split() else '?'}")
    return ", ".join(out)


# ------------------------------------------------------------------- server
class Server:
    def __init__(self, name, mode, work, tls):
        self.name, self.mode, self.work, self.tls = name, mode, work, tls
        self.proc, self.topo = None, None
        self.log = os.path.join(work, f"{name}-{mode}{'-tls' if tls else ''}.log")
        self.stats = {}

    def command(self):
        pin = ["taskset", "-c", "1"]
        if self.name == "nginx":
            return pin + ["nginx", "-p", self.work + "/", "-c",
                          os.path.join(self.work, "nginx-tls.conf" if self.tls else "nginx.conf")]
        cmd = pin + [ARGS.skiff, "serve", "--port", "80", "--stats", "--root",
                     os.path.join(self.work, "www")]
        cmd += env("BENCH_BYTES_SKIFF_ARGS", "").split()
        if self.tls:
            cmd += ["--tls-cert", os.path.join(self.work, "tls.crt"), "--tls-key",
                    os.path.join(self.work, "tls.key"), "--tls-port", "443"]
        if self.name == "linux-app":
            return cmd + ["--stack", "linux", "--ip", SRV_IP]
        dev = {"skiff-packet": "packet:vs0", "skiff-tap": "tap:sk0"}[self.name]
        return cmd + ["--stack", "skiff", "--dev", dev, "--ip", f"{SRV_IP}/24"]

    def start(self):
        """None when it answers HTTP, else why not."""
        self.topo = Topo(self.name, self.mode)
        out = open(self.log, "w")
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.topo.srv] + self.command(),
                                     stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        B.MY_PROCS.append(self.proc)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return f"exited {self.proc.returncode}: {B.tail(self.log)}"
            r = sh(["timeout", "2", "ip", "netns", "exec", self.topo.cli, "curl", "-s",
                    "--max-time", "1", "-o", "/dev/null", "-w", "%{http_code}",
                    f"http://{SRV_IP}/"], timeout=5)
            if r.stdout.strip() not in ("", "000"):  # any HTTP answer (/ is 403/404)
                return None
            time.sleep(0.1)
        return f"no HTTP answer within {START_TIMEOUT:.0f} s"

    def pids(self):
        if self.proc is None:
            return []
        tree, todo = [], [self.proc.pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += B.children(p)
        return tree

    def stop(self):
        if self.proc is not None:
            if self.proc.poll() is None:
                try:
                    os.kill(self.proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    self.proc.wait(5)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
            B.MY_PROCS.remove(self.proc)
            self.proc = None
            self.stats = B.read_stats(self.log)
        if self.topo is not None:
            self.topo.close()
            self.topo = None

    def drop_note(self):
        """skiff's non-zero drop counters (--stats at exit): why a run failed."""
        drops = [f"{k} {v}" for k, v in sorted(self.stats.items())
                 if v and ("drop" in k or "csum" in k or "bad" in k)]
        return ("; skiff --stats: " + ", ".join(drops[:6])) if drops else ""

    def path_notes(self):
        """What the server says about the path it took (sendfile, ktls,
        offloads) in --stats, when it says anything."""
        return {k: v for k, v in self.stats.items()
                if re.search(r"sendfile|ktls|offload|gso|tso|vnet|send_ref|csum", k)}


# -------------------------------------------------------------- measurement
def window_start(srv):
    return B.cpu_times(), B.proc_ticks(srv.pids()), time.time()


def window_end(srv, w0, nbytes, res):
    c0, p0, t0 = w0
    c1, p1, t1 = B.cpu_times(), B.proc_ticks(srv.pids()), time.time()
    sb, st = c1[1][0] - c0[1][0], c1[1][1] - c0[1][1]
    cb, ct = c1[0][0] - c0[0][0], c1[0][1] - c0[0][1]
    nb = max(nbytes, 1)
    res["bytes"] = nbytes
    res["server_ns_per_b"] = (p1 - p0) * 1e9 / HZ / nb
    res["core_ns_per_b"] = sb * 1e9 / HZ / nb
    res["client_ns_per_b"] = cb * 1e9 / HZ / nb
    res["server_core_pct"] = 100.0 * sb / st if st else 0.0
    res["client_pct"] = 100.0 * cb / ct if ct else 0.0
    res["wall_s"] = t1 - t0
    return res


def check_body(srv, url, want_sha, limit_s=60):
    """None if one GET of URL returns a body with sha256 WANT_SHA, else why."""
    script = (f"curl -sk --max-time {limit_s} -o - -w '%{{stderr}}%{{http_code}}' '{url}' "
              "| openssl dgst -sha256 -r")
    r = sh(["ip", "netns", "exec", srv.topo.cli, "taskset", "-c", "0", "sh", "-c", script],
           timeout=limit_s + 10)
    got = r.stdout.split()[0] if r.stdout.split() else ""
    code = r.stderr.strip()[-3:]
    if code != "200":
        return f"GET {url}: HTTP {code or 'none'}"
    if got != want_sha:
        return f"GET {url}: body sha256 {got[:12]} != {want_sha[:12]}"
    return None


def ab_run(srv, url, conc, ka, size, tls):
    dur = ARGS.duration
    base = ["ab", "-q", "-r", "-s", "10"] + (["-f", "ALL"] if tls else []) + (["-k"] if ka else [])
    ns = ["ip", "netns", "exec", srv.topo.cli, "taskset", "-c", "0"]
    if not ARGS.quick:
        # Warm-up: about 64 MiB or 2000 requests, whichever is fewer.
        n = max(conc, min(2000, (64 << 20) // size))
        sh(["timeout", "20"] + ns + base + ["-n", str(n), "-c", str(conc), url], timeout=25)
    # -t bounds the time, -n (after it) the count.
    cmd = base + ["-t", str(max(1, round(dur))), "-n", "2000000", "-c", str(conc), url]
    w0 = window_start(srv)
    r = subprocess.run(["timeout", str(int(dur + 30))] + ns + cmd, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, errors="replace")
    res = B.parse_ab(r.stdout)
    if res is None:
        res = {"completed": 0, "failed": 0, "non2xx": 0, "errors": 1, "req_s": 0.0,
               "duration": 0.0, "doc_len": None,
               "error_detail": f"ab exit {r.returncode}: "
               + " | ".join(r.stdout.strip().splitlines()[-2:])[:200]}
    res["raw"] = r.stdout
    res = window_end(srv, w0, res["completed"] * size, res)
    res["mib_s"] = res["completed"] * size / (1 << 20) / res["duration"] if res["duration"] else 0
    bad = []
    if res["failed"] or res["non2xx"] or res["errors"] or not res["completed"]:
        bad.append(f"failed {res['failed']}, non-2xx {res['non2xx']}, errors {res['errors']}, "
                   f"completed {res['completed']}" + (f" ({res['error_detail']})"
                                                      if res.get("error_detail") else ""))
    if res.get("doc_len") not in (None, size):
        bad.append(f"Document Length {res['doc_len']} != {size}")
    res["bad"] = "; ".join(bad)
    return res


def curl_download(srv, url, size):
    limit = 300
    w0 = window_start(srv)
    r = sh(["timeout", str(limit + 5), "ip", "netns", "exec", srv.topo.cli, "taskset", "-c", "0",
            "curl", "-s", "--max-time", str(limit), "-o", "/dev/null", "-w",
            "%{http_code} %{size_download} %{time_total}", url], timeout=limit + 10)
    parts = r.stdout.split()
    code, got, secs = parts[:3] if len(parts) >= 3 else ("000", "0", "0")
    got, secs = int(float(got)), float(secs)
    res = {"completed": 1 if got == size else 0, "duration": secs,
           "req_s": 1 / secs if secs else 0.0, "raw": r.stdout + r.stderr}
    res = window_end(srv, w0, got, res)
    res["mib_s"] = got / (1 << 20) / secs if secs else 0.0
    res["bad"] = "" if (code == "200" and got == size) else \
        f"HTTP {code}, {got} of {size} bytes in {secs:.1f} s (curl exit {r.returncode})"
    return res


# --------------------------------------------------------------------- rows
def row_plan():
    """(part, body, conn label, servers, tls) for every row, in run order."""
    plan = []
    if "rows" in ARGS.parts:
        for body in ARGS.bodies:
            plan.append(("rows", body, "keep-alive", ARGS.servers, False))
            # 16 MiB and up: one handshake per 16 MiB is under 0.1 % of the
            # work, so the close row would repeat keep-alive's.
            if body < 16 << 20:
                plan.append(("rows", body, "close", ARGS.servers, False))
    if "big" in ARGS.parts and ARGS.big_mib > 0:
        plan.append(("big", ARGS.big_mib << 20, "1 connection", ARGS.servers, False))
    if "tls" in ARGS.parts:
        tls_srv = [s for s in ARGS.servers if s in TLS_SERVERS]
        if tls_srv:
            plan.append(("tls", 1 << 20, "keep-alive", tls_srv, True))
    return plan


def run_all(work, shas, big_sha, out):
    runs = []
    start_failed = {}   # (server, mode, tls) -> first reason
    verified_big = set()
    logs = os.path.join(out, "logs")
    os.makedirs(logs, exist_ok=True)
    plan = row_plan()
    for mode in ARGS.offloads:
        for ri, (part, body, conn, servers, tls) in enumerate(plan, 1):
            for rep in range(1, ARGS.reps + 1):
                for s in servers:
                    tag = (f"[offloads {mode}] [{ri}/{len(plan)} {part} {human(body)} {conn}"
                           f"{' https' if tls else ''}] [{s}] run {rep}/{ARGS.reps}")
                    row = {"mode": mode, "part": part, "body": body, "conn": conn,
                           "server": s, "tls": int(tls), "rep": rep}
                    key = (s, mode, tls)
                    if key in start_failed:
                        row.update(status="FAILED", note="not retried: did not answer at "
                                   f"start earlier with offloads {mode} ({start_failed[key]})")
                        runs.append(row)
                        log(f"{tag} ... FAILED (not retried)")
                        continue
                    srv = Server(s, mode, work, tls)
                    features = ""
                    try:
                        try:
                            why = srv.start()
                        except (subprocess.SubprocessError, OSError) as e:
                            # A topology step that failed: this run, not the bench.
                            why = f"setup failed: {e}"
                        if why is None:
                            features = srv.topo.features
                            scheme = "https" if tls else "http"
                            url = f"{scheme}://{SRV_IP}/{body_name(body)}"
                            want = big_sha if part == "big" else shas[body]
                            if part != "big" or key not in verified_big:
                                why = check_body(srv, url, want,
                                                 limit_s=300 if part == "big" else 60)
                                if why is None and part == "big":
                                    verified_big.add(key)
                            if why is None:
                                res = (curl_download(srv, url, body) if part == "big" else
                                       ab_run(srv, url, ARGS.ka_c if conn == "keep-alive"
                                              else ARGS.close_c, conn == "keep-alive", body,
                                              tls))
                        else:
                            start_failed[key] = why
                            features = getattr(srv.topo, "features", "")
                    finally:
                        srv.stop()
                    row["features"] = features
                    row["path"] = " ".join(f"{k}={v}" for k, v in srv.path_notes().items())
                    row["path_stats"] = srv.path_notes()
                    if why is not None:
                        row.update(status="FAILED", note=why + srv.drop_note())
                        runs.append(row)
                        log(f"{tag} ... FAILED: {row['note']}")
                        continue
                    with open(os.path.join(logs, f"{mode}-{part}-{body}-{conn.replace(' ', '')}"
                                           f"-{s}-{rep}.txt"), "w") as f:
                        f.write(res["raw"])
                    row.update({k: res[k] for k in (
                        "req_s", "mib_s", "completed", "bytes", "server_ns_per_b",
                        "core_ns_per_b", "client_ns_per_b", "server_core_pct", "client_pct",
                        "wall_s")})
                    row["status"] = "FAILED" if res["bad"] else "ok"
                    row["note"] = res["bad"] + (srv.drop_note() if res["bad"] else "")
                    runs.append(row)
                    log(f"{tag} ... {res['req_s']:,.1f} req/s, {res['mib_s']:,.1f} MiB/s, "
                        f"server {res['server_ns_per_b']:.2f} ns/B, client "
                        f"{res['client_pct']:.0f}%" + (f"  FAILED: {row['note']}"
                                                       if res["bad"] else ""))
    return runs


# ------------------------------------------------------------------- output
CSV_FIELDS = ["mode", "part", "body", "conn", "tls", "server", "rep", "status", "req_s",
              "mib_s", "completed", "bytes", "server_ns_per_b", "core_ns_per_b",
              "client_ns_per_b", "server_core_pct", "client_pct", "wall_s", "features",
              "path", "note"]


def med(rows, k):
    v = [r[k] for r in rows if r.get(k) is not None]
    return statistics.median(v) if v else None


def f(x, nd=0):
    return "" if x is None else f"{x:,.{nd}f}"


def summarize(runs, meta):
    L = [f"# make bench-bytes — {meta['date']}", ""]
    L.append(f"Machine: {meta['machine']}.")
    L.append("")
    L.append(f"Command: `{meta['command']}`")
    L.append("")
    L.append(f"Server pinned to CPU 1 (taskset -c 1), client to CPU 0 (taskset -c 0). "
             f"{ARGS.reps} repetition(s) per row, servers alternating A/B/A/B at every "
             f"repetition, {ARGS.duration:g} s per ab run"
             + (", no warm-up (quick mode: smoke test, not figures)" if ARGS.quick else
                ", a bounded warm-up before each") + "; medians. Keep-alive: "
             f"`ab -k -c {ARGS.ka_c}`; close: `ab -c {ARGS.close_c}` (a connection per "
             "request); big: one `curl` download over one connection. "
             f"kTLS: {meta['ktls']}.")
    L.append("")
    L.append("Columns: **MiB/s** body bytes per second; **srv ns/B** utime+stime of the "
             "server's processes (/proc/PID/stat, all threads) per body byte over the "
             "measured window; **core ns/B** busy time of the server's CPU (/proc/stat: "
             "its softirqs too, and on a veth the client's receive work that runs there); "
             "**cli %** busy share of the client's CPU, **SAT** above "
             f"{SAT_PCT:.0f}% (the client, not the server, was the limit); **cli ns/B** the "
             "client CPU's busy time per byte; **x nginx**: req/s ratio and srv ns/B ratio "
             "against nginx in the same row (req/s above 1 and ns/B below 1 are skiff ahead). "
             "**FAILED**: a run of the row had failed requests, a wrong body or no server "
             "answer; the row is void and gives no figure.")
    L.append("")
    for mode in ARGS.offloads:
        mruns = [r for r in runs if r["mode"] == mode]
        if not mruns:
            continue
        feats = next((r.get("features") for r in mruns if r.get("features")), "")
        L.append(f"## Offloads {mode}" + (" (as the kernel sets them on a new veth)"
                                          if mode == "default" else " (make bench's setting)"))
        L.append("")
        if feats:
            L.append(f"Client's vc0: {feats}.")
            L.append("")
        L.append("| body | conn | server | req/s | MiB/s | srv ns/B | core ns/B | srv core % "
                 "| cli % | cli ns/B | ok runs | req/s x nginx | ns/B x nginx |")
        L.append("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
        seen = []
        for r in mruns:
            k = (r["part"], r["body"], r["conn"], r["tls"])
            if k not in seen:
                seen.append(k)
        notes = []
        for part, body, conn, tls in seen:
            rr = [r for r in mruns if (r["part"], r["body"], r["conn"], r["tls"]) ==
                  (part, body, conn, tls)]
            servers = [s for s in ARGS.servers if any(r["server"] == s for r in rr)]
            meds = {}
            for s in servers:
                rs = [r for r in rr if r["server"] == s]
                ok = [r for r in rs if r["status"] == "ok"]
                if len(ok) == len(rs) and ok:
                    meds[s] = (med(ok, "req_s"), med(ok, "server_ns_per_b"))
            label = human(body) + (" HTTPS" if tls else "")
            for s in servers:
                rs = [r for r in rr if r["server"] == s]
                ok = [r for r in rs if r["status"] == "ok"]
                cnt = f"{len(ok)}/{len(rs)}"
                if s not in meds:
                    first = next(r for r in rs if r["status"] != "ok")
                    L.append(f"| {label} | {conn} | {s} | **FAILED** | | | | | | | {cnt} | | |")
                    notes.append(f"{label} {conn}, {s}: {first['note']}")
                    continue
                cl = med(ok, "client_pct")
                rq, nb = meds[s]
                ratio_r = ratio_b = ""
                if s != "nginx" and "nginx" in meds:
                    ratio_r = f"{rq / meds['nginx'][0]:.2f}" if meds["nginx"][0] else ""
                    ratio_b = f"{nb / meds['nginx'][1]:.2f}" if meds["nginx"][1] else ""
                # One download per run: its rate is the MiB/s column.
                rq_cell = "—" if part == "big" else f(rq, 1 if rq < 100 else 0)
                L.append("| " + " | ".join([
                    label, conn, s, rq_cell, f(med(ok, "mib_s"), 1),
                    f(nb, 2), f(med(ok, "core_ns_per_b"), 2), f(med(ok, "server_core_pct")),
                    f(cl) + (" SAT" if cl is not None and cl > SAT_PCT else ""),
                    f(med(ok, "client_ns_per_b"), 2), cnt, ratio_r, ratio_b]) + " |")
        L.append("")
        for n in notes:
            L.append(f"- {n}")
        if notes:
            L.append("")
        # Which path each skiff took (sendfile, kTLS, offloads), from its
        # --stats counters, summed over this mode's runs (probes and
        # warm-ups included): the counters other work adds show up here.
        for tls in (0, 1):
            for s in ARGS.servers:
                tot, masks = {}, {}
                for r in mruns:
                    if r["server"] == s and r["tls"] == tls:
                        for k, v in (r.get("path_stats") or {}).items():
                            if k == "dev.offload":  # a mask of what was negotiated, not a count
                                masks.setdefault(k, set()).add(v)
                            else:
                                tot[k] = tot.get(k, 0) + v
                if tot or masks:
                    L.append(f"- {s}{' HTTPS' if tls else ''} --stats, summed over the runs: "
                             + ", ".join([f"{k} {'/'.join(hex(m) for m in sorted(v))}"
                                          for k, v in sorted(masks.items())]
                                         + [f"{k} {v:,}" for k, v in sorted(tot.items())]))
        L.append("")
    for n in meta["notes"]:
        L.append(f"- {n}")
    L.append("")
    return "\n".join(L) + "\n"


def write_out(out, runs, meta):
    with open(os.path.join(out, "runs.csv"), "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in runs:
            row = {k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()}
            w.writerow(row)
    text = summarize(runs, meta)
    with open(os.path.join(out, "results.md"), "w") as fh:
        fh.write(text)
    return text


# --------------------------------------------------------------------- main
def git_head():
    """The checked-out commit, read from .git itself (no git binary needed
    on a bench machine): a detached HEAD, a loose ref or packed-refs."""
    gd = os.path.join(REPO, ".git")
    try:
        head = open(os.path.join(gd, "HEAD")).read().strip()
        if not head.startswith("ref: "):
            return head[:7]
        ref = head[5:]
        p = os.path.join(gd, ref)
        if os.path.exists(p):
            return open(p).read().strip()[:7]
        for line in open(os.path.join(gd, "packed-refs")):
            if line.strip().endswith(" " + ref):
                return line.split()[0][:7]
    except OSError:
        pass
    return "?"


def tree_line(binary):
    """Which skiff was measured: the commit it was built from (the tree may
    hold uncommitted changes; the commit is what to rebuild)."""
    return f"skiff: {os.path.relpath(binary, REPO)} built from {git_head()}."


def ktls_state():
    try:
        with open("/proc/sys/net/ipv4/tcp_available_ulp") as fh:
            ulps = fh.read().split()
    except OSError:
        ulps = []
    if "tls" in ulps:
        return True, "available (tls ULP): nginx runs with ssl_conf_command Options KTLS"
    return False, ("kTLS unavailable on this kernel (tcp_available_ulp: "
                   f"{' '.join(ulps) or 'none'}): nginx's HTTPS row uses user-space TLS")


def make_nginx_confs(work, ktls):
    with open(os.path.join(HERE, "nginx.conf.in")) as fh:
        conf = fh.read()
    if not re.search(r"^\s*sendfile on;", conf, re.M):
        sys.exit("bench-bytes: bench/http/nginx.conf.in lost 'sendfile on;'")
    import resource
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    conf = (conf.replace("@WORK@", work).replace("@ROOT@", os.path.join(work, "www"))
            .replace("@CONNS@", "1024").replace("@NOFILE@", str(max(nofile, 2048))))
    tls = (f"listen {SRV_IP}:443 ssl backlog=4096;\n"
           f"        ssl_certificate {work}/tls.crt;\n"
           f"        ssl_certificate_key {work}/tls.key;\n"
           "        ssl_protocols TLSv1.2 TLSv1.3;\n"
           f"        ssl_ciphers {B.TLS12_CIPHERS};\n"
           f"        ssl_conf_command Ciphersuites {B.TLS13_SUITES};\n"
           "        ssl_ecdh_curve X25519:prime256v1;\n"
           "        ssl_session_cache shared:SSL:10m;\n"
           "        ssl_session_tickets on;"
           + ("\n        ssl_conf_command Options KTLS;" if ktls else ""))
    with open(os.path.join(work, "nginx.conf"), "w") as fh:
        fh.write(conf.replace("@TLS@", ""))
    with open(os.path.join(work, "nginx-tls.conf"), "w") as fh:
        fh.write(conf.replace("@TLS@", tls))


def main():
    global ARGS
    ARGS = parse_args()
    if os.geteuid() != 0:
        sys.exit("bench-bytes: needs root (network namespaces)")
    need = ["ip", "ab", "curl", "taskset", "timeout", "ethtool", "openssl"]
    if "nginx" in ARGS.servers:
        need.append("nginx")
    miss = [t for t in need if not shutil.which(t)]
    if miss:
        sys.exit(f"bench-bytes: missing {' '.join(miss)} (tools/deps.sh installs them)")
    if not os.access(ARGS.skiff, os.X_OK):
        sys.exit(f"bench-bytes: {ARGS.skiff} is not executable (make first)")
    if (os.cpu_count() or 1) < 2:
        sys.exit("bench-bytes: needs 2 CPUs (server on CPU 1, client on CPU 0)")

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    out = ARGS.out or os.path.join(REPO, "bench", "results", f"bytes-{stamp}")
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="skb-bytes.")
    os.chmod(work, 0o755)
    www = os.path.join(work, "www")
    os.makedirs(www)
    # A copy of the binary: a build in the same tree while the bench runs
    # (make relinks build/skiff in place) must not change it halfway.
    shutil.copy2(ARGS.skiff, os.path.join(work, "skiff"))
    ARGS.skiff_src, ARGS.skiff = ARGS.skiff, os.path.join(work, "skiff")

    def on_signal(_sig, _frm):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    ktls, ktls_text = ktls_state()
    meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
            "machine": B.machine_line(),
            "command": " ".join(["python3", "bench/http/bytes.py"] + sys.argv[1:]) + (
                " (BENCH_QUICK=1)" if env("BENCH_QUICK", "0") == "1" else ""),
            "ktls": ktls_text, "notes": [tree_line(ARGS.skiff_src)]}
    t0 = time.time()
    rc = 0
    runs = []
    try:
        B.cleanup_stale()
        log(f"bench-bytes: server pinned to CPU 1 (taskset -c 1), client to CPU 0; "
            f"servers {' '.join(ARGS.servers)}; offloads {' '.join(ARGS.offloads)}; "
            f"{ARGS.reps} rep(s) x {ARGS.duration:g} s{' (quick)' if ARGS.quick else ''}; "
            f"out {out}")
        log(f"bench-bytes: {ktls_text}")
        shas = {}
        for body in ARGS.bodies:
            shas[body] = write_random(os.path.join(www, body_name(body)), body)
        big_sha = None
        if "big" in ARGS.parts and ARGS.big_mib > 0:
            tb = time.time()
            big_sha = write_random(os.path.join(www, body_name(ARGS.big_mib << 20)),
                                   ARGS.big_mib << 20)
            log(f"bench-bytes: made the {ARGS.big_mib} MiB file in {time.time() - tb:.1f} s "
                f"(sha256 {big_sha[:16]}...)")
        if "tls" in ARGS.parts:
            r = sh(["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj",
                    "/CN=skiff-bench", "-addext", f"subjectAltName=IP:{SRV_IP}",
                    "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                    "-keyout", os.path.join(work, "tls.key"),
                    "-out", os.path.join(work, "tls.crt")])
            if r.returncode != 0:
                sys.exit(f"bench-bytes: openssl could not make the certificate: "
                         f"{r.stderr[-200:]}")
        make_nginx_confs(work, ktls)
        runs = run_all(work, shas, big_sha, out)
    except KeyboardInterrupt:
        log("bench-bytes: interrupted; writing what was measured")
        rc = 130
    finally:
        B.cleanup()
        meta["notes"].append(f"Elapsed {(time.time() - t0) / 60:.1f} min.")
        text = write_out(out, runs, meta)
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(text)
    log(f"bench-bytes: {out}/results.md, runs.csv (raw client output in {out}/logs/, "
        "not committed)")
    failed = sum(1 for r in runs if r["status"] != "ok")
    if failed:
        log(f"bench-bytes: {failed} run(s) FAILED (see results.md); the rows they belong "
            "to are void")
    return rc


if __name__ == "__main__":
    sys.exit(main())
