#!/usr/bin/env python3
"""proxy_bench.py SKIFF_BIN — `make bench-proxy` (issue 16 item 6): seed
002's web-accelerator set-up.  A caching reverse proxy ("front") stands
before an nginx upstream serving the 600-byte file; the loads hit the front.

Fronts (BENCH_PROXY_FRONTS, in this order for every load, one run each):
  nginx-cache   Debian's nginx with proxy_cache (the cache in tmpfs,
                keep-alive to the upstream, proxy_cache_lock)
  skiff-linux   skiff proxy --stack linux
  skiff-xdp     skiff proxy --stack skiff --dev xdp:vs0
  skiff-packet  skiff proxy --stack skiff --dev packet:vs0
  skiff-tap     skiff proxy --stack skiff --dev tap:sk0
The namespaces, devices, pinning, client commands, parsers and CPU counters
are make bench's own (bench/http/bench.py, imported): the front sits where
make bench's server sits (198.18.0.2:80); the upstream sits on the client's
side of the link, 198.18.0.1:8080, so that on skiff's stack the upstream
connections are skiff's own TCP on the same device, and every front reaches
the same upstream the same way.  The upstream runs pinned to
BENCH_PROXY_UPSTREAM_CPU (default: the client's CPU), so the server's core
carries the front alone.

Loads (BENCH_PROXY_LOADS): ab-k-c64, ab-c16, wrk-close-c1000, each as
  hit   the cache filled first (two probes, the second must say X-Cache: HIT);
        the upstream (its stub_status) must see at most 1% of the requests
  miss  every request carries "Cache-Control: no-cache", which a front must
        forward; the upstream must see at least 99% of the requests and at
        most 101% plus one per client connection (what was in flight)
A run with any failed, non-2xx or erroring request, a probe with the wrong
body, or an upstream count that contradicts hit/miss is VOID: it is kept in
runs.csv and printed as void, never as a number.

Columns: req/s; core µs/req (the server CPU's busy time per request, as make
bench), proc µs/req (utime+stime of the front's processes: skiff, or nginx's
master and worker); up/req (upstream requests per completed request); up
proc µs/req (the upstream nginx); client % (busy share of the client's CPU,
which also runs the upstream: SAT above 95%).

Environment:
  BENCH_QUICK=1              1 s runs (wrk: 2 s), for trying the script
  BENCH_DURATION=2           seconds per run (wrk: at least 2)
  BENCH_PROXY_FRONTS, BENCH_PROXY_LOADS (see above)
  BENCH_PROXY_REPS=1         rounds of every front and load, alternating; the
                             table gives each cell's median over its runs
  BENCH_SKIFF_OLD=PATH       another skiff binary (e.g. main's before a
                             change): a skiff front's name may then end in
                             "-old" (skiff-tap-old), run from it, so that old
                             and new alternate in one run
  BENCH_PROXY_SKIFF_ARGS     extra arguments of skiff proxy (default
                             "--cache 64M" when its --help lists --cache)
  BENCH_PROXY_UPSTREAM_CPU   (default BENCH_CLIENT_CPU)
  BENCH_OUT=bench/results/proxy-<YYYY-MM-DD-HHMMSS>
  and make bench's BENCH_SERVER_CPU, BENCH_CLIENT_CPU, BENCH_OFFLOADS,
  BENCH_N, BENCH_START_TIMEOUT.
Needs root.  Run it under `flock /tmp/skiff-nettest.lock`.
"""
import csv
import datetime
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench as B  # noqa: E402  (make bench's topology and measurements)

REPO = B.REPO
UP_IP, UP_PORT, UP_STATUS_PORT = B.CLI_IP, 8080, 8081
PATH = "/x600.txt"
BODY = B.body_bytes(600)
NOCACHE = "Cache-Control: no-cache"

ALL_FRONTS = ["nginx-cache", "skiff-linux", "skiff-xdp", "skiff-packet", "skiff-tap"]
ALL_LOADS = ["ab-k-c64", "ab-c16", "wrk-close-c1000"]
KINDS = ["hit", "miss"]

QUICK = B.env("BENCH_QUICK", "0") == "1"
DURATION = float(B.env("BENCH_DURATION", "1" if QUICK else "2"))
FRONTS = B.env("BENCH_PROXY_FRONTS", " ".join(ALL_FRONTS)).split()
REPS = int(B.env("BENCH_PROXY_REPS", "1"))
LOADS = B.env("BENCH_PROXY_LOADS", " ".join(ALL_LOADS)).split()
UPCPU = int(B.env("BENCH_PROXY_UPSTREAM_CPU", str(B.CCPU)))
HIT_MAX_UP = 0.01   # a hit run: the upstream sees at most 1% of the requests
MISS_MIN_UP = 0.99  # a miss run: at least 99%
# ... and at most 101% plus one request per client connection (what was in
# flight when the client stopped counting): more means a front that asks
# the upstream more than once for one request.
MISS_MAX_UP = 1.01

for f in FRONTS:
    base = f[:-4] if f.endswith("-old") and f.startswith("skiff-") else f
    if base not in ALL_FRONTS:
        sys.exit(f"bench-proxy: unknown front '{f}' (known: {' '.join(ALL_FRONTS)}, "
                 "a skiff one with -old)")
    if base != f and not B.SKIFF_OLD:
        sys.exit(f"bench-proxy: {f} needs BENCH_SKIFF_OLD")
for ld in LOADS:
    if ld not in ALL_LOADS:
        sys.exit(f"bench-proxy: unknown load '{ld}' (known: {' '.join(ALL_LOADS)})")

# bench.py's run_load warms up with its own client; ours warms up (and, for
# hits, fills the cache) before the upstream's counters are read, so the
# counters cover the measured load alone.
B.WARMUP = False
B.DURATION = DURATION

# Seed 002's settings, as bench/http/nginx.conf.in: one worker, epoll,
# multi_accept, keep-alive limits raised, no access log.
NGINX_COMMON = """user root;
worker_processes 1;
daemon off;
master_process on;
pid @DIR@/nginx.pid;
error_log @DIR@/error.log warn;
worker_rlimit_nofile @NOFILE@;
events {
    worker_connections @CONNS@;
    use epoll;
    multi_accept on;
    accept_mutex off;
}
"""
NGINX_TEMPS = """    client_body_temp_path @DIR@/body;
    proxy_temp_path @DIR@/proxy;
    fastcgi_temp_path @DIR@/fastcgi;
    uwsgi_temp_path @DIR@/uwsgi;
    scgi_temp_path @DIR@/scgi;
    access_log off;
    server_tokens off;
    keepalive_timeout 60s;
    keepalive_requests 100000000;
    tcp_nodelay on;
"""

# The upstream: make bench's nginx serving the 600-byte file, cacheable for
# an hour; stub_status on loopback counts what reaches it.
UPSTREAM_CONF = NGINX_COMMON + """http {
""" + NGINX_TEMPS + """    sendfile on;
    tcp_nopush on;
    open_file_cache max=1000 inactive=3600s;
    open_file_cache_valid 3600s;
    open_file_cache_min_uses 1;
    open_file_cache_errors off;
    etag off;
    max_ranges 0;
    types { text/plain txt; }
    default_type text/plain;
    server {
        listen @UPIP@:@UPPORT@ backlog=4096;
        root @ROOT@;
        location / {
            add_header Cache-Control "max-age=3600";
        }
    }
    server {
        listen 127.0.0.1:@UPSTATUS@;
        location = /status { stub_status; }
    }
}
"""

# The nginx front: proxy_cache in tmpfs, a keep-alive pool of 32 to the
# upstream (skiff proxy's --pool default), one fill per key at a time
# (proxy_cache_lock, as skiff's coalescing), a no-cache request sent
# upstream (proxy_cache_bypass; nginx otherwise ignores a request's
# Cache-Control), the forwarding headers skiff proxy adds, X-Cache.
FRONT_CONF = NGINX_COMMON + """http {
""" + NGINX_TEMPS + """    proxy_cache_path @CACHE@ levels=1:2 keys_zone=skb:16m max_size=256m
                     inactive=1h use_temp_path=off;
    map $http_cache_control $skb_nocache {
        default 0;
        ~*no-cache 1;
    }
    upstream origin {
        server @UPIP@:@UPPORT@;
        keepalive 32;
    }
    server {
        listen @SRVIP@:80 backlog=4096;
        location / {
            proxy_pass http://origin;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_cache skb;
            proxy_cache_lock on;
            proxy_cache_bypass $skb_nocache;
            add_header X-Cache $upstream_cache_status always;
        }
    }
}
"""


def fill(text, **kw):
    for k, v in kw.items():
        text = text.replace(f"@{k}@", str(v))
    left = set(re.findall(r"@([A-Z]+)@", text)) - {"DIR"}  # DIR: nginx_dir fills it
    assert not left, f"unfilled {left}"
    return text


def nginx_dir(work, name, text):
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(text.replace("@DIR@", d))
    return d


class Front(B.Server):
    """One front and its upstream, in one fresh topology (bench.Topo)."""

    def __init__(self, name, skiff, work, skiff_args):
        # make bench's Server: self.base is the name without "-old", whose
        # binary is then BENCH_SKIFF_OLD's
        super().__init__(name, skiff, work)
        self.skiff_args = skiff_args
        self.up = None
        self.up_log = os.path.join(work, f"{name}-upstream.log")

    @property
    def topo_kind(self):
        return "tap" if self.base == "skiff-tap" else "veth"

    @property
    def linux_ip(self):
        return self.base in ("nginx-cache", "skiff-linux")

    def command(self, root):
        pin = ["taskset", "-c", str(B.SCPU)]
        if self.base == "nginx-cache":
            d = os.path.join(self.work, "front")
            return pin + ["nginx", "-p", d + "/", "-c", os.path.join(d, "nginx.conf")]
        base = pin + [self.skiff, "proxy", "--upstream", f"{UP_IP}:{UP_PORT}", "--port", "80",
                      "--stats", "--max-conns", str(B.MAX_CONNS)] + self.skiff_args
        if self.base == "skiff-linux":
            return base + ["--stack", "linux", "--ip", B.SRV_IP]
        dev = {"skiff-xdp": "xdp:vs0", "skiff-packet": "packet:vs0",
               "skiff-tap": "tap:sk0"}[self.base]
        return base + ["--stack", "skiff", "--dev", dev, "--ip", f"{B.SRV_IP}/24"]

    def prepare(self):
        """The upstream nginx, in the client's namespace, before the front."""
        d = os.path.join(self.work, "upstream")
        out = open(self.up_log, "w")
        self.up = subprocess.Popen(
            ["ip", "netns", "exec", self.topo.cli, "taskset", "-c", str(UPCPU), "nginx",
             "-p", d + "/", "-c", os.path.join(d, "nginx.conf")],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        out.close()
        B.MY_PROCS.append(self.up)
        deadline = time.time() + B.START_TIMEOUT
        while time.time() < deadline:
            if self.up.poll() is not None:
                return f"the upstream exited {self.up.returncode}: {B.tail(self.up_log)}"
            if self.up_requests() is not None:
                return None
            time.sleep(0.1)
        return f"the upstream gave no answer within {B.START_TIMEOUT:.0f} s"

    def up_requests(self):
        """The upstream's request count (stub_status), or None."""
        r = B.sh(["timeout", "3", "ip", "netns", "exec", self.topo.cli, "curl", "-s",
                  "--max-time", "2", f"http://127.0.0.1:{UP_STATUS_PORT}/status"], timeout=5)
        m = re.search(r"^\s*\d+\s+\d+\s+(\d+)\s*$", r.stdout, re.M)
        return int(m.group(1)) if m else None

    def up_pids(self):
        if self.up is None:
            return []
        tree, todo = [], [self.up.pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += B.children(p)
        return tree

    def stop(self):
        if self.up is not None:
            if self.up.poll() is None:
                try:
                    os.kill(self.up.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    self.up.wait(5)
                except subprocess.TimeoutExpired:
                    self.up.kill()
                    self.up.wait()
            B.MY_PROCS.remove(self.up)
            self.up = None
        super().stop()


def probe(ns, nocache):
    """(status line, header dict (lower-case names), header bytes, body) of
    one GET of PATH through the front, or None."""
    cmd = ["timeout", "5", "ip", "netns", "exec", ns, "curl", "-s", "--max-time", "3",
           "-D", "/dev/stderr"] + (["-H", NOCACHE] if nocache else []) + [
        f"http://{B.SRV_IP}{PATH}"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0 or not r.stderr.startswith(b"HTTP/"):
        return None
    lines = r.stderr.decode("latin-1").split("\r\n")
    hdrs = {}
    for ln in lines[1:]:
        if ":" in ln:
            k, v = ln.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
    return lines[0], hdrs, len(r.stderr), r.stdout


def warm(front, load, nocache):
    """Fill the cache (hit) and warm both ends, outside the measurement.
    None, or why the run is void."""
    ns = front.topo.cli
    first = probe(ns, nocache)
    if first is None or first[3] != BODY:
        return f"wrong or no body through the front ({'none' if first is None else len(first[3])} bytes)"
    wcmd = ["ab", "-q", "-r", "-s", "5", "-n", "2000", "-c", "8"]
    if load.startswith("ab-k-"):
        wcmd.insert(1, "-k")
    if nocache:
        wcmd += ["-H", NOCACHE]
    B.sh(["timeout", "20", "ip", "netns", "exec", ns, "taskset", "-c", str(B.CCPU)] + wcmd
         + [f"http://{B.SRV_IP}{PATH}"], timeout=25)
    p = probe(ns, nocache)
    if p is None or p[3] != BODY:
        return "wrong or no body after the warm-up"
    xc = p[1].get("x-cache", "")
    if not nocache and not xc.upper().startswith("HIT"):
        return f"not served from the cache (X-Cache: {xc or 'absent'})"
    if nocache and xc.upper().startswith("HIT"):
        return "a no-cache request was answered from the cache"
    front.probe_bytes = (p[2], len(p[3]))
    return None


CSV_FIELDS = ["load", "cache", "front", "status", "req_s", "completed", "failed", "non2xx",
              "errors", "server_cpu_us_per_req", "server_proc_us_per_req",
              "server_core_busy_pct", "client_busy_pct", "upstream_requests",
              "upstream_per_req", "upstream_proc_us_per_req", "duration_s",
              "resp_header_bytes", "resp_body_bytes", "front_stats", "note"]


def one_run(front, load, kind):
    """Start, warm, measure, stop.  A row for runs.csv."""
    row = {"load": load, "cache": kind, "front": front.name}
    nocache = kind == "miss"
    B.HEADERS[:] = [NOCACHE] if nocache else []
    try:
        why = front.start(None)
        if why is not None:
            return dict(row, status="unavailable", note=why)
        why = warm(front, load, nocache)
        if why is not None:
            return dict(row, status="void", note=why)
        u0, t0 = front.up_requests(), B.proc_ticks(front.up_pids())
        res = B.run_load(front, load, f"http://{B.SRV_IP}{PATH}")
        u1, t1 = front.up_requests(), B.proc_ticks(front.up_pids())
    finally:
        front.stop()
        B.HEADERS[:] = []
    n = max(res["completed"], 1)
    upn = (u1 - u0 - 1) if u0 is not None and u1 is not None else None  # less our 2nd read
    row.update(req_s=res["req_s"], completed=res["completed"], failed=res["failed"],
               non2xx=res["non2xx"], errors=res["errors"],
               server_cpu_us_per_req=res["server_cpu_us_per_req"],
               server_proc_us_per_req=res["server_proc_us_per_req"],
               server_core_busy_pct=res["server_core_busy_pct"],
               client_busy_pct=res["client_busy_pct"], duration_s=res["duration"],
               upstream_requests=upn, upstream_per_req=(upn / n if upn is not None else None),
               upstream_proc_us_per_req=(t1 - t0) * 1e6 / B.HZ / n,
               resp_header_bytes=front.probe_bytes[0], resp_body_bytes=front.probe_bytes[1],
               front_stats=" ".join(f"{k}={v}" for k, v in sorted(front.stats.items())
                                    if "cache" in k or k.startswith("proxy.")))
    notes = []
    if res["failed"] or res["non2xx"] or res["errors"] or not res["completed"]:
        notes.append(f"failed {res['failed']} non2xx {res['non2xx']} errors {res['errors']}"
                     + (f" ({res['error_detail']})" if res.get("error_detail") else ""))
    if upn is None:
        notes.append("the upstream's count could not be read")
    elif kind == "hit" and upn > HIT_MAX_UP * n:
        notes.append(f"the upstream saw {upn} of {res['completed']} requests: not cache hits")
    elif kind == "miss" and upn < MISS_MIN_UP * n:
        notes.append(f"the upstream saw only {upn} of {res['completed']} no-cache requests")
    elif kind == "miss" and upn > MISS_MAX_UP * n + int(load.rsplit("-c", 1)[1]):
        notes.append(f"the upstream saw {upn} for {res['completed']} no-cache requests:"
                     " asked more than once")
    row.update(status="void" if notes else "ok", note="; ".join(notes))
    with open(os.path.join(front.work, "last-client.txt"), "w") as f:
        f.write(res["raw"])
    return row


def fmt(x, nd=0):
    return "" if x is None else f"{x:,.{nd}f}"


def write_results(out, runs, meta):
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in runs:
            w.writerow({k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()})
    L = [f"# make bench-proxy — {meta['date']}", "",
         f"Machine: {meta['machine']}. Front pinned to CPU {B.SCPU}, client to CPU {B.CCPU}, "
         f"the upstream nginx to CPU {UPCPU}. "
         + ("One run per point" if REPS == 1 else
            f"{REPS} rounds, each cell the median of its rounds (runs.csv has each run)")
         + f", the fronts alternating within every load, {DURATION:g} s per run (wrk at least 2 s). 600-byte body. "
         f"Offloads on the veth ends: {B.OFFLOADS} for the kernel fronts, off for skiff.", "",
         f"Command: `{meta['command']}`", "",
         "Columns: **req/s**; **core µs/req**: busy time of the front's CPU per request "
         "(/proc/stat); **proc µs/req**: utime+stime of the front's processes (nginx: master "
         "and worker) per request; **up/req**: requests the upstream saw per request "
         "answered; **up µs/req**: the upstream nginx's CPU per request; **client %**: the "
         f"client CPU's busy share (it also runs the upstream), **SAT** above {B.SAT_PCT:.0f}%. "
         "**void**: a failed request, a wrong body, or an upstream count that contradicts "
         "hit or miss (runs.csv says which).", ""]
    fronts = [f for f in FRONTS]
    skiffs = [f for f in fronts if f.startswith("skiff-")]
    hdr = ["load", "cache"] + [f"{f} req/s" for f in fronts]
    if "nginx-cache" in fronts:
        hdr += [f"{s}/nginx" for s in skiffs]
    L += ["| " + " | ".join(hdr) + " |", "|---|---|" + "--:|" * (len(hdr) - 2)]

    def get(f, load, kind):
        """The cell's run: the one, or the median by req/s of the ok ones
        (BENCH_PROXY_REPS > 1; a void run is kept in runs.csv and the table
        then says void if no run was ok)."""
        rs = [r for r in runs if r["front"] == f and r["load"] == load and r["cache"] == kind]
        ok = sorted((r for r in rs if r["status"] == "ok"), key=lambda r: r["req_s"])
        if ok:
            return ok[len(ok) // 2]
        return rs[-1] if rs else None
    for load in LOADS:
        for kind in KINDS:
            cells, rps = [load, kind], {}
            for f in fronts:
                r = get(f, load, kind)
                if r is None:
                    cells.append("—")
                elif r["status"] == "ok":
                    rps[f] = r["req_s"]
                    cells.append(fmt(r["req_s"]) + (" SAT" if r["client_busy_pct"] > B.SAT_PCT
                                                    else ""))
                else:
                    cells.append(r["status"])
            if "nginx-cache" in fronts:
                for s in skiffs:
                    cells.append(f"{rps[s] / rps['nginx-cache']:.2f}"
                                 if s in rps and rps.get("nginx-cache") else "—")
            L.append("| " + " | ".join(cells) + " |")
    L += ["", "| load | cache | front | req/s | core µs/req | proc µs/req | up/req | "
          "up µs/req | client % | response bytes | status |",
          "|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|"]
    for load in LOADS:
        for kind in KINDS:
            for f in fronts:
                r = get(f, load, kind)
                if r is None:
                    continue
                if r["status"] == "unavailable":
                    continue  # listed once below the table
                if r.get("req_s") is None:
                    L.append(f"| {load} | {kind} | {f} | | | | | | | | void: {r['note']} |")
                    continue
                cl = r["client_busy_pct"]
                L.append("| " + " | ".join([
                    load, kind, f,
                    fmt(r["req_s"]) if r["status"] == "ok" else f"void ({fmt(r['req_s'])})",
                    fmt(r["server_cpu_us_per_req"], 1), fmt(r["server_proc_us_per_req"], 1),
                    fmt(r["upstream_per_req"], 3), fmt(r["upstream_proc_us_per_req"], 1),
                    fmt(cl) + (" SAT" if cl > B.SAT_PCT else ""),
                    f"{r['resp_header_bytes']}+{r['resp_body_bytes']}",
                    "ok" if r["status"] == "ok" else f"void: {r['note']}"]) + " |")
    L.append("")
    seen = set()
    for r in runs:
        if r["status"] == "unavailable" and r["front"] not in seen:
            seen.add(r["front"])
            L.append(f"- {r['front']}: unavailable ({r['note']})")
    for note in meta["notes"]:
        L.append(f"- {note}")
    L += ["", "Every run is in runs.csv."]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: proxy_bench.py path/to/skiff")
    skiff = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        sys.exit("bench-proxy: needs root (network namespaces)")
    miss = [t for t in ("ip", "ab", "wrk", "curl", "nginx", "taskset", "timeout", "ethtool")
            if not shutil.which(t)]
    if miss:
        sys.exit(f"bench-proxy: missing {' '.join(miss)} (tools/deps.sh installs them)")
    ncpu = os.cpu_count() or 1
    if max(B.SCPU, B.CCPU, UPCPU) >= ncpu or B.SCPU == B.CCPU:
        sys.exit(f"bench-proxy: server CPU {B.SCPU} and client CPU {B.CCPU} must differ and "
                 f"exist, and the upstream's {UPCPU} exist ({ncpu} CPUs)")
    notes = []
    # skiff proxy: there, and with a cache?  Without `proxy` the skiff fronts
    # are unavailable; without --cache their hit rows come out void.
    helptext = ""
    if os.access(skiff, os.X_OK):
        r = B.sh([skiff, "proxy", "--help"])
        helptext = r.stdout + r.stderr if r.returncode == 0 else ""
    skiff_ok = bool(helptext)
    if "BENCH_PROXY_SKIFF_ARGS" in os.environ:
        skiff_args = os.environ["BENCH_PROXY_SKIFF_ARGS"].split()
    else:
        skiff_args = ["--cache", "64M"] if "--cache" in helptext else []
        if skiff_ok and not skiff_args:
            notes.append(f"{skiff} proxy has no --cache: its hit rows are void")
    if skiff_ok:
        notes.append(f"skiff proxy: {skiff} {' '.join(skiff_args)}".rstrip())

    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (resource.getrlimit(resource.RLIMIT_NOFILE)[1],) * 2)
    except (ValueError, OSError):
        pass
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    B.MAX_CONNS = conns = max(1024, min(nofile - 64, 20000))

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    out = B.env("BENCH_OUT", os.path.join(REPO, "bench", "results", f"proxy-{stamp}"))
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="skb-proxy.")
    os.chmod(work, 0o755)
    cache = tempfile.mkdtemp(prefix="skb-proxy-cache.", dir="/dev/shm")  # tmpfs
    root = os.path.join(work, "www")
    os.makedirs(root)
    with open(os.path.join(root, PATH[1:]), "wb") as f:
        f.write(BODY)
    kw = dict(NOFILE=nofile, CONNS=conns, UPIP=UP_IP, UPPORT=UP_PORT, UPSTATUS=UP_STATUS_PORT,
              ROOT=root, SRVIP=B.SRV_IP, CACHE=cache)
    nginx_dir(work, "upstream", fill(UPSTREAM_CONF, **kw))
    nginx_dir(work, "front", fill(FRONT_CONF, **kw))

    def on_signal(sig, _frm):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "machine": B.machine_line(),
            "command": " ".join([f"{k}={os.environ[k]}" for k in sorted(os.environ)
                                 if k.startswith("BENCH_")]
                                + ([] if skiff == os.path.join(REPO, "build", "skiff")
                                   else [f"BENCH_PROXY_SKIFF={skiff}"]) + ["make bench-proxy"]),
            "notes": notes}
    runs, t_start, rc = [], time.time(), 0
    unavailable = {}
    try:
        B.cleanup_stale()
        B.log(f"bench-proxy: fronts {' '.join(FRONTS)}; loads {' '.join(LOADS)} x hit/miss; "
              f"{DURATION:g} s a run; out {out}")
        for note in notes:
            B.log(f"bench-proxy: {note}")
        for li, load in [(li, ld) for _ in range(REPS) for li, ld in enumerate(LOADS, 1)]:
            for kind in KINDS:
                for fname in FRONTS:
                    tag = f"[{load} {kind}] [front {fname}]"
                    if fname.startswith("skiff-") and not skiff_ok and fname not in unavailable:
                        unavailable[fname] = f"{skiff} has no `proxy` command"
                        B.log(f"{tag} ... unavailable: {unavailable[fname]}")
                    if fname in unavailable:
                        runs.append({"load": load, "cache": kind, "front": fname,
                                     "status": "unavailable", "note": unavailable[fname]})
                        continue
                    # A fresh cache for nginx at every run, as skiff's starts empty.
                    for e in os.listdir(cache):
                        shutil.rmtree(os.path.join(cache, e), ignore_errors=True)
                    row = one_run(Front(fname, skiff, work, skiff_args), load, kind)
                    runs.append(row)
                    if row["status"] == "unavailable":
                        unavailable[fname] = row["note"]
                        B.log(f"{tag} ... unavailable: {row['note']}")
                    elif row.get("req_s") is None:
                        B.log(f"{tag} ... VOID: {row['note']}")
                    else:
                        B.log(f"{tag} ... {row['req_s']:,.0f} req/s, core "
                              f"{row['server_cpu_us_per_req']:.1f} µs/req, proc "
                              f"{row['server_proc_us_per_req']:.1f} µs/req, up/req "
                              f"{fmt(row['upstream_per_req'], 3)}, client "
                              f"{row['client_busy_pct']:.0f}%"
                              + (f"  VOID: {row['note']}" if row["status"] != "ok" else ""))
    except KeyboardInterrupt:
        B.log("bench-proxy: interrupted; writing what was measured")
        rc = 130
    finally:
        B.cleanup()
        meta["notes"].append(f"Elapsed {(time.time() - t_start) / 60:.1f} min.")
        write_results(out, runs, meta)
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    B.log(f"bench-proxy: done: {out}/results.md, runs.csv")
    return rc


if __name__ == "__main__":
    sys.exit(main())
