#!/usr/bin/env python3
"""bench.py SKIFF_BIN — `make bench`: skiff against nginx and the same
application on Linux sockets, alternating, medians, failures kept apart.

Servers (BENCH_SERVERS, in this order at every repetition):
  nginx         Debian's nginx, bench/http/nginx.conf.in (seed 002's settings)
  linux-app     skiff serve --stack linux
  skiff-xdp     skiff serve --stack skiff --dev xdp:vs0
  skiff-packet  skiff serve --stack skiff --dev packet:vs0
  skiff-tap     skiff serve --stack skiff --dev tap:sk0
A server that does not come up (today: --stack skiff exits 2, "not
available yet") is reported "unavailable" for that pass and not tried again
in it; the bench goes on.

Topologies, created afresh for every run, always deleted (namespaces
"skb-<pid>-*", 198.18.0.0/15 only, nothing in the root namespace):
  veth:     skb-<pid>-cli vc0 198.18.0.1/24 <-> skb-<pid>-srv vs0; nginx and
            linux-app hold 198.18.0.2/24 on vs0; skiff-xdp/-packet own vs0
            (no Linux address) as 198.18.0.2.
  tap:      one namespace skb-<pid>-tap; the kernel end sk0 is 198.18.0.1/24
            and runs the client; skiff is 198.18.0.2.
Offloads are off on both veth ends for every server (BENCH_OFFLOADS=off,
the default), so every row has the same client; BENCH_OFFLOADS=on keeps the
kernel's defaults for the kernel servers (skiff rows always need them off).

Every run: set up the topology, start the server pinned to
BENCH_SERVER_CPU, wait until curl gets the expected body, a short warm-up,
then the load pinned to BENCH_CLIENT_CPU, bounded by count and time
(`timeout`).  /proc/stat (per CPU) and /proc/PID/stat (every process in
the server's namespace) are read just before and after the load.

Environment (defaults finish in about 10-15 minutes on 2 cores):
  BENCH_REPS=3  BENCH_DURATION=2 (s per run)  BENCH_N=2000000 (cap per ab run)
  BENCH_SERVERS="nginx linux-app skiff-xdp skiff-packet skiff-tap skiff-packet-log"
  BENCH_LOADS="ab-k-c1 ab-k-c8 ab-k-c64 ab-c1 ab-c16 ab-c64 wrk-close-c1000 wrk-close-c10000
               slow-c1"  (slow-c1: bench/http/slow_client.py, one client that
               thinks 1 ms between new-connection requests)
  BENCH_PASSES="41 600 6000 102400 1048576" (body sizes)  BENCH_SERVER_CPU=1
  BENCH_BIG_LOADS="ab-k-c8 ab-c16" (the loads of bodies over 600 B)  BENCH_CLIENT_CPU=0
  BENCH_OUT=bench/results/<YYYY-MM-DD-HHMMSS>  BENCH_WARMUP=1 (0: none)
  BENCH_OFFLOADS=off
  BENCH_TLS=0   1 (make bench-tls): every load over HTTPS on port 443, the
            same certificate (ECDSA P-256, or RSA 2048 with BENCH_TLS_KEY=rsa,
            made at start by openssl) and the same settings for nginx and
            skiff (TLS 1.2-1.3, AES-GCM/ChaCha20, X25519/P-256, tickets and
            a session cache); ab without -k is then one full handshake per
            request, and the load resume-c1 (openssl s_time -reuse) counts
            resumed handshakes; a run where s_time saw a connection not
            resumed, or skiff counted fewer (tls.resumed), or ab got another
            protocol than asked, is failed.  The results gain a handshake
            table: per handshake, the server core's CPU and the server's own
            share of it (its processes and the core's ksoftirqd, without
            other programs scheduled there), against nginx's, and
            issue 35's goal (full: at most 2/3 of nginx's at no fewer per
            second; resumed: at most 1/2)
  BENCH_TLS_VERSION=1.3  the clients offer TLS 1.3 only (ab -f TLS1.3, s_time
            -tls1_3); "any": whatever both agree on (ab -f ALL)
  BENCH_RPS=0   1: steer each veth end's receive work (RPS) to the CPU of the
            side that owns it: vc0's to the client CPU, vs0's to the server
            CPU.  By default a veth runs the receiver's stack on the sender's
            CPU, so the server core pays for the client kernel's receive of
            every frame it sends (and nginx, whose handshake the kernel does
            in the client's softirq, pays less of it); with BENCH_RPS=1 each
            side pays its own receive, as across a wire.
  BENCH_SKIFF_ARGS="--spin-us 0"  more options for every skiff serve
  BENCH_SKIFF_OLD=PATH  another skiff binary (e.g. main's, before a change):
            every server name may then carry "-old" (skiff-packet-old) to
            run from it, alternating with the new one in the same run.
A skiff server's name may carry the TLS engine after its base
(linux-app-gnutls, skiff-packet-openssl, skiff-packet-wolfssl-old): skiff
serve --tls-engine ENGINE (with BENCH_TLS=1; without the suffix, the
binary's default engine).
Any server's name may end in "-w2" (nginx-w2, linux-app-w2, skiff-packet-w2;
not skiff-xdp, whose veth has one queue here): two workers (nginx
worker_processes 2, skiff serve --workers 2), pinned to both CPUs, so they
share the client's; compare its proc µs/req (all the server's threads and
processes), not core µs/req (one CPU's), with the 1-worker row (docs/smp.md).
A skiff server's name may end in "-log" (linux-app-log, skiff-packet-log,
skiff-packet-old-log): that server runs with --access-log to a file in the
run's folder (combined format), alternating with the one without; the
access log is off everywhere else, as in seed 002's nginx.  A -log server
runs only the loads in BENCH_LOG_LOADS (default ab-k-c64) and the bodies in
BENCH_LOG_PASSES (default 41): the default run's skiff-packet-log row is
the access log's cost, beside skiff-packet's.
A skiff server's name may carry "-sites" after its base (and "-old"):
skiff-packet-sites, skiff-tap-sites, linux-app-sites, skiff-packet-sites-log:
the same skiff serve, but its site comes from a configuration file the bench
writes into its work folder (docs/config.md) and is served by the sites
runtime (src/host/sites_host.c: the engine of src/http/app.c, the router of
src/router/sites.c, the files handler of src/http/files_handler.c), where the
plain row's comes from its flags (src/conf/sites_flags.c).  The file holds what the
plain row's flags say: max_conns, workers, access_log, and one `default;`
site listening where the plain row does (SRV_IP:80, *:80 over IPv6, plus
SRV_IP:443 tls with BENCH_TLS) with `route / { files ROOT; }`; for the
41-byte hello, which the plain row serves without --root, the route is
`return 200 "<the hello>"` instead.  The stack and device flags and
BENCH_SKIFF_ARGS stay on the command line.  The table gains SERVER-sites/plain
ratios (req/s and core µs/req) beside it: issue 32's "no figure worse beyond
noise" for moving skiff serve's flags onto the sites runtime.
Any server's name may end in "-v6" last (skiff-packet-v6, nginx-v6,
linux-app-log-v6): the same server over IPv6 (issue 18): the client's end
gets 2001:2::1/64, the server 2001:2::2/64 (Linux's vs0 for nginx, which
also listens on [::]:80, and linux-app, which then binds no --ip and
listens on both families; skiff's --ip6), no DAD on Linux's side, and the
loads go to http://[2001:2::2]/ — only 2001:2::/48, only in these
namespaces.  A v6 server runs only BENCH_V6_LOADS (default "ab-k-c8 ab-c16",
keep-alive and a connection per request) on bodies BENCH_V6_PASSES
(default "41"), and the table gains SERVER-v6/v4 ratios beside it.  The
default servers include linux-app-v6 and skiff-packet-v6.
"""
import csv
import datetime
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
REPO = os.path.dirname(os.path.dirname(HERE))
HELLO = b"Hello, world! This is skiff serving you.\n"
assert len(HELLO) == 41
SRV_IP = "198.18.0.2"
CLI_IP = "198.18.0.1"
SRV_IP6 = "2001:2::2"
CLI_IP6 = "2001:2::1"
PREFIX = "skb"
HZ = os.sysconf("SC_CLK_TCK")

ALL_SERVERS = ["nginx", "linux-app", "skiff-xdp", "skiff-packet", "skiff-tap"]
ALL_LOADS = ["ab-k-c1", "ab-k-c8", "ab-k-c64", "ab-c1", "ab-c16", "ab-c64",
             "wrk-close-c1000", "wrk-close-c10000", "slow-c1", "resume-c1"]


def env(name, default):
    v = os.environ.get(name, "")
    return v if v.strip() else default


REPS = int(env("BENCH_REPS", "3"))
DURATION = float(env("BENCH_DURATION", "2"))
NMAX = int(env("BENCH_N", "2000000"))
# The default run ends with skiff-packet-log: the access log's cost, on the
# one load and body that show it (LOG_LOADS, LOG_PASSES), beside skiff-packet;
# and has two IPv6 rows (V6_LOADS, V6_PASSES), but not over HTTPS (BENCH_TLS).
SERVERS = env("BENCH_SERVERS", " ".join(ALL_SERVERS + ["skiff-packet-log"] + (
    [] if os.environ.get("BENCH_TLS", "0") == "1" else ["linux-app-v6", "skiff-packet-v6"]))).split()
SKIFF_OLD = env("BENCH_SKIFF_OLD", "")
# BENCH_SKIFF_ARGS: more options for every skiff serve (e.g. "--spin-us 0").
SKIFF_ARGS = env("BENCH_SKIFF_ARGS", "").split()


def workers_of(name):
    """skiff-packet-w2, nginx-w2: two workers (skiff serve --workers 2, nginx
    worker_processes 2), the server pinned to both CPUs (docs/smp.md)."""
    return 2 if name.endswith("-w2") else 1


def plain_name(name):
    return name[:-3] if name.endswith("-w2") else name


def v6_server(name):
    """skiff-packet-v6: skiff-packet over IPv6."""
    return plain_name(name).endswith("-v6")


def logged_server(name):
    """skiff-packet-log: skiff-packet with --access-log."""
    name = plain_name(name)
    if v6_server(name):
        name = name[:-3]
    return name.endswith("-log") and name[:-4].startswith(("skiff-", "linux-app"))


def _without_log(name):
    """NAME without its -w2, -v6 and -log suffixes (they come last)."""
    name = plain_name(name)
    if v6_server(name):
        name = name[:-3]
    if logged_server(name):
        name = name[:-4]
    return name


def sites_server(name):
    """skiff-packet-sites: skiff-packet from a configuration file (skiff
    serve --config, the sites runtime) instead of --root."""
    name = _without_log(name)
    return name.endswith("-sites") and name[:-6].startswith(("skiff-", "linux-app"))


def old_server(name):
    """skiff-packet-old: run from BENCH_SKIFF_OLD's binary."""
    name = _without_log(name)
    if sites_server(name):
        name = name[:-6]
    return name.endswith("-old") and bool(SKIFF_OLD)


# skiff's hosted TLS engines (--tls-engine), as a server name's suffix.
TLS_ENGINES = ("openssl", "gnutls", "wolfssl")


def _base_and_engine(name):
    """(base server, TLS engine suffix or None): see base_server."""
    old = old_server(name)
    name = _without_log(name)
    if sites_server(name):
        name = name[:-6]
    if old:
        name = name[:-4]
    for eng in TLS_ENGINES:
        if name.endswith("-" + eng):
            return name[:-len(eng) - 1], eng
    return name, None


def base_server(name):
    """skiff-packet-old -> skiff-packet (the old binary, BENCH_SKIFF_OLD);
    the engine (engine_of), -sites (sites_server), -log (logged_server) and
    -v6 (v6_server) suffixes are not part of the base either, nor -w2
    (workers_of).  In a name they come in the order
    base[-openssl|-gnutls|-wolfssl][-old][-sites][-log][-v6][-w2]."""
    return _base_and_engine(name)[0]


def engine_of(name):
    """linux-app-gnutls, skiff-packet-openssl: skiff serve --tls-engine
    gnutls / openssl / wolfssl (with BENCH_TLS); None: the binary's default engine."""
    return _base_and_engine(name)[1]


def sites_twin(name):
    """The plain server a -sites server is compared with
    (skiff-packet-sites-log -> skiff-packet-log), else None."""
    if not sites_server(name):
        return None
    i = name.find("-sites")
    return name[:i] + name[i + 6:]

LOADS = env("BENCH_LOADS", " ".join(ALL_LOADS)).split()
PASSES = [int(p) for p in env("BENCH_PASSES", "41 600 6000 102400 1048576").split()]
# Bodies above 600 bytes (seed 002's two sizes) run only these loads: one
# keep-alive and one connection-per-request, where the size shows.
BIG_LOADS = env("BENCH_BIG_LOADS", "ab-k-c8 ab-c16").split()
# A -log server (logged_server) runs only these loads and bodies: the row
# `make bench` shows for the access log, on and off.
LOG_LOADS = env("BENCH_LOG_LOADS", "ab-k-c64").split()
LOG_PASSES = [int(p) for p in env("BENCH_LOG_PASSES", "41").split()]


def body_path(body):
    return "/" if body == 41 else "/x600.txt" if body == 600 else f"/x{body}.bin"


def body_bytes(body):
    """What body_path(body) holds: the hello, X's, or a byte pattern that a
    truncated or reordered answer cannot match."""
    if body == 41:
        return HELLO
    if body == 600:
        return b"X" * 599 + b"\n"
    unit = bytes(range(256)) * 4 + b"skiff bench body\n"
    return (unit * (body // len(unit) + 1))[:body]


V6_LOADS = env("BENCH_V6_LOADS", "ab-k-c8 ab-c16").split()
V6_PASSES = [int(p) for p in env("BENCH_V6_PASSES", "41").split()]


def loads_for(body):
    return LOADS if body <= 600 else [ld for ld in LOADS if ld in BIG_LOADS]


def runs_load(server, body, load):
    """Whether this server runs this load on this body (v6 rows: a subset)."""
    if not v6_server(server):
        return True
    return body in V6_PASSES and load in V6_LOADS
SCPU = int(env("BENCH_SERVER_CPU", "1"))
CCPU = int(env("BENCH_CLIENT_CPU", "0"))
WARMUP = env("BENCH_WARMUP", "1") != "0"
OFFLOADS = env("BENCH_OFFLOADS", "off")
RPS = env("BENCH_RPS", "0") == "1"
TLS = env("BENCH_TLS", "0") == "1"
TLS_KEY = env("BENCH_TLS_KEY", "ec")
TLS_CERT_FILES = {}  # set in main(): "cert", "key"
# The protocol the clients offer over HTTPS: "1.3" (ab -f TLS1.3, s_time
# -tls1_3: issue 35's TLS 1.3 handshakes) or "any" (ab -f ALL, s_time's
# default: whatever client and server agree on, TLS 1.3 with both here).
TLS_VERSION = env("BENCH_TLS_VERSION", "1.3")
if TLS_VERSION not in ("1.3", "any"):
    sys.exit(f"bench: BENCH_TLS_VERSION={TLS_VERSION}: 1.3 or any")
AB_TLS = ["-f", "TLS1.3" if TLS_VERSION == "1.3" else "ALL"]
S_TIME_TLS = ["-tls1_3"] if TLS_VERSION == "1.3" else []
# The same suites and groups as skiff's engine (src/tls/tls_openssl.c).
TLS12_CIPHERS = ("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
                 "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
                 "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305")
TLS13_SUITES = "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256"
START_TIMEOUT = float(env("BENCH_START_TIMEOUT", "10"))
# Request header lines every load and warm-up adds ("Name: value"): none
# here; bench/http/proxy_bench.py sends "Cache-Control: no-cache" for its
# cache-miss rows through this module's load_cmd.
HEADERS = []
SAT_PCT = 95.0
MAX_CONNS = 4096  # set in main(): nginx's worker_connections and skiff's --max-conns

for s in SERVERS:
    if base_server(s) not in ALL_SERVERS:
        sys.exit(f"bench: unknown server '{s}' (known: {' '.join(ALL_SERVERS)})")
    if v6_server(s) and TLS:
        sys.exit(f"bench: '{s}': the v6 rows are plain HTTP (no BENCH_TLS)")
    if engine_of(s) and (not TLS or base_server(s) == "nginx"):
        sys.exit(f"bench: '{s}': an engine suffix is for skiff's servers over HTTPS "
                 "(BENCH_TLS=1)")
for ld in LOADS:
    if ld not in ALL_LOADS:
        sys.exit(f"bench: unknown load '{ld}' (known: {' '.join(ALL_LOADS)})")


def log(msg):
    print(msg, flush=True)


def sh(args, check=False, timeout=30, **kw):
    """Run a short command; returns CompletedProcess (text)."""
    return subprocess.run(args, check=check, timeout=timeout, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


# ---------------------------------------------------------------- namespaces
MY_NS = []
MY_PROCS = []  # Popen objects of servers started by this run


def ns_name(role):
    return f"{PREFIX}-{os.getpid()}-{role}"


def ns_list():
    r = sh(["ip", "netns", "list"])
    return [line.split()[0] for line in r.stdout.splitlines() if line.strip()]


def ns_pids(ns):
    r = sh(["ip", "netns", "pids", ns])
    return [int(p) for p in r.stdout.split() if p.isdigit()]


def ns_kill_all(ns):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        pids = ns_pids(ns)
        if not pids:
            return
        for p in pids:
            try:
                os.kill(p, sig)
            except ProcessLookupError:
                pass
        for _ in range(40):
            if not ns_pids(ns):
                return
            time.sleep(0.05)


def ns_del(ns):
    ns_kill_all(ns)
    sh(["ip", "netns", "del", ns])
    if ns in MY_NS:
        MY_NS.remove(ns)


def cleanup_stale():
    """Remove skb-<pid>-* namespaces whose creating pid is gone."""
    for ns in ns_list():
        m = re.match(rf"^{PREFIX}-(\d+)-", ns)
        if not m or int(m.group(1)) == os.getpid():
            continue
        pid = int(m.group(1))
        try:
            os.kill(pid, 0)
            continue  # still running: another bench's namespace
        except ProcessLookupError:
            pass
        except PermissionError:
            continue
        log(f"bench: removing stale namespace {ns} (pid {pid} is gone)")
        ns_del(ns)


def ns_add(ns):
    sh(["ip", "netns", "add", ns], check=True)
    MY_NS.append(ns)
    sh(["ip", "-n", ns, "link", "set", "lo", "up"], check=True)
    sh(["ip", "netns", "exec", ns, "sh", "-c",
        "for k in all default; do echo 1 > /proc/sys/net/ipv6/conf/$k/disable_ipv6; done"])


def offloads_off(ns, ifn):
    r = sh(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "tx", "off", "rx", "off",
            "tso", "off", "gso", "off", "gro", "off"])
    if r.returncode != 0:
        sh(["ip", "netns", "exec", ns, "ethtool", "-K", ifn, "tx", "off", "rx", "off",
            "tso", "off", "gso", "off"])


def client_sysctls(ns):
    # Many short connections from one address: reuse TIME_WAIT ports and
    # use a wide port range.  The same for every server.
    sh(["ip", "netns", "exec", ns, "sh", "-c",
        "echo 1 > /proc/sys/net/ipv4/tcp_tw_reuse; "
        "echo '1024 65000' > /proc/sys/net/ipv4/ip_local_port_range"])


def server_sysctls(ns):
    sh(["ip", "netns", "exec", ns, "sh", "-c", "echo 4096 > /proc/sys/net/core/somaxconn"])


def v6_addr(ns, ifn, addr):
    """IPv6 on IFN with ADDR/64 at once: no DAD or router solicitations of
    Linux's own (the v6 rows; 2001:2::/48 only)."""
    sh(["ip", "netns", "exec", ns, "sysctl", "-qw", f"net.ipv6.conf.{ifn}.disable_ipv6=0",
        f"net.ipv6.conf.{ifn}.accept_dad=0", f"net.ipv6.conf.{ifn}.router_solicitations=0"],
       check=True)
    sh(["ip", "-n", ns, "-6", "addr", "add", f"{addr}/64", "dev", ifn, "nodad"], check=True)


class Topo:
    """The namespaces of one run: cli (client), srv (server)."""

    def __init__(self, kind, linux_ip, v6=False):
        self.kind = kind
        if kind == "tap":
            self.cli = self.srv = ns_name("tap")
            ns_add(self.cli)
            for cmd in (["ip", "tuntap", "add", "dev", "sk0", "mode", "tap"],
                        ["ip", "addr", "add", f"{CLI_IP}/24", "dev", "sk0"],
                        ["ip", "link", "set", "sk0", "up"]):
                sh(["ip", "netns", "exec", self.cli] + cmd, check=True)
            if v6:
                v6_addr(self.cli, "sk0", CLI_IP6)
            client_sysctls(self.cli)
            server_sysctls(self.cli)
            return
        self.cli, self.srv = ns_name("cli"), ns_name("srv")
        ns_add(self.cli)
        ns_add(self.srv)
        sh(["ip", "-n", self.cli, "link", "add", "vc0", "type", "veth", "peer", "name", "vs0",
            "netns", self.srv], check=True)
        if OFFLOADS == "off" or not linux_ip:
            offloads_off(self.cli, "vc0")
            offloads_off(self.srv, "vs0")
        sh(["ip", "-n", self.cli, "addr", "add", f"{CLI_IP}/24", "dev", "vc0"], check=True)
        if linux_ip:
            sh(["ip", "-n", self.srv, "addr", "add", f"{SRV_IP}/24", "dev", "vs0"], check=True)
        sh(["ip", "-n", self.cli, "link", "set", "vc0", "up"], check=True)
        sh(["ip", "-n", self.srv, "link", "set", "vs0", "up"], check=True)
        if v6:
            v6_addr(self.cli, "vc0", CLI_IP6)
            if linux_ip:
                v6_addr(self.srv, "vs0", SRV_IP6)
        if RPS:
            for ns, ifn, cpu in ((self.cli, "vc0", CCPU), (self.srv, "vs0", SCPU)):
                sh(["ip", "netns", "exec", ns, "sh", "-c",
                    f"echo {1 << cpu:x} > /sys/class/net/{ifn}/queues/rx-0/rps_cpus"], check=True)
        client_sysctls(self.cli)
        server_sysctls(self.srv)

    def close(self):
        for ns in {self.cli, self.srv}:
            ns_del(ns)


def cleanup():
    for p in MY_PROCS:
        if p.poll() is None:
            p.terminate()
    for p in MY_PROCS:
        try:
            p.wait(3)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    MY_PROCS.clear()
    for ns in list(MY_NS):
        ns_del(ns)


# ------------------------------------------------------------------- servers
class Server:
    def __init__(self, name, skiff, work):
        self.name, self.skiff, self.work = name, skiff, work
        self.base = base_server(name)
        self.access_log = logged_server(name)
        self.v6 = v6_server(name)
        self.workers = workers_of(name)
        self.sites = sites_server(name)
        if old_server(name):
            self.skiff = os.path.abspath(SKIFF_OLD)
        self.host = f"[{SRV_IP6}]" if self.v6 else SRV_IP
        self.proc = None
        self.topo = None
        self.log = os.path.join(work, f"{name}.log")
        self.stats = {}

    @property
    def topo_kind(self):
        return "tap" if self.base == "skiff-tap" else "veth"

    @property
    def linux_ip(self):
        return self.base in ("nginx", "linux-app")

    def command(self, root):
        # Two workers: both CPUs, the client's too (2 cores: it must share).
        pin = ["taskset", "-c", str(SCPU) if self.workers == 1 else f"{SCPU},{CCPU}"]
        if self.base == "nginx":
            conf = os.path.join(self.work, "nginx.conf" if self.workers == 1 else
                                f"nginx-w{self.workers}.conf")
            return pin + ["nginx", "-p", self.work + "/", "-c", conf]
        if self.sites:
            base = pin + [self.skiff, "serve", "--config", self.write_config(root), "--stats"]
            base += SKIFF_ARGS + self.engine_args()
            if self.base == "linux-app":
                return base + ["--stack", "linux"]
            dev = {"skiff-xdp": "xdp:vs0", "skiff-packet": "packet:vs0",
                   "skiff-tap": "tap:sk0"}[self.base]
            return base + ["--stack", "skiff", "--dev", dev, "--ip", f"{SRV_IP}/24"] + (
                ["--ip6", f"{SRV_IP6}/64"] if self.v6 else [])
        base = pin + [self.skiff, "serve", "--port", "80", "--stats",
                      "--max-conns", str(MAX_CONNS)]
        if self.workers > 1:
            base += ["--workers", str(self.workers)]
        base += SKIFF_ARGS
        if root:
            base += ["--root", root]
        if TLS:
            base += ["--tls-cert", TLS_CERT_FILES["cert"], "--tls-key", TLS_CERT_FILES["key"],
                     "--tls-port", "443"] + self.engine_args()
        if self.access_log:
            base += ["--access-log", os.path.join(self.work, f"{self.name}-access.log")]
        if self.base == "linux-app":
            # Over v6: no --ip, so one [::] socket takes both families.
            return base + ["--stack", "linux"] + ([] if self.v6 else ["--ip", SRV_IP])
        dev = {"skiff-xdp": "xdp:vs0", "skiff-packet": "packet:vs0",
               "skiff-tap": "tap:sk0"}[self.base]
        return base + ["--stack", "skiff", "--dev", dev, "--ip", f"{SRV_IP}/24"] + (
            ["--ip6", f"{SRV_IP6}/64"] if self.v6 else [])

    def engine_args(self):
        eng = engine_of(self.name)
        return ["--tls-engine", eng] if eng and TLS else []

    def write_config(self, root):
        """The -sites server's configuration file (docs/config.md), in the
        work folder: what the plain server's flags say, as one default site.
        Returns its path."""
        # Over v6 the plain linux-app binds no --ip (one [::] socket, both
        # families) and skiff's stack listens on both: *:80 is that listener.
        addr = "*" if self.v6 else SRV_IP
        lines = ["# written by bench/http/bench.py for " + self.name,
                 f"max_conns {MAX_CONNS};"]
        if self.workers > 1:
            lines.append(f"workers {self.workers};")
        if self.access_log:
            lines.append("access_log " + os.path.join(self.work, f"{self.name}-access.log")
                         + " combined;")
        lines += ["site default {", f"    listen {addr}:80;"]
        if TLS:
            lines += [f"    listen {addr}:443 tls;",
                      f"    tls {TLS_CERT_FILES['cert']} {TLS_CERT_FILES['key']};"]
        lines.append("    default;")
        if root:
            lines.append(f"    route / {{ files {root}; }}")
        else:
            # The plain server's built-in hello (no --root): a fixed answer.
            hello = HELLO.decode().replace("\n", "\\n")
            lines.append(f'    route / {{ return 200 "{hello}"; }}')
        lines.append("}")
        path = os.path.join(self.work, f"{self.name}.conf")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def start(self, root):
        """Returns None when serving, else the reason."""
        self.topo = Topo(self.topo_kind, self.linux_ip, self.v6)
        self.stats = {}
        why = self.prepare()
        if why is not None:
            return why
        out = open(self.log, "w")
        self.proc = subprocess.Popen(["ip", "netns", "exec", self.topo.srv] + self.command(root),
                                     stdout=out, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        out.close()
        MY_PROCS.append(self.proc)
        deadline = time.time() + START_TIMEOUT
        while time.time() < deadline:
            if self.proc.poll() is not None:
                return f"exited {self.proc.returncode}: {tail(self.log)}"
            r = sh(["timeout", "2", "ip", "netns", "exec", self.topo.cli, "curl", "-s",
                    "--max-time", "1", "-o", "/dev/null", "-w", "%{http_code}",
                    f"http://{self.host}/"], timeout=5)
            # Any HTTP answer: "/" of a --root without index.html is 403.
            if r.stdout.strip() not in ("", "000"):
                return None
            time.sleep(0.1)
        return f"no answer within {START_TIMEOUT:.0f} s: {tail(self.log)}"

    def prepare(self):
        """What must run in the fresh topology before the server starts:
        nothing here; bench/http/proxy_bench.py starts the upstream.  None,
        or why the server cannot start."""
        return None

    def pids(self):
        """The server's processes (nginx: master and worker).  For tap the
        namespace is shared with the client, so only the server's tree."""
        if self.proc is None:
            return []
        tree, todo = [], [self.proc.pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += children(p)
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
            MY_PROCS.remove(self.proc)
            self.proc = None
            self.stats = read_stats(self.log)
        if self.topo is not None:
            self.topo.close()
            self.topo = None


def children(pid):
    kids = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
    except OSError:
        pass
    return kids


def tail(path, n=2):
    try:
        with open(path, errors="replace") as f:
            lines = [x.strip() for x in f.read().splitlines() if x.strip()]
        return " | ".join(lines[-n:])[:300]
    except OSError:
        return ""


def read_stats(path):
    st = {}
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.match(r"^([a-z_][\w.]*)\s+(\d+)\s*$", line)
                if m:
                    st[m.group(1)] = int(m.group(2))
    except OSError:
        pass
    return st


# ------------------------------------------------------------ measurements
def cpu_times():
    """{cpu index: (busy jiffies, total jiffies)} from /proc/stat.
    busy = user+nice+system+irq+softirq+steal; total adds idle+iowait."""
    out = {}
    with open("/proc/stat") as f:
        for line in f:
            m = re.match(r"^cpu(\d+)\s+(.*)$", line)
            if not m:
                continue
            v = [int(x) for x in m.group(2).split()]
            user, nice, system, idle, iowait, irq, softirq = v[:7]
            steal = v[7] if len(v) > 7 else 0
            busy = user + nice + system + irq + softirq + steal
            out[int(m.group(1))] = (busy, busy + idle + iowait)
    return out


def ksoftirqd_ticks(cpu):
    """utime+stime of one CPU's ksoftirqd thread: the packet work that
    overflowed to it, which no server process is charged for.  (The rest
    of the softirq and irq time on a core is charged, tick by tick, to the
    task that was running when it came: the server's own sends included.)"""
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/comm") as f:
                    if f.read().strip() == f"ksoftirqd/{cpu}":
                        return proc_ticks([int(p)])
            except OSError:
                pass
    return 0


def proc_ticks(pids):
    t = 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            t += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            pass
    return t


def probe_response(ns, path, host=SRV_IP):
    """(header bytes, body bytes, body) of one GET, or None."""
    r = subprocess.run(["timeout", "5", "ip", "netns", "exec", ns, "curl", "-s", "--max-time",
                        "3", "-D", "/dev/stderr", f"http://{host}{path}"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0 or not r.stderr.startswith(b"HTTP/"):
        return None
    return len(r.stderr), len(r.stdout), r.stdout


def load_cmd(load, url):
    """The client command for a load, and its time bound."""
    m = re.match(r"^ab-(k-)?c(\d+)$", load)
    if m:
        c = int(m.group(2))
        cmd = ["ab", "-q", "-r", "-s", "5"]
        if TLS:
            cmd += AB_TLS
        if m.group(1):
            cmd.append("-k")
        for h in HEADERS:
            cmd += ["-H", h]
        # -t bounds the time; -n (after -t) caps the count.
        cmd += ["-t", f"{max(1, round(DURATION))}", "-n", str(NMAX), "-c", str(c), url]
        return cmd, DURATION + 30
    if load == "resume-c1":
        # One full handshake, then every connection resumes its session.
        host = url.split("/")[2]
        return (["openssl", "s_time", "-connect", f"{host}:443", "-reuse", "-www", "/",
                 "-time", f"{max(1, round(DURATION))}"] + S_TIME_TLS, DURATION + 30)
    if load == "slow-c1":
        return (["python3", os.path.join(HERE, "slow_client.py"), url,
                 str(max(1, round(DURATION))), "1000"], DURATION + 30)
    m = re.match(r"^wrk-close-c(\d+)$", load)
    c = int(m.group(1))
    # 10,000 connections take a while to open: never under 2 s.
    return (["wrk", "-t", "1", "-c", str(c), "-d", f"{max(2, round(DURATION))}s",
             "--timeout", "5s", "-H", "Connection: close"]
            + [a for h in HEADERS for a in ("-H", h)] + [url], DURATION + 30)


def parse_ab(out):
    def num(pat, cast=float):
        m = re.search(pat, out, re.M)
        return cast(m.group(1)) if m else None
    done = num(r"^Complete requests:\s+(\d+)", int)
    if done is None:
        return None
    return {
        "completed": done,
        "failed": num(r"^Failed requests:\s+(\d+)", int) or 0,
        "non2xx": num(r"^Non-2xx responses:\s+(\d+)", int) or 0,
        "errors": (num(r"^Write errors:\s+(\d+)", int) or 0),
        "req_s": num(r"^Requests per second:\s+([\d.]+)") or 0.0,
        "duration": num(r"^Time taken for tests:\s+([\d.]+)") or 0.0,
        "doc_len": num(r"^Document Length:\s+(\d+)", int),
        # "SSL/TLS Protocol: TLSv1.3,TLS_AES_128_GCM_SHA256,256,128" over HTTPS
        "tls_protocol": num(r"^SSL/TLS Protocol:\s+([^,\s]+)", str),
    }


def parse_wrk(out):
    m = re.search(r"^\s*(\d+) requests in ([\d.]+)(m?s|m|h)", out, re.M)
    rps = re.search(r"^Requests/sec:\s+([\d.]+)", out, re.M)
    if not m or not rps:
        return None
    unit = {"s": 1, "ms": 1e-3, "m": 60, "h": 3600}[m.group(3)]
    errs = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    e = [int(x) for x in errs.groups()] if errs else [0, 0, 0, 0]
    n2 = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    return {
        "completed": int(m.group(1)),
        "failed": 0,
        "non2xx": int(n2.group(1)) if n2 else 0,
        "errors": sum(e),
        "error_detail": "connect %d read %d write %d timeout %d" % tuple(e),
        "req_s": float(rps.group(1)),
        "duration": float(m.group(2)) * unit,
        "doc_len": None,
    }


def parse_s_time(out, secs):
    """openssl s_time: "N connections in T real seconds"; the rate over the
    wall time bench measured (s_time's own T is whole seconds)."""
    m = re.search(r"^(\d+) connections in [\d.]+ real seconds", out, re.M)
    if not m:
        return None
    n = int(m.group(1))
    errs = len(re.findall(r"^ERROR|error", out, re.M))
    # With -reuse s_time prints a character per timed connection: "r" when
    # the session was resumed, "*" (or the old protocols' letters) when the
    # server made it a full handshake.  The one full handshake that gets the
    # session comes before "starting" and is not counted.
    marks = "".join(ln for ln in out.split("starting", 1)[-1].splitlines()
                    if re.fullmatch(r"[r*t3]+", ln.strip()))
    return {"completed": n, "failed": 0, "non2xx": 0, "errors": errs,
            "req_s": n / secs if secs > 0 else 0.0, "duration": secs, "doc_len": None,
            "resumed": marks.count("r"), "not_resumed": len(marks) - marks.count("r")}


def run_load(srv, load, url):
    cmd, bound = load_cmd(load, url)
    ns = srv.topo.cli
    pids = srv.pids()
    if WARMUP:
        wcmd = (["ab", "-q", "-r", "-s", "5", "-n", "2000", "-c", "8"] + (AB_TLS if TLS else [])
                + [a for h in HEADERS for a in ("-H", h)])
        if "-k-" in load:
            wcmd.insert(1, "-k")
        sh(["timeout", "20", "ip", "netns", "exec", ns, "taskset", "-c", str(CCPU)] + wcmd
           + [url], timeout=25)
    i0 = ksoftirqd_ticks(SCPU)
    c0, p0, t0 = cpu_times(), proc_ticks(pids), time.time()
    r = subprocess.run(["timeout", str(int(bound)), "ip", "netns", "exec", ns, "taskset", "-c",
                        str(CCPU)] + cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace")
    c1, p1, t1 = cpu_times(), proc_ticks(pids), time.time()
    i1 = ksoftirqd_ticks(SCPU)
    res = (parse_wrk(r.stdout) if cmd[0] == "wrk" else
           parse_s_time(r.stdout, t1 - t0) if cmd[0] == "openssl" else parse_ab(r.stdout))
    if res is None:
        res = {"completed": 0, "failed": 0, "non2xx": 0, "errors": 1, "req_s": 0.0,
               "duration": t1 - t0, "doc_len": None,
               "error_detail": f"client exit {r.returncode}: " +
               " | ".join(r.stdout.strip().splitlines()[-2:])[:200]}
    sb, st = (c1[SCPU][0] - c0[SCPU][0]), (c1[SCPU][1] - c0[SCPU][1])
    cb, ct = (c1[CCPU][0] - c0[CCPU][0]), (c1[CCPU][1] - c0[CCPU][1])
    n = max(res["completed"], 1)
    res["server_cpu_us_per_req"] = sb * 1e6 / HZ / n
    res["server_proc_us_per_req"] = (p1 - p0) * 1e6 / HZ / n
    res["server_core_busy_pct"] = 100.0 * sb / st if st else 0.0
    # The server's own share of its core: its processes (their system time
    # holds the irq and softirq work that came while they ran, their own
    # sends' included) and the core's ksoftirqd, without what other
    # programs ran there (a shared machine's builds are scheduled onto the
    # server's core while it idles); others_pct: the rest of the core's
    # busy time, as a share of the core's time.  Single-worker servers
    # only (a -w2 server runs on both cores).
    own = (p1 - p0) + (i1 - i0)
    res["server_own_us_per_req"] = own * 1e6 / HZ / n
    res["server_core_others_pct"] = max(0.0, 100.0 * (sb - own) / st) if st else 0.0
    res["client_busy_pct"] = 100.0 * cb / ct if ct else 0.0
    res["raw"] = r.stdout
    return res


def handshake_problems(srv, res):
    """Over HTTPS, why a run's handshakes are not what its row says: ab
    on another protocol than BENCH_TLS_VERSION; s_time -reuse connections
    the server did not resume (s_time's marks), or fewer resumed ones than
    s_time saw by skiff's own count (tls.resumed, --stats).  [] if none."""
    why = []
    proto = res.get("tls_protocol")
    if TLS_VERSION == "1.3" and proto is not None and proto != "TLSv1.3":
        why.append(f"ab negotiated {proto}")
    if res.get("resumed") is not None:
        if res["not_resumed"] or res["resumed"] < res["completed"]:
            why.append(f"{res['completed'] - res['resumed']} of {res['completed']} "
                       "connections not resumed")
        counted = srv.stats.get("tls.resumed")
        if counted is not None and counted < res["resumed"]:
            why.append(f"the server counted {counted} resumed, s_time {res['resumed']}")
    return why


# ------------------------------------------------------------------ output
CSV_FIELDS = ["pass", "server", "load", "rep", "status", "req_s", "completed", "failed",
              "non2xx", "errors", "server_cpu_us_per_req", "server_proc_us_per_req",
              "server_core_busy_pct", "client_busy_pct", "duration_s", "resp_header_bytes",
              "resp_body_bytes", "resp_bytes", "syscalls_per_req", "server_own_us_per_req",
              "server_core_others_pct", "tls_resumed", "note"]


def fmt_num(x, nd=0):
    if x is None:
        return ""
    return f"{x:,.{nd}f}"


def med(rows, key):
    v = [r[key] for r in rows if r.get(key) is not None]
    return statistics.median(v) if v else None


def machine_line():
    model = "?"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    kern = os.uname().release
    ncpu = os.cpu_count()
    try:
        nginx_v = sh(["nginx", "-v"]).stderr.strip().split("/")[-1]
    except (OSError, subprocess.SubprocessError):
        nginx_v = "?"
    return f"{ncpu} CPUs ({model}), kernel {kern}, nginx {nginx_v}"


def write_results(out, runs, unavailable, sizes, meta):
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        w.writeheader()
        for r in runs:
            row = dict(r)
            for k in ("req_s", "server_cpu_us_per_req", "server_proc_us_per_req",
                      "server_core_busy_pct", "client_busy_pct", "duration_s",
                      "syscalls_per_req", "server_own_us_per_req", "server_core_others_pct"):
                if isinstance(row.get(k), float):
                    row[k] = f"{row[k]:.2f}"
            w.writerow(row)

    L = []
    L.append(f"# make bench — {meta['date']}")
    L.append("")
    L.append(f"Machine: {meta['machine']}. Server pinned to CPU {SCPU}, client to CPU {CCPU}. "
             f"{REPS} repetition(s) per point, servers alternating at every repetition, "
             f"{DURATION:g} s per run; medians of the runs without failures. "
             f"Offloads on the veth ends: {OFFLOADS} for the kernel servers, off for skiff. "
             + ("RPS: each veth end's receive work on its own side's CPU (BENCH_RPS=1)."
                if RPS else "RPS: off (receive work runs on the sender's CPU)."))
    L.append("")
    L.append(f"Command: `{meta['command']}`")
    L.append("")
    L.append("Columns: **req/s** median (`k/n` = runs without failures / runs); "
             "**core µs/req**: busy time of the server's CPU (user+system+irq+softirq, "
             "/proc/stat) per completed request; **proc µs/req**: utime+stime of the server's "
             "processes per request; **client %**: busy share of the client's CPU, "
             f"**SAT** when above {SAT_PCT:.0f}% (the client, not the server, was the limit). "
             + ("With RPS each side's receive runs on its own CPU: the server core "
                "carries the server's receive work and not the client's."
                if RPS else
                "On a veth pair the receive path of a packet runs on the sender's CPU, so "
                "the server core carries the client's receive work and not its own: compare "
                "the core column between servers, not with an absolute cost."))
    L.append("")
    for body in PASSES:
        prow = [r for r in runs if r["pass"] == body]
        if not prow and not unavailable.get(body):
            continue
        L.append(f"## {body}-byte body")
        L.append("")
        sz = sizes.get(body, {})
        if sz:
            parts = [f"{s} {h}+{b}={h + b}" for s, (h, b) in sz.items()]
            L.append("Response bytes (header+body): " + ", ".join(parts) + ".")
            bodies = {b for (_, b) in sz.values()}
            heads = [h for (h, _) in sz.values()]
            if len(bodies) > 1:
                L.append(f"**WARNING: the bodies differ in size: {sorted(bodies)}**")
            elif max(heads) - min(heads) > 40:
                L.append(f"**WARNING: the headers differ by {max(heads) - min(heads)} bytes**")
            else:
                L.append(f"Bodies identical in size; headers within "
                         f"{max(heads) - min(heads)} bytes.")
            L.append("")
        servers = [s for s in SERVERS]
        skiffs = [s for s in servers if s.startswith("skiff-")]
        # Table 1: req/s matrix with ratios.
        hdr = ["load"] + [f"{s} req/s" for s in servers]
        for s in skiffs:
            if "nginx" in servers:
                hdr.append(f"{s}/nginx")
            if "linux-app" in servers:
                hdr.append(f"{s}/linux-app")
        if "linux-app" in servers and "nginx" in servers:
            hdr.append("linux-app/nginx")
        v6s = [s for s in servers if v6_server(s) and s[:-3] in servers]
        for s in v6s:
            hdr.append(f"{s}/v4")
        sitess = [s for s in servers if sites_twin(s) in servers]
        for s in sitess:
            hdr.append(f"{s}/plain")
        L.append("| " + " | ".join(hdr) + " |")
        L.append("|---|" + "--:|" * (len(hdr) - 1))
        for load in loads_for(body):
            cells = [load]
            meds = {}
            for s in servers:
                rs = [r for r in prow if r["server"] == s and r["load"] == load]
                if s in unavailable.get(body, {}):
                    cells.append("unavailable")
                    continue
                if not rs:
                    cells.append("—")
                    continue
                ok = [r for r in rs if r["status"] == "ok"]
                m = med(ok, "req_s")
                meds[s] = m
                sat = any(r["client_busy_pct"] > SAT_PCT for r in ok)
                cell = (fmt_num(m) if m is not None else "FAILED") + f" ({len(ok)}/{len(rs)})"
                if sat:
                    cell += " SAT"
                cells.append(cell)

            def ratio(a, b):
                if meds.get(a) and meds.get(b):
                    return f"{meds[a] / meds[b]:.2f}"
                return "—"
            for s in skiffs:
                if "nginx" in servers:
                    cells.append(ratio(s, "nginx"))
                if "linux-app" in servers:
                    cells.append(ratio(s, "linux-app"))
            if "linux-app" in servers and "nginx" in servers:
                cells.append(ratio("linux-app", "nginx"))
            for s in v6s:
                cells.append(ratio(s, s[:-3]))
            for s in sitess:
                cells.append(ratio(s, sites_twin(s)))
            L.append("| " + " | ".join(cells) + " |")
        L.append("")
        if sitess:
            # The sites runtime against the plain engine, pair by pair:
            # issue 32's "no figure may get worse beyond noise".  The
            # spread (min..max of the runs) says what noise is here.
            L.append("The sites runtime (`--config`) against the plain engine (`--root`), "
                     "medians; req/s above 1 and µs/req below 1 favour the sites runtime:")
            L.append("")
            L.append("| load | pair | req/s sites/plain | core µs/req sites/plain | "
                     "proc µs/req sites/plain | req/s runs sites | req/s runs plain |")
            L.append("|---|---|--:|--:|--:|---|---|")

            def spread(rows):
                v = sorted(r["req_s"] for r in rows)
                return " ".join(fmt_num(x) for x in v) if v else "—"
            for load in loads_for(body):
                for s in sitess:
                    t = sites_twin(s)
                    a = [r for r in prow if r["server"] == s and r["load"] == load
                         and r["status"] == "ok"]
                    b = [r for r in prow if r["server"] == t and r["load"] == load
                         and r["status"] == "ok"]
                    if not a and not b:
                        continue

                    def q(key):
                        x, y = med(a, key), med(b, key)
                        return f"{x / y:.2f}" if x and y else "—"
                    L.append("| " + " | ".join([
                        load, f"{s} / {t}", q("req_s"), q("server_cpu_us_per_req"),
                        q("server_proc_us_per_req"), spread(a), spread(b)]) + " |")
            L.append("")
        # Table 2: CPU per request.
        L.append("| load | server | req/s | core µs/req | proc µs/req | server core % | "
                 "client % | syscalls/req | failed runs |")
        L.append("|---|---|--:|--:|--:|--:|--:|--:|---|")
        for load in loads_for(body):
            for s in servers:
                if s in unavailable.get(body, {}):
                    continue
                rs = [r for r in prow if r["server"] == s and r["load"] == load]
                if not rs:
                    continue
                ok = [r for r in rs if r["status"] == "ok"]
                bad = [r for r in rs if r["status"] != "ok"]
                badtxt = "; ".join(f"rep {r['rep']}: {r['note']}" for r in bad)
                cl = med(ok, "client_busy_pct")
                sat = " SAT" if cl is not None and cl > SAT_PCT else ""
                L.append("| " + " | ".join([
                    load, s, fmt_num(med(ok, "req_s")),
                    fmt_num(med(ok, "server_cpu_us_per_req"), 1),
                    fmt_num(med(ok, "server_proc_us_per_req"), 1),
                    fmt_num(med(ok, "server_core_busy_pct")),
                    fmt_num(cl) + sat,
                    fmt_num(med(ok, "syscalls_per_req"), 2),
                    badtxt or "none"]) + " |")
        L.append("")
        if TLS:
            L += handshake_table(prow, [s for s in servers
                                        if s not in unavailable.get(body, {})], body)
        for s, why in unavailable.get(body, {}).items():
            L.append(f"- {s}: unavailable ({why})")
        if unavailable.get(body):
            L.append("")
    for note in meta.get("notes", []):
        L.append(f"- {note}")
    L.append("")
    L.append("Every run is in runs.csv; chart.png plots the medians.")
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(L) + "\n")


# Issue 35's goal, per skiff server against nginx, on the server's core:
# a full TLS 1.3 handshake at most 2/3 of nginx's CPU at no fewer per
# second, a resumed one at most 1/2.
GOAL_FULL_CPU, GOAL_RESUMED_CPU = 2 / 3, 1 / 2


def handshake_table(prow, servers, body):
    """The handshake loads of one body's runs (ab-cN without -k: a full
    handshake per request; resume-c1: a resumed one per connection), each
    server's CPU per handshake on its core beside nginx's, and the goal's
    verdict.  Lines of markdown; none when no handshake load ran."""
    loads = [ld for ld in loads_for(body) if re.match(r"^ab-c\d+$", ld) or ld == "resume-c1"]
    loads = [ld for ld in loads if any(r["load"] == ld for r in prow)]
    if not loads:
        return []
    L = [f"{'TLS 1.3' if TLS_VERSION == '1.3' else 'TLS'} handshakes, {body}-byte body, "
         "per handshake (one per request for ab without -k, one per timed connection "
         "for s_time -reuse, every one of them resumed by s_time's marks and by skiff's "
         "tls.resumed): **core µs** the server core's busy time; **own µs** the part of "
         "it that is the server's: its processes (with the interrupt work that came while "
         "they ran) and the core's ksoftirqd, without other programs the scheduler put on "
         "the core while the server idled (**others %**: the rest of the core's busy time, "
         "as a share of its time: a shared machine's builds and tests); "
         "**/nginx** ratios of the medians to nginx's; **SAT**: the client's core was the "
         f"limit (above {SAT_PCT:.0f}% busy), so the rate is the client's and the CPU per "
         "handshake is what compares the servers.", "",
         "| load | server | handshakes/s | core µs | own µs | others % | core µs /nginx | "
         "own µs /nginx | handshakes/s /nginx | client % | ok runs |",
         "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    meds = {}
    for load in loads:
        for s in servers:
            rs = [r for r in prow if r["server"] == s and r["load"] == load]
            if not rs:
                continue
            ok = [r for r in rs if r["status"] == "ok"]
            meds[load, s] = {
                "rate": med(ok, "req_s"), "core": med(ok, "server_cpu_us_per_req"),
                "own": med(ok, "server_own_us_per_req"),
                "others": med(ok, "server_core_others_pct"),
                "client": med(ok, "client_busy_pct"),
                "sat": any(r["client_busy_pct"] > SAT_PCT for r in ok),
                "ok": len(ok), "runs": len(rs)}
        ng = meds.get((load, "nginx"))
        for s in servers:
            m = meds.get((load, s))
            if m is None:
                continue

            def vs(k):
                if s == "nginx" or not ng or not m[k] or not ng[k]:
                    return "—"
                return f"{m[k] / ng[k]:.2f}"
            L.append("| " + " | ".join([
                load, s, fmt_num(m["rate"]) + (" SAT" if m["sat"] else ""),
                fmt_num(m["core"], 1), fmt_num(m["own"], 1), fmt_num(m["others"]),
                vs("core"), vs("own"), vs("rate"), fmt_num(m["client"]),
                f"{m['ok']}/{m['runs']}"]) + " |")
    L.append("")
    verdicts = []
    for s in servers:
        if s == "nginx":
            continue
        parts = []
        for load in loads:
            m, ng = meds.get((load, s)), meds.get((load, "nginx"))
            if not m or not ng:
                continue
            if m["ok"] < m["runs"] or ng["ok"] < ng["runs"] or not (m["own"] and ng["own"]):
                parts.append(f"{load}: not judged (failed runs)")
                continue
            own, core, rate = m["own"] / ng["own"], m["core"] / ng["core"], m["rate"] / ng["rate"]
            if load == "resume-c1":
                met = own <= GOAL_RESUMED_CPU
                parts.append(f"resumed ({load}) {own:.2f}x nginx's own µs, core {core:.2f}x "
                             f"(goal ≤ {GOAL_RESUMED_CPU:.2f}): {'met' if met else 'not met'}")
            else:
                # Within 3% of nginx's rate counts as "no fewer": when both
                # are client-bound the rate is the client's, not the server's.
                met = own <= GOAL_FULL_CPU and rate >= 0.97
                parts.append(f"full ({load}) {own:.2f}x nginx's own µs, core {core:.2f}x, "
                             f"at {rate:.2f}x its rate (goal ≤ {GOAL_FULL_CPU:.2f} at ≥ 1): "
                             f"{'met' if met else 'not met'}"
                             + (" (both client-bound)" if m["sat"] and ng["sat"] else ""))
        if parts:
            verdicts.append(f"- {s}: " + "; ".join(parts) + ".")
    if verdicts:
        L += ["Issue 35's goal, each server against nginx, on the medians of own µs:", ""] \
            + verdicts + [""]
    return L


def write_chart(out, runs):
    """Grouped bars of median req/s per load, one group per load, one bar
    per server; one panel per body size.  gnuplot."""
    if not shutil.which("gnuplot"):
        return "gnuplot not found: no chart (apt install gnuplot-nox)"
    servers = [s for s in SERVERS if any(r["server"] == s and r["status"] == "ok" for r in runs)]
    if not servers:
        return "no successful run: no chart"
    passes = [p for p in PASSES if any(r["pass"] == p for r in runs)]
    cairo = sh(["gnuplot", "-e", "set terminal pngcairo"]).returncode == 0
    height = 420 * len(passes)
    script = [f"set terminal pngcairo size 1400,{height} font 'sans,10'" if cairo
              else f"set terminal png size 1400,{height}",
              f"set output '{os.path.join(out, 'chart.png')}'",
              f"set multiplot layout {len(passes)},1",
              "set style data histograms", "set style histogram clustered gap 1",
              "set style fill solid 0.85 border -1", "set boxwidth 0.9",
              "set logscale y", "set yrange [100:*]", "set grid ytics",
              "set ylabel 'requests/s (median, log scale)'", "set key top right",
              "set xtics rotate by -20"]
    for p in passes:
        dat = os.path.join(out, f".chart-{p}.dat")
        with open(dat, "w") as f:
            f.write("load " + " ".join(servers) + "\n")
            for load in loads_for(p):
                vals = []
                for s in servers:
                    ok = [r for r in runs if r["pass"] == p and r["server"] == s
                          and r["load"] == load and r["status"] == "ok"]
                    m = med(ok, "req_s")
                    vals.append(f"{m:.0f}" if m else "NaN")
                f.write(load + " " + " ".join(vals) + "\n")
        script.append(f"set title 'skiff bench: {p}-byte body, req/s'")
        cols = ", ".join(f"'{dat}' using {i + 2}:xtic(1) title columnheader"
                         for i in range(len(servers)))
        script.append("plot " + cols)
    script.append("unset multiplot")
    r = sh(["gnuplot"], input="\n".join(script) + "\n", timeout=60)
    for p in passes:
        try:
            os.unlink(os.path.join(out, f".chart-{p}.dat"))
        except OSError:
            pass
    if r.returncode != 0:
        return "gnuplot failed: " + r.stderr.strip()[:200]
    return None


# -------------------------------------------------------------------- main
def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0
    if len(sys.argv) != 2:
        sys.exit("usage: bench.py path/to/skiff   (bench.py --help: servers, suffixes, BENCH_*)")
    skiff = os.path.abspath(sys.argv[1])
    if os.geteuid() != 0:
        sys.exit("bench: needs root (network namespaces)")
    need = ["ip", "ab", "curl", "taskset", "timeout", "ethtool"]
    if any(s == "nginx" for s in SERVERS):
        need.append("nginx")
    if any(ld.startswith("wrk") for ld in LOADS):
        need.append("wrk")
    miss = [t for t in need if not shutil.which(t)]
    if miss:
        sys.exit(f"bench: missing {' '.join(miss)} (tools/deps.sh installs them)")
    if not os.access(skiff, os.X_OK):
        sys.exit(f"bench: {skiff} is not executable (make first)")
    ncpu = os.cpu_count() or 1
    if max(SCPU, CCPU) >= ncpu or SCPU == CCPU:
        sys.exit(f"bench: server CPU {SCPU} and client CPU {CCPU} must differ and exist "
                 f"({ncpu} CPUs)")

    notes = []
    loads = list(LOADS)
    import resource
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (nofile[1], nofile[1]))
    except (ValueError, OSError):
        pass
    nofile = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    for ld in list(loads):
        m = re.match(r"^wrk-close-c(\d+)$", ld)
        if m and int(m.group(1)) + 256 > nofile:
            loads.remove(ld)
            notes.append(f"{ld} skipped: the open-files limit is {nofile} "
                         f"(needs {int(m.group(1)) + 256})")
    LOADS[:] = loads

    stamp = datetime.datetime.now().strftime("%Y-%m-%d-%H%M%S")
    out = env("BENCH_OUT", os.path.join(REPO, "bench", "results", stamp))
    os.makedirs(out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="skb-bench.")
    os.chmod(work, 0o755)
    root = os.path.join(work, "www")
    os.makedirs(root)
    for body in PASSES:
        if body < 41:
            sys.exit(f"bench: BENCH_PASSES: {body} is not a body size (41 is the hello, "
                     "others are files of that many bytes)")
        if body != 41:
            with open(os.path.join(root, body_path(body)[1:]), "wb") as f:
                f.write(body_bytes(body))
    global MAX_CONNS
    conns = MAX_CONNS = max(1024, min(nofile - 64, 20000))
    with open(os.path.join(HERE, "nginx.conf.in")) as f:
        conf = f.read()
    tls_conf = ""
    if TLS:
        cert, key = os.path.join(work, "tls.crt"), os.path.join(work, "tls.key")
        kargs = (["-newkey", "rsa:2048"] if TLS_KEY == "rsa" else
                 ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"])
        r = sh(["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=skiff-bench",
                "-addext", f"subjectAltName=IP:{SRV_IP}", "-keyout", key, "-out", cert] + kargs)
        if r.returncode != 0:
            sys.exit(f"bench: openssl could not make the certificate: {r.stdout[-200:]}")
        TLS_CERT_FILES.update(cert=cert, key=key)
        tls_conf = (f"listen {SRV_IP}:443 ssl backlog=4096;\n"
                    f"        ssl_certificate {cert};\n        ssl_certificate_key {key};\n"
                    "        ssl_protocols TLSv1.2 TLSv1.3;\n"
                    f"        ssl_ciphers {TLS12_CIPHERS};\n"
                    f"        ssl_conf_command Ciphersuites {TLS13_SUITES};\n"
                    "        ssl_ecdh_curve X25519:prime256v1;\n"
                    "        ssl_prefer_server_ciphers on;\n"
                    "        ssl_session_cache shared:SSL:10m;\n"
                    "        ssl_session_tickets on;")
    conf = conf.replace("@TLS@", tls_conf)
    conf = (conf.replace("@WORK@", work).replace("@ROOT@", root)
            .replace("@CONNS@", str(conns)).replace("@NOFILE@", str(nofile)))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write(conf)
    # nginx-w2: the same with two worker processes (sharing the listener).
    with open(os.path.join(work, "nginx-w2.conf"), "w") as f:
        f.write(conf.replace("worker_processes 1;", "worker_processes 2;"))

    def on_signal(sig, _frm):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)

    runs, unavailable, sizes = [], {}, {}
    meta = {"date": datetime.datetime.now().strftime("%Y-%m-%d %H:%M"),
            "machine": machine_line(),
            "command": " ".join(f"{k}={os.environ[k]}" for k in sorted(os.environ)
                                if k.startswith("BENCH_")) + " make bench",
            "notes": notes}
    t_start = time.time()
    rc = 0
    try:
        cleanup_stale()
        for note in notes:
            log(f"bench: {note}")
        log(f"bench: servers {' '.join(SERVERS)}; loads {' '.join(LOADS)}; bodies "
            f"{' '.join(map(str, PASSES))}; {REPS} reps x {DURATION:g} s; out {out}")
        for body in PASSES:
            path, want = body_path(body), body_bytes(body)
            url = f"{'https' if TLS else 'http'}://{SRV_IP}{path}"
            unavailable[body] = {}
            sizes[body] = {}
            loads = loads_for(body)
            for li, load in enumerate(loads, 1):
                for rep in range(1, REPS + 1):
                    for s in SERVERS:
                        if s in unavailable[body] or not runs_load(s, body, load):
                            continue
                        if logged_server(s) and (load not in LOG_LOADS or body not in LOG_PASSES):
                            continue
                        tag = (f"[{body}B] [load {li}/{len(loads)} {load}] [server {s}] "
                               f"run {rep}/{REPS}")
                        srv = Server(s, skiff, work)
                        row = {"pass": body, "server": s, "load": load, "rep": rep}
                        try:
                            why = srv.start(root if body != 41 else None)
                            if why is not None:
                                unavailable[body][s] = why
                                log(f"{tag} ... unavailable: {why}")
                                runs.append(dict(row, status="unavailable", note=why))
                                continue
                            pr = probe_response(srv.topo.cli, path, srv.host)
                            if pr is None or pr[2] != want:
                                row.update(status="error", note="wrong or no response body "
                                           f"({'none' if pr is None else len(pr[2])} bytes)")
                                runs.append(row)
                                log(f"{tag} ... ERROR {row['note']}")
                                continue
                            sizes[body].setdefault(s, (pr[0], pr[1]))
                            res = run_load(srv, load, url.replace(SRV_IP, srv.host, 1))
                        finally:
                            srv.stop()
                        reqs = srv.stats.get("https.requests" if TLS else "http.requests")
                        sysc = None
                        if reqs and ("dev.rx_syscalls" in srv.stats
                                     or "dev.tx_syscalls" in srv.stats):
                            sysc = (srv.stats.get("dev.rx_syscalls", 0)
                                    + srv.stats.get("dev.tx_syscalls", 0)) / reqs
                        hs_bad = handshake_problems(srv, res) if TLS else []
                        bad = res["failed"] or res["non2xx"] or res["errors"] \
                            or not res["completed"] or hs_bad
                        note = ""
                        if bad:
                            note = (f"failed {res['failed']} non2xx {res['non2xx']} "
                                    f"errors {res['errors']}")
                            if res.get("error_detail"):
                                note += f" ({res['error_detail']})"
                            if hs_bad:
                                note += "; " + "; ".join(hs_bad)
                        row.update(status="failed" if bad else "ok", req_s=res["req_s"],
                                   completed=res["completed"], failed=res["failed"],
                                   non2xx=res["non2xx"], errors=res["errors"],
                                   server_cpu_us_per_req=res["server_cpu_us_per_req"],
                                   server_proc_us_per_req=res["server_proc_us_per_req"],
                                   server_core_busy_pct=res["server_core_busy_pct"],
                                   server_own_us_per_req=res["server_own_us_per_req"],
                                   server_core_others_pct=res["server_core_others_pct"],
                                   client_busy_pct=res["client_busy_pct"],
                                   duration_s=res["duration"], resp_header_bytes=pr[0],
                                   resp_body_bytes=pr[1], resp_bytes=pr[0] + pr[1],
                                   syscalls_per_req=sysc, tls_resumed=res.get("resumed"),
                                   note=note)
                        runs.append(row)
                        with open(os.path.join(work, "last-client.txt"), "w") as f:
                            f.write(res["raw"])
                        log(f"{tag} ... {res['req_s']:,.0f} req/s, server core "
                            f"{res['server_cpu_us_per_req']:.1f} µs/req, client "
                            f"{res['client_busy_pct']:.0f}% busy"
                            + (f"  FAILED: {note}" if bad else ""))
    except KeyboardInterrupt:
        log("bench: interrupted; writing what was measured")
        rc = 130
    finally:
        cleanup()
        elapsed = time.time() - t_start
        meta["notes"].append(f"Elapsed {elapsed / 60:.1f} min.")
        write_results(out, runs, unavailable, sizes, meta)
        why = write_chart(out, runs)
        if why:
            log(f"bench: {why}")
            with open(os.path.join(out, "results.md"), "a") as f:
                f.write(f"\n({why})\n")
        shutil.rmtree(work, ignore_errors=True)
    log(f"bench: done in {elapsed / 60:.1f} min: {out}/results.md, runs.csv, chart.png")
    return rc


if __name__ == "__main__":
    sys.exit(main())
