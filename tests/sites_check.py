#!/usr/bin/env python3
"""sites_check.py — the HTTP side of tests/sites.sh: examples/sites.conf's
routes asked as a browser would (Host and SNI per site), over http.client
and ssl.

  sites_check.py example ADDR HTTP_PORT HTTPS_PORT CERTDIR UPSTREAM_STATS_URL
      every route of examples/sites.conf: prints PASS/FAIL lines, exits 1 on
      any FAIL
  sites_check.py answers ADDR HTTP_PORT HTTPS_PORT CERTDIR
      the answers (status, Location, X-Site, Content-Type, body sha256) to
      every route as JSON on stdout: tests/sites.sh compares skiff's with
      nginx's under an equivalent nginx.conf
  sites_check.py served ADDR PORT HOST PATH [--tls CERTDIR] [--expect TEXT]
      one GET; exit 0 when it answers 200 (holding TEXT, if given)
  sites_check.py cert ADDR PORT NAME CERTDIR
      the certificate the server shows for SNI NAME: prints its sha256
  sites_check.py certfile PEM
      the sha256 of the certificate in PEM, as `cert` prints it
  sites_check.py idle ADDR PORT HOST SECONDS
      one GET on a keep-alive connection, then wait up to SECONDS for the
      server to close it: prints "closed after S s" (exit 0) or "open"
  sites_check.py app ADDR PORT
      examples/kv behind `route /kv/ { app; }` with files and return beside
  sites_check.py jsonlines FILE
      every line of FILE is one JSON object with remote_addr, request and
      status: prints how many (exit 1 on any other line)
  sites_check.py compare SKIFF.json NGINX.json
      the routes whose answers differ; exit 1 on any, or on fewer than 10
  sites_check.py directives ADDR UPSTREAM_STATS_URL [ADDR6]
      every directive of the file tests/sites.sh writes for it (default and
      wildcard sites, header add and remove, return, metrics, redirect
      variables, proxy_host upstream, body_on_get allow, two upstreams,
      cache_control, max_body, header_timeout, keepalive_timeout; the proxy's
      upstream options: x_cache, purge_allow, balance, pool, fail_max,
      fail_timeout, connect_timeout); ADDR6: the same listener over IPv6 too
"""
import hashlib
import http.client
import json
import socket
import ssl
import sys
import time

FAILS = 0


def check(name, ok, detail=""):
    global FAILS
    if ok:
        print(f"PASS {name}")
    else:
        FAILS += 1
        print(f"FAIL {name}: {detail}")


def tls_ctx(certdir, name):
    ctx = ssl.create_default_context(cafile=f"{certdir}/{name[0]}.crt")
    ctx.check_hostname = True
    return ctx


def get(addr, port, host, path, method="GET", tls=None, headers=None, body=None):
    """One request on a fresh connection: (status, headers dict lower, body)."""
    conn = http.client.HTTPConnection(addr, port, timeout=10)
    if tls:
        # SNI and the certificate check are for the site's name, the TCP
        # connection for ADDR: what a browser does after DNS.
        sock = socket.create_connection((addr, port), timeout=10)
        conn.sock = tls_ctx(tls, host).wrap_socket(sock, server_hostname=host)
    h = {"Host": f"{host}" if host else None}
    h.update(headers or {})
    conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
    for k, v in h.items():
        if v is not None:
            conn.putheader(k, v)
    conn.endheaders(body)
    r = conn.getresponse()
    body = r.read()
    hd = {k.lower(): v for k, v in r.getheaders()}
    conn.close()
    return r.status, hd, body


def peer_cert(addr, port, name, certdir):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    with socket.create_connection((addr, port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname=name) as t:
            return hashlib.sha256(t.getpeercert(binary_form=True)).hexdigest()


def file_cert(path):
    pem = open(path).read()
    return hashlib.sha256(ssl.PEM_cert_to_DER_cert(pem)).hexdigest()


# The routes of examples/sites.conf: (name, tls?, host, method, path).
ROUTES = [
    ("a.index", False, "a.test", "GET", "/"),
    ("a.index.head", False, "a.test", "HEAD", "/"),
    ("a.file", False, "a.test", "GET", "/new/page.html"),
    ("a.missing", False, "a.test", "GET", "/nope.html"),
    ("a.dir", False, "a.test", "GET", "/new"),
    ("a.old", False, "a.test", "GET", "/old/page.html"),
    ("a.old.query", False, "a.test", "GET", "/old/x/y?q=1"),
    ("a.api", False, "a.test", "GET", "/api/hello"),
    ("a.https.index", True, "a.test", "GET", "/"),
    ("a.https.old", True, "a.test", "GET", "/old/z"),
    ("b.http.redirect", False, "b.test", "GET", "/some/where?x=2"),
    ("b.http.root", False, "b.test", "GET", "/"),
    ("b.https.index", True, "b.test", "GET", "/"),
    ("b.https.missing", True, "b.test", "GET", "/api/hello"),
    ("unknown.http", False, "c.test", "GET", "/"),
    ("unknown.port", False, "a.test:8080", "GET", "/"),
]


def answers(addr, hp, sp, certdir):
    out = {}
    for name, tls, host, method, path in ROUTES:
        st, hd, body = get(addr, sp if tls else hp, host, path, method,
                           certdir if tls else None)
        out[name] = {
            "status": st,
            "location": hd.get("location"),
            "x-site": hd.get("x-site"),
            "content-type": (hd.get("content-type") or "").split(";")[0] if st == 200 else None,
            "body": hashlib.sha256(body).hexdigest() if st == 200 else None,
        }
    return out


def example(addr, hp, sp, certdir, stats_url):
    a = answers(addr, hp, sp, certdir)
    idx_a = open("examples/sites/a/index.html", "rb").read()
    idx_b = open("examples/sites/b/index.html", "rb").read()
    page = open("examples/sites/a/new/page.html", "rb").read()
    sha = lambda b: hashlib.sha256(b).hexdigest()
    check("a.index", a["a.index"]["status"] == 200 and a["a.index"]["body"] == sha(idx_a)
          and a["a.index"]["x-site"] == "a", a["a.index"])
    check("a.index.head", a["a.index.head"]["status"] == 200
          and a["a.index.head"]["x-site"] == "a", a["a.index.head"])
    check("a.file", a["a.file"]["body"] == sha(page), a["a.file"])
    check("a.missing", a["a.missing"]["status"] == 404 and a["a.missing"]["x-site"] == "a",
          a["a.missing"])
    check("a.dir", a["a.dir"]["status"] == 301 and a["a.dir"]["location"].endswith("/new/"),
          a["a.dir"])
    check("a.old", a["a.old"]["status"] == 301 and a["a.old"]["location"] == "/new/page.html"
          and a["a.old"]["x-site"] == "a", a["a.old"])
    check("a.old.query", a["a.old.query"]["location"] == "/new/x/y?q=1", a["a.old.query"])
    check("a.https.index", a["a.https.index"]["body"] == sha(idx_a)
          and a["a.https.index"]["x-site"] == "a", a["a.https.index"])
    check("a.https.old", a["a.https.old"]["location"] == "/new/z", a["a.https.old"])
    check("b.http.redirect", a["b.http.redirect"]["status"] == 301 and
          a["b.http.redirect"]["location"] == f"https://b.test:{sp}/some/where?x=2",
          a["b.http.redirect"])
    check("b.http.root", a["b.http.root"]["location"] == f"https://b.test:{sp}/",
          a["b.http.root"])
    check("b.https.index", a["b.https.index"]["body"] == sha(idx_b)
          and a["b.https.index"]["x-site"] is None, a["b.https.index"])
    check("b.https.no.api", a["b.https.missing"]["status"] == 404, a["b.https.missing"])
    check("unknown.host.404", a["unknown.http"]["status"] == 404, a["unknown.http"])
    check("host.with.port", a["unknown.port"]["status"] == 200, a["unknown.port"])
    # HTTP/1.0 without Host: no site names it
    s = socket.create_connection((addr, hp), timeout=10)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    resp = b""
    while True:
        d = s.recv(65536)
        if not d:
            break
        resp += d
    s.close()
    check("no.host.404", resp.startswith(b"HTTP/1.1 404") or resp.startswith(b"HTTP/1.0 404"),
          resp[:60])
    # SNI: each site's own certificate
    for n in ("a", "b"):
        check(f"sni.{n}", peer_cert(addr, sp, f"{n}.test", certdir) ==
              file_cert(f"{certdir}/{n}.crt"), "another certificate")
    # the API: proxied with the client's Host, cached on the second ask
    st1, h1, b1 = get(addr, hp, "a.test", "/api/cache/k1?max-age=60")
    st2, h2, b2 = get(addr, hp, "a.test", "/api/cache/k1?max-age=60")
    check("api.proxied", st1 == 200 and b1 == b2 and h1.get("x-site") == "a", (st1, h1))
    check("api.cached", h1.get("x-cache") == "MISS" and h2.get("x-cache") == "HIT", (h1, h2))
    log = json.loads(get_url(stats_url))
    reqs = [e for e in log if e["target"].startswith("/api/cache/k1")]
    check("api.upstream.once", len(reqs) == 1, reqs)
    hosts = [v for e in reqs for k, v in e["headers"] if k.lower() == "host"]
    check("api.host.kept", hosts == ["a.test"], hosts)
    st, _, _ = get(addr, hp, "a.test", "/api/hello", headers={"Content-Length": "5"})
    check("api.get.body.refused", st == 400, st)


def raw(addr, port, data, wait=10.0):
    """Send data, read until the server closes (or wait s): (bytes, seconds)."""
    t0 = time.monotonic()
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.settimeout(wait)
    s.connect((addr, port))
    s.sendall(data)
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        pass
    s.close()
    return out, time.monotonic() - t0


def directives(addr, stats_url, addr6=None):
    st, h, b = get(addr, 8081, "zzz.unknown", "/")
    check("default.site", st == 200 and h.get("x-d") == "d" and b == b"d index\n", (st, h, b))
    check("header.removed", "server" not in h, h)
    check("cache_control", h.get("cache-control") == "public, max-age=60", h)
    st, h, b = get(addr, 8081, "x.y.w.test", "/")
    check("wildcard.site", st == 200 and h.get("x-d") == "d", (st, h))
    st, h, b = get(addr, 8082, "e.test", "/")
    check("second.site", st == 200 and b == b"e\n" and h.get("x-d") is None, (st, h, b))
    st, h, b = get(addr, 8081, "e.test", "/")
    check("site.per.listener", h.get("x-d") == "d", (st, h))
    st, h, b = get(addr, 8081, "d.test", "/health")
    check("return.body", st == 200 and b == b"ok\n" and
          h.get("content-type", "").startswith("text/plain"), (st, h, b))
    st, h, b = get(addr, 8081, "d.test", "/health/x")
    check("route.exact.only", st == 404 and h.get("x-d") == "d", (st, b[:40]))
    st, h, b = get(addr, 8081, "d.test", "/gone")
    check("return.410", st == 410 and b == b"", (st, b))
    st, h, b = get(addr, 8081, "d.test", "/empty")
    check("return.204", st == 204, st)
    st, h, b = get(addr, 8081, "d.test", "/metrics")
    check("metrics", st == 200 and b"skiff_sites_requests_total" in b, (st, b[:80]))
    st, h, b = get(addr, 8081, "d.test:8081", "/r/a/b?c=1")
    check("redirect.vars", st == 308 and h.get("location") == "https://d.test/x/a/b?c=1", (st, h))
    seen = set()
    for i in range(6):
        st, h, b = get(addr, 8081, "d.test", f"/up/p{i}")
        seen.add(h.get("x-upstream"))
    check("proxy.two.upstreams", len(seen) == 2 and None not in seen, seen)
    check("route.header.added", h.get("x-r") == "up", h)
    check("route.header.removed.late", "via" not in h, h)
    log = json.loads(get_url(stats_url))["log"]
    hosts = {v for e in log for k, v in e["headers"] if k.lower() == "host"
             and e["target"].startswith("/up/")}
    check("proxy_host.upstream", hosts and all(x.startswith("127.0.0.1:") or
                                               x.startswith("198.18.0.1:") for x in hosts), hosts)
    st, h, b = get(addr, 8081, "d.test", "/up/gb", headers={"Content-Length": "3"}, body=b"abc")
    check("body_on_get.allow", st == 200, st)
    st, h, b = get(addr, 8081, "d.test", "/echo/x", "POST", headers={"Content-Length": "2048"},
                   body=b"x" * 2048)
    check("max_body.413", st == 413, st)
    out, t = raw(addr, 8081, b"GET / HTTP/1.1\r\nHost: d.test\r\n")
    check("header_timeout", out.startswith(b"HTTP/1.1 408") and 1.5 < t < 6, (out[:20], t))
    out, t = raw(addr, 8081, b"GET /health HTTP/1.1\r\nHost: d.test\r\n\r\n")
    check("keepalive_timeout", out.startswith(b"HTTP/1.1 200") and 2.5 < t < 8, (out[:20], t))
    if addr6:
        st, h, b = get(addr6, 8081, "d.test", "/health")
        check("listen.any.ipv6", st == 200 and b == b"ok\n", (st, b))
    proxy_options(addr, stats_url)


def proxy_options(addr, stats_url):
    """The proxy's upstream options (`skiff proxy`'s flags as directives,
    tests/sites.sh check_directives): /cache/ caches with `x_cache off;
    purge_allow none;`, /api/cache/ caches with neither (the defaults:
    X-Cache, PURGE from loopback only); /fail/ has `balance least; pool 0;
    fail_max 1; fail_timeout 30s;` and the timeouts, over an upstream that
    resets every request (port 9092) before the live one.  Each check's
    requests go on one keep-alive connection, so one worker (one proxy,
    one cache) answers them all, whatever `workers` says."""
    rst_url = stats_url.replace(":9090/", ":9092/")

    def asked(url, prefix):
        return [e for e in json.loads(get_url(url))["log"] if e["target"].startswith(prefix)]

    c = KeepAlive(addr, 8081, "d.test")
    t = "/cache/xc?max-age=60"
    st, h, b = c.get(t)
    st2, h2, b2 = c.get(t)
    n = len(asked(stats_url, t))
    check("x_cache.off", st == 200 and st2 == 200 and b == b2 and "x-cache" not in h and
          "x-cache" not in h2 and n == 1, (st, st2, h2, n))
    st, h, b = c.get(t, "PURGE")
    check("purge_allow.none", st == 405, (st, b))
    c.close()
    c = KeepAlive(addr, 8081, "d.test")
    t = "/api/cache/xc?max-age=60"
    st, h, b = c.get(t)
    st2, h2, b2 = c.get(t)
    check("x_cache.default", h.get("x-cache") == "MISS" and h2.get("x-cache") == "HIT", (h, h2))
    # This client is 127.0.0.1 on linux (loopback: allowed), 198.18.0.1 on the TAP.
    st, h, b = c.get(t, "PURGE")
    want = 200 if addr.startswith("127.") else 403
    check("purge_allow.default", st == want, (st, want, b))
    c.close()
    # fail_max 1: the resetting upstream is tried once, then down for
    # fail_timeout (30 s); each request retried on the live one.  pool 0:
    # every request on a new upstream connection.
    c = KeepAlive(addr, 8081, "d.test")
    sts = [c.get(f"/fail/p{i}") for i in range(6)]
    c.close()
    ok = [(st, h.get("x-upstream")) for st, h, b in sts]
    tried = len(asked(rst_url, "/fail/"))
    check("fail_max", all(x == (200, "api") for x in ok) and tried == 1, (ok, tried))
    conns = {e["conn"] for e in asked(stats_url, "/fail/")}
    check("pool.0", len(conns) == 6, conns)


class KeepAlive:
    """Requests one after another on one connection (http.client's; it
    would open a new one after a close: checked, so a check never spans
    two workers unseen)."""

    def __init__(self, addr, port, host):
        self.c = http.client.HTTPConnection(addr, port, timeout=10)
        self.host = host
        self.sock = None

    def get(self, path, method="GET"):
        self.c.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        self.c.putheader("Host", self.host)
        self.c.endheaders()
        if self.sock is None:
            self.sock = self.c.sock
        elif self.c.sock is not self.sock:
            raise RuntimeError("the keep-alive connection was closed")
        r = self.c.getresponse()
        body = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, body

    def close(self):
        self.c.close()


def app(addr, port):
    """examples/kv behind `route /kv/ { app; }` (tests/sites.sh check_app):
    the application's own routes on the whole path, beside the file's
    files and return routes, with the site's header line."""
    st, h, b = get(addr, port, "kv.test", "/kv/a", method="PUT", body=b"hello",
                   headers={"Content-Length": "5"})
    check("app.put", st == 201 and h.get("x-s") == "kv", (st, h, b))
    st, h, b = get(addr, port, "kv.test", "/kv/a")
    check("app.get", st == 200 and b == b"hello" and h.get("x-s") == "kv", (st, h, b))
    # header_area: 1.4 KB of route header lines.  On the default 1 KiB
    # area the engine's 500, never an answer without the lines; on the
    # listener (port + 2) where a route asks 4k, the answer with them.
    big = "b" * 700
    st, h, b = get(addr, port, "kv.test", "/bighdr")
    check("header_area.default.500", st == 500 and "x-big1" not in h and "x-big2" not in h,
          (st, list(h)))
    st, h, b = get(addr, port + 2, "big.test", "/bighdr")
    check("header_area.4k", st == 200 and h.get("x-big1") == big and h.get("x-big2") == big
          and b == b"b\n", (st, list(h)))
    st, h, b = get(addr, port, "kv.test", "/kv/")
    check("app.list", st == 200 and b"a" in b, (st, b))
    st, h, b = get(addr, port, "kv.test", "/kv/a", method="POST", body=b"x",
                   headers={"Content-Length": "1"})
    check("app.405", st == 405 and h.get("allow") == "GET, PUT, DELETE", (st, h))
    st, h, b = get(addr, port, "kv.test", "/kv/nope")
    check("app.404", st == 404, (st, b))
    st, h, b = get(addr, port, "kv.test", "/kv/a", method="DELETE")
    st2, _, _ = get(addr, port, "kv.test", "/kv/a")
    check("app.delete", st in (200, 204) and st2 == 404, (st, st2))
    st, h, b = get(addr, port, "kv.test", "/")
    check("app.files.beside", st == 200 and b == b"www index\n" and h.get("x-s") == "kv", (st, b))
    st, h, b = get(addr, port, "kv.test", "/health")
    check("app.return.beside", st == 200 and b == b"ok\n", (st, b))


def get_url(url):
    host, rest = url.split("//", 1)[1].split("/", 1)
    a, p = host.rsplit(":", 1)
    c = http.client.HTTPConnection(a, int(p), timeout=10)
    c.request("GET", "/" + rest)
    return c.getresponse().read()


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) >= 2 else 2
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "example":
        example(args[0], int(args[1]), int(args[2]), args[3], args[4])
        return 1 if FAILS else 0
    if cmd == "answers":
        json.dump(answers(args[0], int(args[1]), int(args[2]), args[3]), sys.stdout,
                  indent=1, sort_keys=True)
        return 0
    if cmd == "directives":
        directives(args[0], args[1], args[2] if len(args) > 2 else None)
        return 1 if FAILS else 0
    if cmd == "served":
        tls = args[args.index("--tls") + 1] if "--tls" in args else None
        want = args[args.index("--expect") + 1] if "--expect" in args else None
        try:
            st, _, body = get(args[0], int(args[1]), args[2], args[3], tls=tls)
        except OSError:
            return 1
        return 0 if st == 200 and (want is None or want.encode() in body) else 1
    if cmd == "cert":
        print(peer_cert(args[0], int(args[1]), args[2], args[3]))
        return 0
    if cmd == "idle":
        c = http.client.HTTPConnection(args[0], int(args[1]), timeout=10)
        c.request("GET", "/", headers={"Host": args[2]})
        c.getresponse().read()
        print("ready", flush=True)
        c.sock.settimeout(float(args[3]))
        t0 = time.monotonic()
        try:
            gone = c.sock.recv(1) == b""
        except (socket.timeout, ConnectionResetError):
            gone = False
        print(f"closed after {time.monotonic() - t0:.1f} s" if gone else "open")
        return 0 if gone else 1
    if cmd == "app":
        app(args[0], int(args[1]))
        return 1 if FAILS else 0
    if cmd == "jsonlines":
        n = 0
        for line in open(args[0]):
            rec = json.loads(line)
            if not all(k in rec for k in ("remote_addr", "request", "status")):
                print(f"not an access record: {line.strip()}", file=sys.stderr)
                return 1
            n += 1
        print(n)
        return 0
    if cmd == "certfile":
        print(file_cert(args[0]))
        return 0
    if cmd == "compare":
        a, b = (json.load(open(p)) for p in args[0:2])
        bad = [(k, a[k], b.get(k)) for k in a if a[k] != b.get(k)]
        for k, x, y in bad:
            print(f"  {k}: skiff {x} nginx {y}")
        print(f"{len(a)} routes compared")
        return 1 if bad or len(a) < 10 else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
