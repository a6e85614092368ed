#!/usr/bin/env python3
"""links_client.py — the client side of tests/app.sh for examples/links
(a URL shortener: POST /links JSON, GET /l/ID 302, GET /stats JSON),
every answer checked with http.client or a raw socket.

  links_client.py api     HOST PORT   create, follow, stats; 404/405 as JSON
  links_client.py hostile HOST PORT   bad JSON (400, JSON), a URL too long
                                      for the header area (500, never a 302
                                      without Location), bodies over the
                                      limit by length and chunked (413,
                                      JSON), the pool exhausted (503, JSON)
  links_client.py slow    HOST PORT CUT BODY_TIMEOUT
                                      a head and body sent in bits over ~3 s are taken
                                      (201); a client that never reads
                                      thousands of pipelined answers does
                                      not stop 200 requests of another; with
                                      CUT 1, a body that stops gets 408
                                      after BODY_TIMEOUT and the non-reader
                                      is cut off
Prints one line per check and "links CHECK: N passed, N failed"; exit 1 on
any failure.
"""
import http.client
import json
import socket
import sys
import threading
import time

passed, failed = 0, 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("ok  ", name, detail, flush=True)
    else:
        failed += 1
        print("FAIL-DETAIL", name, detail, flush=True)


def req(host, port, method, path, body=None, headers=None):
    c = http.client.HTTPConnection(host, port, timeout=30)
    c.request(method, path, body=body, headers=headers or {})
    r = c.getresponse()
    data = r.read()
    c.close()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), data


def is_json_error(hdrs, data, status):
    try:
        return hdrs.get("content-type") == "application/json" and json.loads(data)["error"] in (status, json.loads(data)["error"])
    except (ValueError, KeyError, TypeError):
        return False


def create(host, port, url):
    st, h, d = req(host, port, "POST", "/links", json.dumps({"url": url}),
                   {"Content-Type": "application/json"})
    if st != 201:
        return st, None
    j = json.loads(d)
    return st, (j["id"], h.get("location"), j["short"])


def api(host, port):
    url = "https://example.org/a?b=c&d=%20"
    st, got = create(host, port, url)
    check("api.create", st == 201 and got and got[1] == "/l/" + got[0] == got[2], "%s %s" % (st, got))
    if not got:
        return
    hits0 = json.loads(req(host, port, "GET", "/stats")[2])
    for _ in range(3):
        st, h, d = req(host, port, "GET", "/l/" + got[0])
    check("api.follow", st == 302 and h.get("location") == url, "%s %s" % (st, h.get("location")))
    st, h, d = req(host, port, "GET", "/stats")
    j = json.loads(d)
    check("api.stats", st == 200 and h.get("content-type") == "application/json" and
          j["hits"] == hits0["hits"] + 3 and j["links"] >= 1 and j["top"][0]["hits"] >= 3, d.decode())
    st, h, d = req(host, port, "GET", "/l/ffffff")
    check("api.404", st == 404 and is_json_error(h, d, 404), "%s %s" % (st, d))
    st, h, d = req(host, port, "GET", "/nothing")
    check("api.404.engine", st == 404 and json.loads(d) == {"error": 404}, "%s %s" % (st, d))
    st, h, d = req(host, port, "DELETE", "/stats")
    check("api.405.engine", st == 405 and json.loads(d) == {"error": 405} and "GET" in h.get("allow", ""),
          "%s %s %s" % (st, d, h.get("allow")))


def raw(host, port, data, wait=10):
    s = socket.create_connection((host, port), timeout=wait)
    s.sendall(data)
    got = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
            if b"\r\n\r\n" in got:
                head, _, rest = got.partition(b"\r\n\r\n")
                cl = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
                if cl and len(rest) >= cl[0]:
                    break
    except (socket.timeout, ConnectionResetError):
        pass
    s.close()
    return got


def hostile(host, port):
    bad = [b"", b"{", b"[]", b'{"url": 5}', b'{"url": "ftp://x"}', b'{"url": "https://a b"}',
           b'{"url": "https://x"} trailing', b'{"url": "https://x\\u0041"}', b'{"url": "https://x",}',
           b'{"url" "https://x"}', b"\xff\xfe{}", b'{"url": "https://x\x01"}', b"null", b'{"a": "b"}']
    fails = []
    for b in bad:
        st, h, d = req(host, port, "POST", "/links", b)
        if st != 400 or h.get("content-type") != "application/json" or "error" not in json.loads(d):
            fails.append((b, st, d))
    check("hostile.bad_json", not fails, "%d bodies, 400 JSON each; %s" % (len(bad), fails[:2]))
    # A URL the store takes but whose Location does not fit the 1 KiB area.
    long_url = "https://example.org/" + "x" * 1200
    st, got = create(host, port, long_url)
    ok = st == 201
    if got:
        st, h, d = req(host, port, "GET", "/l/" + got[0])
        ok = ok and st == 500 and "location" not in h and json.loads(d) == {"error": 500}
    check("hostile.header_overflow", ok, "GET of a 1,220-byte URL: %s %s" % (st, got and got[0]))
    st, h, d = req(host, port, "POST", "/links", b"{" + b" " * 5000 + b"}")
    check("hostile.413.length", st == 413 and json.loads(d) == {"error": 413}, "%s %s" % (st, d))
    # chunked, growing past 4 KiB: 413 once it does
    s = socket.create_connection((host, port), timeout=15)
    s.sendall(b"POST /links HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
    got = b""
    try:
        for _ in range(10):
            s.sendall(b"400\r\n" + b" " * 1024 + b"\r\n")
            time.sleep(0.05)
        s.settimeout(10)
        while b"\r\n\r\n" not in got:
            d = s.recv(4096)
            if not d:
                break
            got += d
    except OSError:
        pass
    s.close()
    check("hostile.413.chunked", got.startswith(b"HTTP/1.1 413 ") and b"application/json" in got, got[:40])
    # Early 413: the answer comes before the body is sent, even with Expect.
    got = raw(host, port, b"POST /links HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\nExpect: 100-continue\r\n\r\n")
    check("hostile.413.early", got.startswith(b"HTTP/1.1 413 ") and b"100 Continue" not in got, got[:40])
    # The pool: 32 bodies held half-sent, the 33rd read gets 503 (JSON).
    socks = []
    for i in range(32):
        s = socket.create_connection((host, port), timeout=15)
        s.sendall(b"POST /links HTTP/1.1\r\nHost: a\r\nContent-Length: 35\r\n\r\n{\"url\"")
        socks.append(s)
    time.sleep(0.5)
    got = raw(host, port, b"POST /links HTTP/1.1\r\nHost: a\r\nContent-Length: 30\r\n\r\n{\"url\": \"https://example.org\"}")
    check("hostile.503.pool", got.startswith(b"HTTP/1.1 503 ") and got.endswith(b'{"error": 503}\n'), got[:60])
    okn = 0
    for s in socks:
        s.sendall(b': "https://example.org/held"}')
        s.settimeout(15)
        try:
            okn += s.recv(4096).startswith(b"HTTP/1.1 201 ")
        except OSError:
            pass
        s.close()
    check("hostile.pool.back", okn == 32, "%d of 32 held bodies answered 201" % okn)


def slow(host, port, cut, body_timeout):
    body = json.dumps({"url": "https://example.org/slow"}).encode()
    s = socket.create_connection((host, port), timeout=30)
    t0 = time.time()
    head = b"POST /links HTTP/1.1\r\nHost: a\r\nContent-Length: %d\r\n\r\n" % len(body)
    for i in range(0, len(head), 4):
        s.sendall(head[i:i + 4])
        time.sleep(0.05)
    for i in range(0, len(body), 2):
        s.sendall(body[i:i + 2])
        time.sleep(0.1)
    got = s.recv(4096)
    s.close()
    check("slow.body", got.startswith(b"HTTP/1.1 201 "), "%d bytes over %.1f s: %s" % (len(body), time.time() - t0, got[:20]))
    if cut:
        s = socket.create_connection((host, port), timeout=body_timeout + 15)
        s.sendall(b"POST /links HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n{\"url\"")
        t0 = time.time()
        try:
            got = s.recv(4096)
        except OSError:
            got = b""
        dt = time.time() - t0
        s.close()
        check("slow.stalled_408", got.startswith(b"HTTP/1.1 408 ") and body_timeout - 1 <= dt <= body_timeout + 5,
              "%.1f s: %s" % (dt, got[:30]))
    # A client that never reads: thousands of pipelined answers pile up.
    res = {}

    def non_reader():
        n = socket.socket()
        n.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        n.connect((host, port))
        n.settimeout(2)
        sent = 0
        try:
            for _ in range(20000):
                n.sendall(b"GET /stats HTTP/1.1\r\nHost: a\r\n\r\n")
                sent += 1
        except OSError:
            pass
        res["sent"] = sent
        if cut:
            time.sleep(body_timeout + 4)
            n.settimeout(5)
            try:
                while n.recv(65536):
                    pass
                res["end"] = "eof"
            except ConnectionResetError:
                res["end"] = "reset"
            except socket.timeout:
                res["end"] = "still open"
        n.close()

    t = threading.Thread(target=non_reader)
    t.start()
    time.sleep(1)
    t0 = time.time()
    okn = sum(req(host, port, "GET", "/stats")[0] == 200 for _ in range(200))
    check("slow.others_served", okn == 200, "200 GET /stats beside a non-reader: %d ok in %.1f s" % (okn, time.time() - t0))
    t.join()
    if cut:
        check("slow.non_reader_cut", res.get("end") in ("eof", "reset"), "%s after %s requests" % (res.get("end"), res.get("sent")))


def main():
    what, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if what == "api":
        api(host, port)
    elif what == "hostile":
        hostile(host, port)
    elif what == "slow":
        slow(host, port, sys.argv[4] == "1", float(sys.argv[5]))
    else:
        sys.exit("usage: links_client.py api|hostile|slow HOST PORT [CUT BODY_TIMEOUT]")
    print("links %s: %d passed, %d failed" % (what, passed, failed))
    sys.exit(1 if failed else 0)


main()
