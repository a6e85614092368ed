#!/usr/bin/env python3
"""proxy_upstream.py — an origin server for tests/proxy.sh that counts and
records what reaches it, and misbehaves on request.

  proxy_upstream.py PORT NAME [--reset-all] [--ignore-get-body] [--addr A]

A small HTTP/1.1 server on raw sockets (one thread per connection), so the
framing of each answer is exactly what the test asks for, wrong on purpose
where that is the point.  Every request it reads is logged (method, target,
the header lines, the body's length and sha256, the connection number);
GET /_stats answers the log as JSON and /_reset clears it (neither is
logged: the test asks them directly, not through the proxy).

Paths: /hello  /echo (the body back)  /big?n=N  /chunked?n=N  /close?n=N
(no length: ends at close)  /stall (never answers)  /die (promises 100000
bytes, sends 1000, closes)  /ambig (Content-Length and Transfer-Encoding)
/ambig2 (two Content-Lengths)  /hop (hop-by-hop fields in the answer)
/304  /continue (a 100 first)  /cache/...?max-age=N (fresh for N s; /api/cache/... too, for a proxy
route at /api/)  /rev
(max-age=0 with an ETag; 304 to If-None-Match: "r1")  /slowcache (2 s,
then max-age=60)  /nostore  /dated?ago=N&max-age=M (a Date N s in the past:
the proxy's clock decides the Age)  anything else: 200 "NAME PATH".
--reset-all: every request is read, logged, and its connection closed
without a byte (an upstream failing before any response byte).
--ignore-get-body: a body on GET, HEAD, DELETE, OPTIONS or TRACE is not
read, as Python's http.server and many frameworks do: its bytes are parsed
as the next request on the connection (what a proxy that forwards such a
body lets through: a smuggled request).
"""
import email.utils
import hashlib
import json
import socket
import sys
import threading
import time

LOCK = threading.Lock()
LOG = []
CONNS = [0]
NAME = "up"
RESET_ALL = False
IGNORE_GET_BODY = False
NO_BODY_METHODS = ("GET", "HEAD", "DELETE", "OPTIONS", "TRACE")


def pattern(n):
    """Deterministic bytes: the client computes the same sha256."""
    block = hashlib.sha256(b"skiff").digest() * 2048  # 64 KiB
    out = bytearray()
    while len(out) < n:
        out += block[: n - len(out)]
    return bytes(out)


def read_line(f):
    line = f.readline(65537)
    if not line:
        raise EOFError
    return line


def read_request(f):
    line = read_line(f)
    while line in (b"\r\n", b"\n"):
        line = read_line(f)
    method, target, _ver = line.decode("latin-1").rstrip("\r\n").split(" ", 2)
    headers = []
    while True:
        h = read_line(f)
        if h in (b"\r\n", b"\n"):
            break
        k, _, v = h.decode("latin-1").rstrip("\r\n").partition(":")
        headers.append((k, v.strip()))
    hd = {k.lower(): v for k, v in headers}
    body = bytearray()  # += on bytes is quadratic: a 32 MiB body would stall for seconds
    if IGNORE_GET_BODY and method in NO_BODY_METHODS:
        pass  # the body's bytes stay for the next read_request
    elif hd.get("transfer-encoding", "").lower() == "chunked":
        while True:
            size = int(read_line(f).split(b";")[0].strip(), 16)
            if size == 0:
                while read_line(f) not in (b"\r\n", b"\n"):
                    pass
                break
            body += f.read(size)
            read_line(f)
    elif "content-length" in hd:
        body = f.read(int(hd["content-length"]))
    return method, target, headers, bytes(body)


def send(conn, data):
    conn.sendall(data)


def answer(conn, method, target, headers, body):
    path, _, query = target.partition("?")
    q = dict(p.split("=", 1) for p in query.split("&") if "=" in p)
    n = int(q.get("n", "0"))
    head_only = method == "HEAD"
    xu = "X-Upstream: %s\r\n" % NAME

    def plain(status, data, extra=""):
        h = "HTTP/1.1 %s\r\nContent-Length: %d\r\n%s%s\r\n" % (status, len(data), xu, extra)
        send(conn, h.encode() + (b"" if head_only else data))

    if path == "/echo":
        plain("200 OK", body)
    elif path == "/big":
        plain("200 OK", pattern(n))
    elif path == "/chunked":
        data = pattern(n)
        send(conn, ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n%s\r\n" % xu).encode())
        if not head_only:
            for i in range(0, len(data), 10000):
                piece = data[i:i + 10000]
                send(conn, b"%x\r\n%s\r\n" % (len(piece), piece))
            send(conn, b"0\r\n\r\n")
    elif path == "/close":
        send(conn, ("HTTP/1.1 200 OK\r\nConnection: close\r\n%s\r\n" % xu).encode() + pattern(n))
        return False
    elif path == "/stall":
        time.sleep(30)
        return False
    elif path == "/die":
        send(conn, ("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n%s\r\n" % xu).encode() +
             b"x" * 1000)
        return False
    elif path == "/ambig":
        send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"5\r\nhello\r\n0\r\n\r\n")
        return False
    elif path == "/ambig2":
        send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!")
        return False
    elif path == "/hop":
        plain("200 OK", b"hop\n", "Connection: X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\n"
              "Proxy-Authenticate: x\r\nUpgrade: h2c\r\nTrailer: X-T\r\nSet-Cookie: a=b\r\n"
              "Via: 1.1 origin\r\n")
    elif path == "/304":
        send(conn, ("HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\n%s\r\n" % xu).encode())
    elif path.startswith("/cache/") or path.startswith("/api/cache/"):
        ma = q.get("max-age", "60")
        plain("200 OK", ("cached %s\n" % path).encode() * 100,
              "Cache-Control: max-age=%s\r\nETag: \"e1\"\r\n" % ma)
    elif path == "/rev":
        hd = {k.lower(): v for k, v in headers}
        if hd.get("if-none-match") == '"r1"':
            send(conn, ('HTTP/1.1 304 Not Modified\r\nETag: "r1"\r\nCache-Control: max-age=0\r\n'
                        '%s\r\n' % xu).encode())
        else:
            plain("200 OK", b"revalidate me\n", 'Cache-Control: max-age=0\r\nETag: "r1"\r\n')
    elif path == "/slowcache":
        time.sleep(2.0)
        plain("200 OK", b"one for all\n" * 1000, "Cache-Control: max-age=60\r\n")
    elif path == "/dated":
        date = email.utils.formatdate(time.time() - int(q.get("ago", "0")), usegmt=True)
        plain("200 OK", b"dated\n", "Date: %s\r\nCache-Control: max-age=%s\r\n"
              % (date, q.get("max-age", "60")))
    elif path.startswith("/vary/"):
        # one response per Accept-Encoding value: the cache keeps a variant each
        hd = {k.lower(): v for k, v in headers}
        ae = hd.get("accept-encoding", "-")
        plain("200 OK", ("%s for %s\n" % (path, ae)).encode(),
              "Cache-Control: max-age=60\r\nVary: Accept-Encoding\r\n")
    elif path == "/nostore":
        plain("200 OK", b"never stored\n", "Cache-Control: no-store\r\n")
    elif path == "/continue":
        send(conn, b"HTTP/1.1 100 Continue\r\n\r\n")
        plain("200 OK", b"after 100\n")
    else:
        plain("200 OK", ("%s %s\n" % (NAME, path)).encode())
    return True


def serve_conn(conn):
    with LOCK:
        CONNS[0] += 1
        cid = CONNS[0]
    f = conn.makefile("rb")
    try:
        while True:
            try:
                method, target, headers, body = read_request(f)
            except (EOFError, ValueError, ConnectionError, OSError):
                return
            if target.startswith("/_"):
                with LOCK:
                    if target == "/_reset":
                        LOG.clear()
                        CONNS[0] = 0
                    data = json.dumps({"conns": CONNS[0], "log": LOG}).encode()
                send(conn, b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(data), data))
                continue
            with LOCK:
                LOG.append({"conn": cid, "method": method, "target": target,
                            "headers": headers, "body_len": len(body),
                            "body_sha": hashlib.sha256(body).hexdigest()})
            if RESET_ALL:
                return
            if not answer(conn, method, target, headers, body):
                return
    finally:
        try:
            f.close()
            conn.close()
        except OSError:
            pass


def main():
    global NAME, RESET_ALL, IGNORE_GET_BODY
    if len(sys.argv) < 3 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) > 1 else 2)
    port = int(sys.argv[1])
    NAME = sys.argv[2]
    RESET_ALL = "--reset-all" in sys.argv
    IGNORE_GET_BODY = "--ignore-get-body" in sys.argv
    addr = "127.0.0.1"
    if "--addr" in sys.argv:
        addr = sys.argv[sys.argv.index("--addr") + 1]
    ls = socket.socket(socket.AF_INET6 if ":" in addr else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(512)
    print("upstream %s on %s:%d" % (NAME, addr, port), flush=True)
    while True:
        c, _ = ls.accept()
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve_conn, args=(c,), daemon=True).start()


if __name__ == "__main__":
    main()
