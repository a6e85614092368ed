#!/usr/bin/env python3
"""http_client.py — raw-socket and http.client checks for tests/http.sh.

Each subcommand prints one line per failure ("why ...") and a summary, and
exits 0 only if every check held.

  keepalive HOST PORT            http.client: several requests on one connection
  corpus HOST PORT FILE          malformed requests: status + connection closed
  escape HOST PORT               path escapes: 404/400 and never the file
  slowloris HOST PORT SECONDS    1 byte/s head is cut at ~SECONDS; others served
"""
import http.client
import re
import socket
import sys
import threading
import time

HELLO_LEN = 41


def unescape(s):
    """The escapes of tests/http_bad_requests.txt."""
    s = re.sub(r"\\\{(\d+)\}(.*?)\\\}", lambda m: m.group(2) * int(m.group(1)), s)
    out = bytearray()
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n == "r":
                out += b"\r"
            elif n == "n":
                out += b"\n"
            elif n == "t":
                out += b"\t"
            elif n == "\\":
                out += b"\\"
            elif n == "0":
                out += b"\0"
            elif n == "x":
                out.append(int(s[i + 2:i + 4], 16))
                i += 2
            else:
                raise ValueError("bad escape \\" + n)
            i += 2
            continue
        out += c.encode("latin-1")
        i += 1
    return bytes(out)


def exchange(host, port, data, timeout=5.0):
    """Send data, read until the server closes.  Returns (bytes, closed)."""
    s = socket.create_connection((host, port), timeout=timeout)
    try:
        try:
            s.sendall(data)
        except OSError:
            pass  # the server may answer and close before taking it all
        buf = b""
        closed = False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not chunk:
                closed = True
                break
            buf += chunk
        return buf, closed
    finally:
        s.close()


def status_of(resp):
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", resp)
    return int(m.group(1)) if m else None


def cmd_keepalive(host, port):
    bad = 0
    c = http.client.HTTPConnection(host, port, timeout=5)
    first_sock = None
    for i in range(20):
        method = "HEAD" if i % 5 == 4 else "GET"
        c.request(method, "/")
        r = c.getresponse()
        body = r.read()
        if first_sock is None:
            first_sock = c.sock
        if r.status != 200:
            print("why: request %d got %d" % (i, r.status)); bad += 1
        if method == "GET" and len(body) != HELLO_LEN:
            print("why: request %d body %d bytes" % (i, len(body))); bad += 1
        if method == "HEAD" and (body or r.getheader("Content-Length") != str(HELLO_LEN)):
            print("why: HEAD %d wrong" % i); bad += 1
        if c.sock is not first_sock or r.will_close:
            print("why: request %d did not reuse the connection" % i); bad += 1
        if not r.getheader("Date") or r.getheader("Server") != "skiff":
            print("why: Date/Server header missing"); bad += 1
    c.request("GET", "/", headers={"Connection": "close"})
    r = c.getresponse()
    r.read()
    if not r.will_close or r.getheader("Connection", "").lower() != "close":
        print("why: Connection: close not honoured"); bad += 1
    c.close()
    # HTTP/1.0 keep-alive on request, and 1.0 default close.
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    time.sleep(0.2)
    resp = s.recv(65536)
    if b"Connection: keep-alive" not in resp:
        print("why: 1.0 keep-alive not answered"); bad += 1
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        x = s.recv(65536)
        if not x:
            break
        data += x
    if status_of(data) != 200:
        print("why: second 1.0 request failed"); bad += 1
    s.close()
    # Pipelining: three requests in one send, answered in order.
    data, closed = exchange(host, port, b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"
                            b"GET /nope HTTP/1.1\r\nHost: a\r\n\r\n"
                            b"HEAD / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    codes = [int(x) for x in re.findall(rb"HTTP/1\.1 (\d{3}) ", data)]
    if codes != [200, 404, 200] or not closed:
        print("why: pipelined answers %s closed=%s" % (codes, closed)); bad += 1
    print("keepalive: %s" % ("ok" if not bad else "%d problems" % bad))
    return bad == 0


def cmd_corpus(host, port, path):
    n = bad = 0
    for line in open(path, encoding="latin-1"):
        line = line.rstrip("\n")
        if not line or line.startswith("#"):
            continue
        status, reason, req = line.split(" ", 2)
        data, closed = exchange(host, port, unescape(req))
        got = status_of(data)
        n += 1
        if got != int(status) or not closed:
            bad += 1
            print("why: %s (%s): got %s closed=%s: %r" % (status, reason, got, closed, req[:70]))
    print("corpus: %d requests, %d wrong" % (n, bad))
    return n > 0 and bad == 0


def cmd_escape(host, port):
    targets = ["/../etc/passwd", "/../../../../etc/passwd", "/%2e%2e/etc/passwd",
               "/%2E%2E/%2e%2e/%2e%2e/etc/passwd", "/a/..%2f..%2f..%2fetc/passwd",
               "/..%2fetc%2fpasswd", "/.%2e/etc/passwd", "/%2e/passwd", "/passwd_link",
               "/sub/passwd_link", "/linkdir/passwd", "/%00", "/a%00.txt", "/%zz",
               "http://x/../etc/passwd", "/./a.txt", "/.hidden", "/sub/../a.txt"]
    bad = 0
    for t in targets:
        data, _ = exchange(host, port, ("GET %s HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
                                        % t).encode())
        st = status_of(data)
        if st not in (400, 404) or b"root:" in data:
            bad += 1
            print("why: %s -> %s" % (t, st))
    print("escape: %d targets, %d served" % (len(targets), bad))
    return bad == 0


def cmd_slowloris(host, port, secs):
    secs = float(secs)
    result = {}

    def slow():
        s = socket.create_connection((host, port), timeout=secs + 10)
        t0 = time.monotonic()
        msg = b"GET / HTTP/1.1\r\nHost: a\r\nX-Slow: " + b"a" * 200
        got = b""
        try:
            for b in msg:
                s.send(bytes([b]))
                s.settimeout(1.0)
                try:
                    x = s.recv(4096)
                    if not x:
                        break
                    got += x
                    if b"\r\n\r\n" in got:
                        # read to the end
                        s.settimeout(5)
                        while True:
                            x = s.recv(4096)
                            if not x:
                                break
                            got += x
                        break
                except socket.timeout:
                    pass
        except OSError:
            pass
        result["t"] = time.monotonic() - t0
        result["data"] = got
        s.close()

    th = threading.Thread(target=slow)
    th.start()
    served = failed = 0
    while th.is_alive():
        try:
            c = http.client.HTTPConnection(host, port, timeout=3)
            c.request("GET", "/")
            r = c.getresponse()
            body = r.read()
            if r.status == 200 and len(body) == int(r.getheader("Content-Length", "-1")):
                served += 1
            else:
                failed += 1
            c.close()
        except OSError:
            failed += 1
        time.sleep(0.5)
    th.join()
    t = result.get("t", 0)
    st = status_of(result.get("data", b""))
    ok = st == 408 and secs - 0.5 <= t <= secs + 4 and served >= 2 and failed == 0
    print("slowloris: cut after %.1f s with %s; %d normal requests served, %d failed"
          % (t, st, served, failed))
    return ok


def main():
    cmds = {"keepalive": cmd_keepalive, "corpus": cmd_corpus, "escape": cmd_escape,
            "slowloris": cmd_slowloris}
    if len(sys.argv) < 4 or sys.argv[1] not in cmds:
        print(__doc__)
        sys.exit(2)
    ok = cmds[sys.argv[1]](sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
