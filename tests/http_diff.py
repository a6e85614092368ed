#!/usr/bin/env python3
"""http_diff.py — the differential test of skiff's static file semantics
against nginx (issue 13 item 4), driven by tests/http_diff.sh.

  tree DIR                       build the test site in DIR (fixed contents
                                 and times, so two runs build the same tree)
  nginx-conf DIR ROOT PORT       write nginx.conf for ROOT on 127.0.0.1:PORT
                                 into DIR (no root needed: every path is in
                                 DIR, master process off, no daemon)
  compare NGINX SKIFF ROOT       HOST:PORT each: send every request of the
                                 plan to both, compare, print one line per
                                 difference and a summary; exit 0 only if
                                 every comparison held

What is compared, per request (one connection each, HTTP/1.1):
  - the status;
  - for 200 and 206: the media type of Content-Type (parameters such as
    charset are skiff's choice: it labels text UTF-8), Content-Length
    (multipart: each server's own must equal its body's length, the
    boundaries differ), Content-Range, Content-Encoding, and the body
    (multipart: part by part, each part's type, range and bytes);
  - 416: Content-Range; 301: the path of Location (nginx sends it
    absolute unless told otherwise); every answer: whether Vary names
    Accept-Encoding;
  - validators by behaviour, not by form: whether ETag and Last-Modified
    are present, and each server is sent ITS OWN validators in the
    conditional requests (so a server whose ETag form differed would still
    be compared on what it does with it).  Both happen to use the same
    "mtime-len" hex form here.
  - error bodies are each server's own words (nginx: HTML): status only.

Where nginx's behaviour is a choice RFC 9110 makes differently (or leaves
open and skiff chose otherwise), the request carries `skiff=STATUS` and a
reason: skiff must answer that, nginx's answer is printed for the record
but not compared.  The reasons, in full:
  E1 dot-segments ("/sub/../index.html", "%2e%2e"): nginx merges them
     (or answers 400 above the root); skiff refuses any "." or ".."
     segment with 404 (http/target.h: "not here", never "there").
  E2 a method we do not know (a valid token): skiff 501 (RFC 9110 15.6.2),
     nginx 405.  POST to a missing file: nginx looks the file up first
     (404), skiff the method (405).
  E3 RFC 9110 13.2.2 precedence: If-Modified-Since is ignored when
     If-None-Match is present, If-Unmodified-Since when If-Match is;
     nginx evaluates both.
  E4 Range on HEAD: ranges are defined for GET only (14.2: MUST ignore
     for other methods), so skiff answers 200; nginx 206.
  E5 an invalid If-Unmodified-Since date: MUST be ignored (13.1.4);
     nginx answers 412.
  E6 a Range number too large for nginx's off_t: nginx 416; skiff reads
     1*DIGIT of any length (a last-pos past the end is clipped, 14.1.2).
  E7 Allow on 405 (15.5.6: MUST): skiff sends "GET, HEAD", nginx none;
     checked on skiff only.
  E8 Content-Type by extension where the registry moved on from nginx
     1.22's mime.types: .js is text/javascript (RFC 9239), .gz
     application/gzip (RFC 6713; nginx: application/octet-stream); in
     multipart parts too.
  E9 Range on an empty file: both ignore a range from 0 (200); other
     ranges are 416 on both.  (Not an exception: listed because it looks
     like one.)
Not in the plan (each server's own, no common ground): .br siblings
(stock nginx has no brotli_static), a .gz whose base file is missing
(nginx serves it, skiff does not know the name), Accept-Encoding "*"
(skiff reads it as allowing gzip, as 12.5.3 says; nginx does not).
"""
import gzip
import http.client
import os
import random
import socket
import sys
import urllib.parse

MTIME = 1700000000       # 2023-11-14 22:13:20 UTC: the files' times
MTIME_GZ = MTIME + 3600  # the .gz siblings are newer (their own validators)


def build_tree(root):
    rnd = random.Random(13)
    files = {
        "index.html": b"<!doctype html><title>skiff</title><h1>the root</h1>\n",
        "style.css": b"body { margin: 0; color: #223; }\n" * 40,
        "app.js": b"console.log('skiff');\n" * 60,
        "data.json": b'{"a": [1, 2, 3], "b": "text"}\n',
        "notes.txt": b"".join(b"line %d of the notes\n" % i for i in range(300)),
        "empty.txt": b"",
        "one.txt": b"x",
        "bin.dat": bytes(rnd.getrandbits(8) for _ in range(70000)),
        "img.png": b"\x89PNG\r\n\x1a\n" + bytes(rnd.getrandbits(8) for _ in range(3000)),
        "README": b"no extension\n",
        "odd name (1) & more.txt": b"spaces, parens and an ampersand\n",
        "percent%41.txt": b"a literal percent sign in the name\n",
        "caf\u00e9.html": "<p>caf\u00e9, a UTF-8 name</p>\n".encode(),
        "a+b;c=d.txt": b"sub-delims in the name\n",
        "sub/index.html": b"<h1>sub</h1>\n",
        "sub/page.html": b"<p>a page in sub</p>\n" * 20,
        "sub/deep/leaf.txt": b"a leaf two levels down\n",
        "sub/deep/noindex/only.txt": b"a directory without an index\n",
        "sub/deep/style.css": b"p { color: red }\n" * 100,
    }
    gz = ["style.css", "app.js", "notes.txt", "sub/deep/style.css", "index.html"]
    for name, data in files.items():
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, (MTIME, MTIME))
    for name in gz:
        p = os.path.join(root, name) + ".gz"
        with open(os.path.join(root, name), "rb") as f:
            data = gzip.compress(f.read(), mtime=0)
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, (MTIME_GZ, MTIME_GZ))


def nginx_conf(d, root, port):
    tmp = os.path.join(d, "tmp")
    os.makedirs(tmp, exist_ok=True)
    conf = f"""# generated by tests/http_diff.py: nginx on the same tree as skiff
daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log off;
    server_tokens off;
    client_body_temp_path {tmp}/body;
    proxy_temp_path {tmp}/proxy;
    fastcgi_temp_path {tmp}/fastcgi;
    uwsgi_temp_path {tmp}/uwsgi;
    scgi_temp_path {tmp}/scgi;
    # skiff's choices, set where nginx has a knob for them:
    gzip_static on;             # serve file.gz beside file
    gzip_vary on;               # ... with Vary: Accept-Encoding
    if_modified_since before;   # RFC 9110 13.1.3 (nginx's default: exact)
    max_ranges 8;               # http/range.h HTTP_MAX_RANGES
    absolute_redirect off;      # Location: /dir/ (compared by path anyway)
    server {{
        listen 127.0.0.1:{port};
        root {root};
        index index.html;
    }}
}}
"""
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(conf)


# ---- requests -------------------------------------------------------

class Resp:
    def __init__(self, status, headers, body):
        self.status = status
        self.h = headers  # lower-case name -> value (last wins; we send no dups)
        self.body = body

    def get(self, name, default=None):
        return self.h.get(name.lower(), default)


def request(hostport, method, target, headers=()):
    host, port = hostport.rsplit(":", 1)
    # "[v6]:port": http.client wants the address bare once a port is given.
    c = http.client.HTTPConnection(host.strip("[]"), int(port), timeout=10)
    try:
        c.putrequest(method, target, skip_host=True, skip_accept_encoding=True)
        c.putheader("Host", "test")
        for k, v in headers:
            c.putheader(k, v)
        c.endheaders()
        r = c.getresponse()
        body = r.read()
        h = {k.lower(): v for k, v in r.getheaders()}
        return Resp(r.status, h, body)
    finally:
        c.close()


def media(ct):
    return (ct or "").split(";")[0].strip().lower()


def multipart_parts(resp):
    """[(media type, content-range, bytes)] of a multipart/byteranges body."""
    ct = resp.get("content-type", "")
    b = None
    for p in ct.split(";"):
        p = p.strip()
        if p.startswith("boundary="):
            b = p[9:].strip('"').encode()
    if not b:
        return None
    parts = []
    for chunk in resp.body.split(b"--" + b)[1:]:
        if chunk.startswith(b"--"):
            break
        head, _, data = chunk.partition(b"\r\n\r\n")
        if data.endswith(b"\r\n"):
            data = data[:-2]
        fields = {}
        for line in head.split(b"\r\n"):
            if b":" in line:
                k, v = line.split(b":", 1)
                fields[k.strip().lower().decode()] = v.strip().decode()
        parts.append((media(fields.get("content-type")), fields.get("content-range"), data))
    return parts


def loc_path(v):
    if v is None:
        return None
    u = urllib.parse.urlsplit(v)
    return urllib.parse.unquote(u.path) + ("?" + u.query if u.query else "")


def vary_ae(r):
    return "accept-encoding" in (r.get("vary") or "").lower()


# ---- the plan -------------------------------------------------------

def q(path):
    return urllib.parse.quote(path, safe="/")


def build_plan(root):
    """[(name, method, target, headers, skiff_status_or_None, reason)].
    Headers may hold callables of the server's own 200 answer (its
    validators): they are filled per server."""
    plan = []

    def add(name, method, target, headers=(), skiff=None, why=None):
        plan.append((name, method, target, list(headers), skiff, why))

    etag = lambda r: r.get("etag") or '"none"'          # noqa: E731
    lm = lambda r: r.get("last-modified") or "x"        # noqa: E731
    http_date = lambda t: __import__("email.utils").utils.formatdate(t, usegmt=True)  # noqa: E731

    files = ["index.html", "style.css", "app.js", "data.json", "notes.txt", "one.txt",
             "bin.dat", "img.png", "README", "sub/page.html", "sub/deep/leaf.txt",
             "sub/deep/style.css", "caf\u00e9.html", "odd name (1) & more.txt"]
    sizes = {f: os.path.getsize(os.path.join(root, f)) for f in files + ["empty.txt"]}
    before, after = http_date(MTIME - 86400), http_date(MTIME + 86400 * 2)
    for f in files:
        t, n = "/" + q(f), sizes[f]
        add(f"get {f}", "GET", t)
        add(f"head {f}", "HEAD", t)
        add(f"inm-own {f}", "GET", t, [("If-None-Match", etag)])
        add(f"inm-weak {f}", "GET", t, [("If-None-Match", lambda r: "W/" + etag(r))])
        add(f"inm-list {f}", "GET", t, [("If-None-Match", lambda r: '"a", ' + etag(r))])
        add(f"inm-star {f}", "GET", t, [("If-None-Match", "*")])
        add(f"inm-other {f}", "GET", t, [("If-None-Match", '"nope"')])
        add(f"ims-same {f}", "GET", t, [("If-Modified-Since", lm)])
        add(f"ims-before {f}", "GET", t, [("If-Modified-Since", before)])
        add(f"ims-after {f}", "GET", t, [("If-Modified-Since", after)])
        add(f"ims-bad {f}", "GET", t, [("If-Modified-Since", "not a date")])
        add(f"im-own {f}", "GET", t, [("If-Match", etag)])
        add(f"im-other {f}", "GET", t, [("If-Match", '"nope"')])
        add(f"ius-before {f}", "GET", t, [("If-Unmodified-Since", before)])
        add(f"ius-same {f}", "GET", t, [("If-Unmodified-Since", lm)])
        add(f"head-inm {f}", "HEAD", t, [("If-None-Match", etag)])
        add(f"range-first {f}", "GET", t, [("Range", "bytes=0-0")])
        add(f"range-suffix {f}", "GET", t, [("Range", "bytes=-5")])
        add(f"range-open {f}", "GET", t, [("Range", f"bytes={n // 2}-")])
        add(f"range-clip {f}", "GET", t, [("Range", "bytes=0-99999999")])
        add(f"range-last {f}", "GET", t, [("Range", f"bytes={n - 1}-")])
        add(f"range-unsat {f}", "GET", t, [("Range", f"bytes={n}-")])
        add(f"range-unit {f}", "GET", t, [("Range", "items=0-1")])
        add(f"range-bad {f}", "GET", t, [("Range", "bytes=x-y")])
        add(f"ifrange-etag {f}", "GET", t, [("Range", "bytes=0-0"), ("If-Range", etag)])
        add(f"ifrange-old {f}", "GET", t, [("Range", "bytes=0-0"), ("If-Range", '"old"')])
        add(f"ifrange-date {f}", "GET", t, [("Range", "bytes=0-0"), ("If-Range", lm)])
        add(f"ifrange-olddate {f}", "GET", t, [("Range", "bytes=0-0"), ("If-Range", before)])
        if n >= 12:
            add(f"multi {f}", "GET", t, [("Range", "bytes=0-1,4-6")])
            add(f"multi-suffix {f}", "GET", t, [("Range", "bytes=-3,0-2")])
            add(f"multi-three {f}", "GET", t, [("Range", "bytes=0-0, 2-2, 4-4")])
            add(f"multi-one-ok {f}", "GET", t, [("Range", f"bytes=2-3,{n + 5}-")])
            add(f"multi-overlap {f}", "GET", t, [("Range", f"bytes=0-{n - 1},0-{n - 1}")])
            add(f"multi-nine {f}", "GET", t,
                [("Range", "bytes=" + ",".join(f"{i}-{i}" for i in range(9)))])
        add(f"ae-gzip {f}", "GET", t, [("Accept-Encoding", "gzip")])
        add(f"ae-q0 {f}", "GET", t, [("Accept-Encoding", "gzip;q=0")])
        add(f"ae-list {f}", "GET", t, [("Accept-Encoding", "deflate, gzip;q=0.5")])
        add(f"ae-gzip-range {f}", "GET", t, [("Accept-Encoding", "gzip"), ("Range", "bytes=1-3")])
        add(f"ae-gzip-head {f}", "HEAD", t, [("Accept-Encoding", "gzip")])
        # Documented exceptions (see the top of this file).
        add(f"E3 inm+ims {f}", "GET", t, [("If-None-Match", etag), ("If-Modified-Since", before)],
            304, "E3")
        add(f"E3 im+ius {f}", "GET", t, [("If-Match", etag), ("If-Unmodified-Since", before)],
            200, "E3")
        add(f"E4 head-range {f}", "HEAD", t, [("Range", "bytes=0-0")], 200, "E4")
        add(f"E5 ius-bad {f}", "GET", t, [("If-Unmodified-Since", "not a date")], 200, "E5")
        add(f"E6 range-huge {f}", "GET", t, [("Range", "bytes=0-99999999999999999999")], 206,
            "E6")
    # The empty file.
    for rg in ["bytes=0-", "bytes=0-0", "bytes=-1", "bytes=1-", "bytes=0-1,2-3"]:
        add(f"empty {rg}", "GET", "/empty.txt", [("Range", rg)])
    add("empty get", "GET", "/empty.txt")
    add("empty head", "HEAD", "/empty.txt")
    # Directories.
    for d in ["sub", "sub/deep", "sub/deep/noindex"]:
        add(f"dir-noslash {d}", "GET", "/" + d)
        add(f"dir-noslash-q {d}", "GET", "/" + d + "?a=1&b=%20")
        add(f"dir-slash {d}", "GET", "/" + d + "/")
        add(f"dir-head {d}", "HEAD", "/" + d + "/")
    add("root", "GET", "/")
    add("root-head", "HEAD", "/")
    add("root-gzip", "GET", "/", [("Accept-Encoding", "gzip")])
    add("root-inm", "GET", "/", [("If-None-Match", etag)])
    add("index-direct", "GET", "/index.html")
    add("sub-index-direct", "GET", "/sub/index.html")
    add("file-slash", "GET", "/one.txt/")
    # Escapes and names.
    add("escaped-letters", "GET", "/%6fne.txt")
    add("escaped-slash", "GET", "/sub%2fpage.html")
    add("percent-name", "GET", "/percent%2541.txt")
    add("plus-semicolon", "GET", "/a+b;c=d.txt")
    add("plus-escaped", "GET", "/a%2Bb%3Bc%3Dd.txt")
    add("utf8-raw-escape", "GET", "/caf%C3%A9.html")
    add("query", "GET", "/one.txt?x=1&y=%zz")
    add("space-escaped", "GET", "/odd%20name%20%281%29%20%26%20more.txt")
    add("gz-direct", "GET", "/style.css.gz")
    add("gz-direct-ae", "GET", "/style.css.gz", [("Accept-Encoding", "gzip")])
    add("hidden", "GET", "/.hidden")
    add("E1 dotdot", "GET", "/sub/../index.html", skiff=404, why="E1")
    add("E1 dot", "GET", "/./index.html", skiff=404, why="E1")
    add("E1 dotdot-escaped", "GET", "/sub/%2e%2e/index.html", skiff=404, why="E1")
    # Missing.
    for m in ["/nope", "/nope.html", "/sub/nope", "/sub/deep/nope/", "/index.html/x",
              "/README.txt", "/Index.html"]:
        add(f"missing {m}", "GET", m)
        add(f"missing-head {m}", "HEAD", m)
    # Methods.
    for m in ["POST", "PUT", "DELETE", "OPTIONS", "PATCH"]:
        add(f"method {m}", m, "/index.html")
    add("E2 method unknown", "FROB", "/index.html", skiff=501, why="E2")
    add("E2 post missing", "POST", "/nope", skiff=405, why="E2")
    return plan


# ---- compare --------------------------------------------------------

# E8: media types where skiff's table (http/mime.c) differs from nginx's.
MIME_DIFF = {".js": ("application/javascript", "text/javascript"),
             ".gz": ("application/octet-stream", "application/gzip")}  # RFC 6713


def compare(ngx, sk, root):
    plan = build_plan(root)
    own = {}  # (server, target) -> its plain 200 answer, for its validators
    fails, done, exceptions = [], 0, 0
    seen = {}  # reason -> {(nginx status, skiff status): count}

    def fill(server, method, target, headers):
        out = []
        for k, v in headers:
            if callable(v):
                key = (server, target)
                if key not in own:
                    own[key] = request(server, "GET", target)
                v = v(own[key])
            out.append((k, v))
        return out

    for name, method, target, headers, skiff_status, why in plan:
        a = request(ngx, method, target, fill(ngx, method, target, headers))
        b = request(sk, method, target, fill(sk, method, target, headers))
        done += 1
        why_not = []
        if skiff_status is not None:
            exceptions += 1
            k = (a.status, b.status)
            seen.setdefault(why, {})[k] = seen.setdefault(why, {}).get(k, 0) + 1
            if b.status != skiff_status:
                why_not.append(f"skiff {b.status}, wanted {skiff_status} ({why}; nginx {a.status})")
            if why_not:
                fails.append((name, why_not))
            continue
        if a.status != b.status:
            why_not.append(f"status nginx {a.status} skiff {b.status}")
        else:
            s = a.status
            if vary_ae(a) != vary_ae(b):
                why_not.append(f"Vary nginx {a.get('vary')!r} skiff {b.get('vary')!r}")
            if s in (200, 206, 304):
                for v in ("etag", "last-modified"):
                    if (a.get(v) is None) != (b.get(v) is None):
                        why_not.append(f"{v} nginx {a.get(v)!r} skiff {b.get(v)!r}")
            if s in (200, 206):
                ma, mb = media(a.get("content-type")), media(b.get("content-type"))
                ext = os.path.splitext(urllib.parse.unquote(target.split("?")[0]))[1]
                if ext in MIME_DIFF and (ma, mb) == MIME_DIFF[ext]:
                    pass  # E8
                elif ma != mb:
                    why_not.append(f"Content-Type nginx {ma!r} skiff {mb!r}")
                for h in ("content-encoding",):
                    if a.get(h) != b.get(h):
                        why_not.append(f"{h} nginx {a.get(h)!r} skiff {b.get(h)!r}")
                multi = ma.startswith("multipart/")
                if not multi:
                    for h in ("content-length", "content-range"):
                        if a.get(h) != b.get(h):
                            why_not.append(f"{h} nginx {a.get(h)!r} skiff {b.get(h)!r}")
                    if a.body != b.body:
                        why_not.append(f"body differs ({len(a.body)} vs {len(b.body)} bytes)")
                else:
                    pa, pb = multipart_parts(a), multipart_parts(b)
                    if ext in MIME_DIFF and pa:
                        pa = [(MIME_DIFF[ext][1] if p[0] == MIME_DIFF[ext][0] else p[0],) + p[1:]
                              for p in pa]
                    if pa != pb:
                        why_not.append(f"parts differ: nginx {pa and [(p[0], p[1], len(p[2])) for p in pa]} "
                                       f"skiff {pb and [(p[0], p[1], len(p[2])) for p in pb]}")
                    for r, who in ((a, "nginx"), (b, "skiff")):
                        if method == "GET" and int(r.get("content-length", "-1")) != len(r.body):
                            why_not.append(f"{who} multipart length {r.get('content-length')} "
                                           f"!= body {len(r.body)}")
                if method == "HEAD" and (a.body or b.body):
                    why_not.append("HEAD with a body")
            if s == 304 and (a.body or b.body or b.get("content-length")):
                why_not.append(f"304 with a body or length (skiff {b.get('content-length')!r})")
            if s == 416 and a.get("content-range") != b.get("content-range"):
                why_not.append(f"Content-Range nginx {a.get('content-range')!r} "
                               f"skiff {b.get('content-range')!r}")
            if s == 301 and loc_path(a.get("location")) != loc_path(b.get("location")):
                why_not.append(f"Location nginx {a.get('location')!r} skiff {b.get('location')!r}")
            if s == 405 and b.get("allow") != "GET, HEAD":  # E7
                why_not.append(f"skiff Allow {b.get('allow')!r}")
        if why_not:
            fails.append((name, why_not))
    for why in sorted(seen):
        print(f"exception {why}: " + ", ".join(f"nginx {n} skiff {k} x{c}"
                                              for (n, k), c in sorted(seen[why].items())))
    for name, why_not in fails:
        print(f"differ {name}: " + "; ".join(why_not))
    print(f"compared {done} requests ({exceptions} documented exceptions checked on skiff "
          f"alone): {done - len(fails)} agree, {len(fails)} differ")
    return 0 if not fails and done >= 200 else 1


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "tree":
        build_tree(sys.argv[2])
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "nginx-conf":
        nginx_conf(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "compare":
        socket.setdefaulttimeout(10)
        return compare(sys.argv[2], sys.argv[3], sys.argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
