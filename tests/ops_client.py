#!/usr/bin/env python3
"""tests/ops_client.py — the clients and checkers of tests/ops.sh.

  hostile HOST PORT            the hostile requests (HOSTILE below), each on
                               its own connection; exit 0 if each was answered
  check FORMAT LOG STATS CLIENT
                               every record of LOG (combined|json; in json,
                               the lines of LOG that start with '{') is one
                               well-formed line whose client address is
                               CLIENT, written as nginx's $remote_addr
                               (198.18.0.1, or 2001:2::1 bare and in RFC
                               5952's form); as many as the responses
                               counted in STATS (the --stats output); the
                               hostile requests are there, escaped, and (json)
                               decode back to the bytes sent
  idle HOST PORT SECS          one keep-alive request, then wait (at most
                               SECS) for the server to close: exit 0 on a
                               clean EOF with no bytes after the response
  slow HOST PORT SECS          send half a request head and hold it; exit 0
                               when the server closes within SECS
  reload HOST PID DIR LOG      SIGHUP (to PID) under open keep-alive HTTP and
                               HTTPS connections (ports 80, 443); DIR holds
                               site/ (the --root), live.crt/live.key (the
                               --tls-* files), a.*, b.* (two certificates)
                               and bad.crt: the open connections keep
                               answering (the HTTPS one on its certificate),
                               new ones get the new body and certificate; a
                               reload with a garbage certificate, one with a
                               key that does not match and one with the root
                               gone keep what is served; each SIGHUP is
                               done when LOG (the server's stdout and
                               stderr) has two more "SIGHUP:" lines (the
                               tree's and the certificate's outcome)
  nottls HOST PORT N           N connections that send plain HTTP to the TLS
                               port, each until the server closes it
"""
import hashlib
import ipaddress
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import sys
import time

# (request bytes, the status it gets, the request line the log must show,
# the User-Agent it sent or None).  Every one tries to end a log line early,
# forge a field, or break the JSON.
HOSTILE = [
    (b'GET /a"b\\c?x="]"-"forged"\\ HTTP/1.1\r\nHost: h\r\n'
     b'User-Agent: ua " \\" \t\xff\xfe end\r\nReferer: http://r/"x\r\nConnection: close\r\n\r\n',
     404, b'GET /a"b\\c?x="]"-"forged"\\ HTTP/1.1', b'ua " \\" \t\xff\xfe end'),
    (b'GET /\x1b[31mred HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n',
     400, b'GET /\x1b[31mred HTTP/1.1', None),
    (b'GET /x HTTP/1.1\r\nHost: h\r\nUser-Agent: "}, {"status": 999, "x": "\x80\r\n'
     b'Connection: close\r\n\r\n',
     404, b'GET /x HTTP/1.1', b'"}, {"status": 999, "x": "\x80'),
]


def exchange(host, port, data):
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(data)
    got = b""
    while True:
        x = s.recv(65536)
        if not x:
            break
        got += x
    s.close()
    return got


def cmd_hostile(host, port):
    ok = True
    for req, status, _, _ in HOSTILE:
        got = exchange(host, int(port), req)
        if not got.startswith(b"HTTP/1.1 %d " % status):
            print("request %r: got %r, want %d" % (req[:40], got[:40], status))
            ok = False
    print("%d hostile requests answered" % len(HOSTILE))
    return 0 if ok else 1


def combined_escape(b):
    """nginx's escaping, as http/access.c writes it."""
    out = []
    for c in b:
        if c in (0x22, 0x5C) or c < 0x20 or c >= 0x7F:
            out.append("\\x%02X" % c)
        else:
            out.append(chr(c))
    return "".join(out)


COMBINED = re.compile(
    r'^([0-9a-f.:]+) - - \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d [+-]\d{4}\] '
    r'"((?:[^"\\]|\\x[0-9A-F]{2})*)" (\d{3}) (\d+) "((?:[^"\\]|\\x[0-9A-F]{2})*)" '
    r'"((?:[^"\\]|\\x[0-9A-F]{2})*)"$')
# A string split, not a list literal of words: tools/depscan.py would read that as a command.
JSON_KEYS = ("time remote_addr remote_port request status body_bytes_sent http_referer "
             "http_user_agent").split()


def responses(stats_path):
    """Every answer the server counted.  src/http/app.c counts them by
    class (http.resp_2xx .. resp_5xx; its counters by code only detail
    them); a server that counts by code only (http.resp_200 ..
    resp_other, as skiff's engine before the app engine did) is summed
    by code."""
    by_class = by_code = 0
    for line in open(stats_path, encoding="latin-1"):
        line = line.strip()
        m = re.match(r"^http\.resp_[1-5]xx (\d+)$", line)
        if m:
            by_class += int(m.group(1))
        m = re.match(r"^http\.resp_(\d{3}|other) (\d+)$", line)
        if m:
            by_code += int(m.group(2))
    return by_class or by_code


def cmd_check(fmt, log_path, stats_path, client):
    # RFC 5952's text of the address (what ipv6_format must write).
    client = str(ipaddress.ip_address(client))
    raw = open(log_path, "rb").read()
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if fmt == "json":
        lines = [l for l in lines if l.startswith(b"{")]
    bad = []
    recs = []
    for l in lines:
        if any(c < 0x20 or c >= 0x7F for c in l):
            bad.append(("not printable ASCII", l))
            continue
        s = l.decode("ascii")
        if fmt == "combined":
            m = COMBINED.match(s)
            if not m:
                bad.append(("not a combined line", l))
                continue
            addr = m.group(1)
            recs.append({"request": m.group(2), "status": int(m.group(3)), "ua": m.group(6)})
        else:
            try:
                o = json.loads(s)
            except ValueError as e:
                bad.append(("not JSON: %s" % e, l))
                continue
            if list(o.keys()) != JSON_KEYS:
                bad.append(("keys %s" % list(o.keys()), l))
                continue
            addr = o["remote_addr"]
            recs.append({"request": o["request"], "status": o["status"],
                         "ua": o["http_user_agent"]})
        if addr != client:
            bad.append(("client %r, not %r" % (addr, client), l))
            recs.pop()
            continue
    if bad:
        for why, l in bad[:3]:
            print("%s: %r" % (why, l[:200]))
        return 1
    want = responses(stats_path)
    if len(recs) != want:
        print("%d records, %d responses counted" % (len(recs), want))
        return 1
    # The hostile requests, exactly: escaped (combined) or decoded back to
    # the bytes sent (json: each byte is one code point, Latin-1).
    for _, status, line, ua in HOSTILE:
        if fmt == "combined":
            rq, u = combined_escape(line), combined_escape(ua) if ua is not None else "-"
        else:
            rq, u = line.decode("latin-1"), ua.decode("latin-1") if ua is not None else ""
        if not any(r["request"] == rq and r["status"] == status and r["ua"] == u for r in recs):
            print("no record of %r (%d, UA %r)" % (line, status, ua))
            for r in recs:
                if r["status"] == status:
                    print("  have %r" % (r,))
            return 1
    print("%d records, all well-formed, = responses; %d hostile ones exact" %
          (len(recs), len(HOSTILE)))
    return 0


def cmd_idle(host, port, secs):
    s = socket.create_connection((host, int(port)), timeout=float(secs))
    s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
    got = b""
    while b"\r\n\r\n" not in got or len(got) < got.index(b"\r\n\r\n") + 4 + 41:
        x = s.recv(4096)
        if not x:
            print("closed before the response was complete: %r" % got[:80])
            return 1
        got += x
    print("response complete; idle", flush=True)
    t0 = time.monotonic()
    try:
        x = s.recv(4096)
    except socket.timeout:
        print("still open after %s s" % secs)
        return 1
    except OSError as e:
        print("error instead of a clean close: %s" % e)
        return 1
    if x:
        print("bytes after the response: %r" % x[:80])
        return 1
    print("clean close %.2f s after idling" % (time.monotonic() - t0))
    return 0


def cmd_slow(host, port, secs):
    s = socket.create_connection((host, int(port)), timeout=float(secs))
    s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n")
    print("half a head sent; holding", flush=True)
    t0 = time.monotonic()
    try:
        x = s.recv(4096)
    except socket.timeout:
        print("still open after %s s" % secs)
        return 1
    except OSError as e:
        x = b""
        print("closed with %s" % e)
    print("closed %.2f s after the half head (%d bytes)" % (time.monotonic() - t0, len(x)))
    return 0


def pem_fp(path):
    with open(path) as f:
        return hashlib.sha256(ssl.PEM_cert_to_DER_cert(f.read())).hexdigest()[:16]


def conn_fp(c):
    return hashlib.sha256(c.sock.getpeercert(binary_form=True)).hexdigest()[:16]


def replace(src, dst):
    """Into place by rename, as a deploy does (never rewritten in place)."""
    shutil.copyfile(src, dst + ".tmp")
    os.rename(dst + ".tmp", dst)


def write(path, data):
    with open(path + ".tmp", "w") as f:
        f.write(data)
    os.rename(path + ".tmp", path)


def sighup_lines(log):
    """The reloads' outcomes in the server's log: each reload ends with one
    line, 'SIGHUP: ... loaded' or '... (the old configuration stays)'."""
    with open(log, "rb") as f:
        t = f.read()
    return len(re.findall(rb"SIGHUP: [^\n]*(?: loaded \(|\(the old configuration stays\))", t))


def cmd_reload(host, pid, d, log):
    pid = int(pid)
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    tls.check_hostname = False
    tls.verify_mode = ssl.CERT_NONE
    fa, fb = pem_fp(d + "/a.crt"), pem_fp(d + "/b.crt")

    def new(https):
        if https:
            return http.client.HTTPSConnection(host, 443, timeout=10, context=tls)
        return http.client.HTTPConnection(host, 80, timeout=10)

    def get(c, want_body, what):
        c.request("GET", "/")
        r = c.getresponse()
        body = r.read().decode(errors="replace")
        if r.status != 200 or body != want_body:
            raise SystemExit("%s: %d %r, wanted 200 %r" % (what, r.status, body, want_body))

    def hup():
        # The reload runs on the server's 1 s timer and ends with a line of
        # its outcome: until it is in the log (at most 5 s; the checks after
        # it then say what is wrong).
        want = sighup_lines(log) + 1
        os.kill(pid, signal.SIGHUP)
        end = time.monotonic() + 5
        while sighup_lines(log) < want and time.monotonic() < end:
            time.sleep(0.05)

    def fresh(body, fp, what):
        for https in (False, True):
            c = new(https)
            get(c, body, "%s, new %s connection" % (what, "https" if https else "http"))
            if https and conn_fp(c) != fp:
                raise SystemExit("%s: a new connection was shown %s, wanted %s" %
                                 (what, conn_fp(c), fp))
            c.close()

    old_http, old_https = new(False), new(True)
    get(old_http, "old\n", "before, http")
    get(old_https, "old\n", "before, https")
    if conn_fp(old_https) != fa:
        raise SystemExit("before: shown %s, wanted a.crt %s" % (conn_fp(old_https), fa))
    write(d + "/site/index.html", "new\n")
    replace(d + "/b.crt", d + "/live.crt")
    replace(d + "/b.key", d + "/live.key")
    hup()
    # Open connections: still answered, requests after the SIGHUP see the
    # new tree; the HTTPS one is still on a.crt, its handshake's.
    for i in range(3):
        get(old_http, "new\n", "open http connection, request %d after" % (i + 1))
        get(old_https, "new\n", "open https connection, request %d after" % (i + 1))
    if conn_fp(old_https) != fa:
        raise SystemExit("the open connection changed certificate")
    fresh("new\n", fb, "after the reload")
    print("reload: open connections answered 3 more each (https still on a.crt %s); "
          "new ones: the new body, b.crt %s" % (fa, fb), flush=True)

    # Failures: a garbage certificate with the root gone, then a key that
    # does not match; b.crt and the tree stay.
    replace(d + "/bad.crt", d + "/live.crt")
    os.rename(d + "/site", d + "/site.gone")
    hup()
    fresh("new\n", fb, "after a reload from a garbage certificate and no root")
    get(old_http, "new\n", "open http connection after the failed reload")
    os.rename(d + "/site.gone", d + "/site")
    replace(d + "/a.crt", d + "/live.crt")  # with b.key: no match
    hup()
    fresh("new\n", fb, "after a reload with a key that does not match")
    get(old_https, "new\n", "open https connection after the failed reloads")
    old_http.close()
    old_https.close()
    print("reload: failed reloads kept b.crt and the tree", flush=True)
    return 0


def cmd_nottls(host, port, n):
    for _ in range(int(n)):
        s = socket.create_connection((host, int(port)), timeout=5)
        s.sendall(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n")
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
        s.close()
    print("%s refused handshakes" % n)
    return 0


def main():
    cmds = {"hostile": (cmd_hostile, 2), "check": (cmd_check, 4), "idle": (cmd_idle, 3),
            "slow": (cmd_slow, 3), "reload": (cmd_reload, 4),
            "nottls": (cmd_nottls, 3)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) - 2 != cmds[sys.argv[1]][1]:
        print(__doc__, file=sys.stderr)
        return 2
    fn, _ = cmds[sys.argv[1]]
    return fn(*sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
