#!/usr/bin/python3
"""h2_serve.py — HTTP/2 through skiff's one HTTP engine (http/app.c), against
real peers: the h2-serve phase of `make test` (docs/testing.md).

Runs the real programs on 127.0.0.1 (kernel sockets, no root):
  - `skiff serve --root DIR --stats` (the files handler),
  - build/examples/echo (an application on http/app.h: a streaming echo),
  - `skiff serve --config` whose route proxies to the first server (and
    which is sent SIGHUP: a reload),
  - `skiff serve --http2 off` (the per-listener switch),
and checks, over h2c (HTTP/2 by prior knowledge, RFC 9113 3.3):
  curl --http2-prior-knowledge: status, protocol 2 and the body's sha256
  equal to the HTTP/1.1 answer's and the file's for several files; HEAD;
  Range (206); If-None-Match (304); 404; nghttp; h2load -c 4 -m 10 (0
  failed, every answer 2xx, through the proxy too); python3-h2 for POST
  bodies (with content-length, and framed by END_STREAM only) and for 20
  concurrent streams on one connection; HTTP/1.1 on the same port; the
  engine's counters at exit (http.h2_sessions, http.h2_streams); over
  TLS, curl's default (ALPN h2 by default: HTTP/2), h2load, and HTTP/1.1
  with --tls-alpn http/1.1 and with --http2 off; a PING flood's GOAWAY
  ENHANCE_YOUR_CALM reaching a client that goes on sending (the session's
  lingering close: FIN, not RST); a reload (SIGHUP) sending an open
  session GOAWAY NO_ERROR then FIN, with an HTTP/1.1 keep-alive connection
  beside it still served and a new session answered 200.
Needs Debian's python3 (python3-h2): mk/h2.mk runs it with $(DEB_PYTHON3).

Usage: h2_serve.py SKIFF ECHO_APP
Prints PASS/FAIL lines and "h2-serve: N passed, M failed"; exit 1 on a failure.

       h2_serve.py --streams HOST PORT SITE
The python3-h2 check of another phase's server (tests/h2_serve_tap.sh on
skiff's own stack, tests/vm_h2.sh in the unikernel): 20 concurrent h2c
streams on one connection for SITE's index.html, small.txt, mid.bin and
big.bin in turn; prints what came back, exit 0 when every stream is a 200
with the file's bytes.
"""
import hashlib
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import h2.config
import h2.connection
import h2.events

from skt import Checks, free_port

CHECKS = Checks("h2-serve", prefix="h2-serve.")
check = CHECKS.check


def wait_port(port, proc, secs=10.0):
    end = time.time() + secs
    while time.time() < end:
        if proc.poll() is not None:
            return False
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.05)
    return False


def sha(b):
    return hashlib.sha256(b).hexdigest()


def curl(*args, timeout=30):
    """curl ARGS: (status, http_version, body bytes)."""
    with tempfile.NamedTemporaryFile(delete=False) as f:
        out = f.name
    try:
        r = subprocess.run(["curl", "-s", "-o", out, "-w", "%{http_code} %{http_version}", *args],
                           capture_output=True, timeout=timeout)
        code, ver = (r.stdout.decode().split() + ["0", "0"])[:2]
        with open(out, "rb") as f:
            body = f.read()
        return int(code), ver, body
    finally:
        os.unlink(out)


def curl_head(*args):
    r = subprocess.run(["curl", "-s", "-D", "-", "-o", "/dev/null", *args], capture_output=True,
                       timeout=30)
    return r.stdout.decode(errors="replace")


class H2Client:
    """A python3-h2 client on one connection."""

    def __init__(self, port, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=10)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
        self.conn.initiate_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.port = port
        self.host = host

    def headers(self, method, path, extra=()):
        return [(":method", method), (":path", path), (":scheme", "http"),
                (":authority", f"{self.host}:{self.port}"), *extra]

    def run(self, streams, bodies=None):
        """Send each stream (sid -> headers), bodies[sid] (bytes, sent
        within the flow-control windows), read until all end.  Returns
        sid -> (status, body)."""
        bodies = dict(bodies or {})
        res = {sid: [None, bytearray(), False] for sid in streams}
        for sid, hdrs in streams.items():
            self.conn.send_headers(sid, hdrs, end_stream=sid not in bodies)
        pending = {sid: memoryview(b) for sid, b in bodies.items()}
        deadline = time.time() + 30
        while not all(v[2] for v in res.values()) and time.time() < deadline:
            for sid in list(pending):
                buf = pending[sid]
                n = min(len(buf), self.conn.local_flow_control_window(sid),
                        self.conn.max_outbound_frame_size)
                if n > 0:
                    self.conn.send_data(sid, bytes(buf[:n]))
                    pending[sid] = buf = buf[n:]
                if len(buf) == 0:
                    self.conn.end_stream(sid)
                    del pending[sid]
            self.sock.sendall(self.conn.data_to_send())
            data = self.sock.recv(65536)
            if not data:
                break
            for ev in self.conn.receive_data(data):
                if isinstance(ev, h2.events.ResponseReceived):
                    res[ev.stream_id][0] = int(dict(ev.headers)[b":status"])
                elif isinstance(ev, h2.events.DataReceived):
                    res[ev.stream_id][1] += ev.data
                    self.conn.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
                elif isinstance(ev, h2.events.StreamEnded):
                    res[ev.stream_id][2] = True
                elif isinstance(ev, h2.events.StreamReset):
                    res[ev.stream_id][2] = True
            self.sock.sendall(self.conn.data_to_send())
        return {sid: (v[0], bytes(v[1])) for sid, v in res.items()}

    def close(self):
        self.conn.close_connection()
        self.sock.sendall(self.conn.data_to_send())
        self.sock.close()


def h2_frame(ftype, flags, sid, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + sid.to_bytes(4, "big") + payload


def flood_goaway(port, pings=6000, later=100):
    """A client that floods PINGs (over the engine's budget of 50 a
    window: GOAWAY ENHANCE_YOUR_CALM) and goes on sending after a pause,
    without reading.  Then reads to the end: (GOAWAY error code or None,
    how it ended: "eof", or the error's name).  6000 PINGs (102 KB) are
    more than the server reads at once, so most are still in its kernel
    when the GOAWAY goes: a server that closes then sends RST (measured
    on the close before the linger: "send ConnectionResetError" 5 times
    in 5; with 200 PINGs, all read at once, its close was a FIN too)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    ping = h2_frame(6, 0, 0, b"\0" * 8)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0) + ping * pings)
    time.sleep(0.3)  # the server has answered and closed (or half-closed) by now
    end = "eof"
    try:
        sock.sendall(ping * later)  # frames in flight after the GOAWAY
    except OSError as e:
        end = f"send {type(e).__name__}"
    data = bytearray()
    try:
        while True:
            b = sock.recv(65536)
            if not b:
                break
            data += b
    except OSError as e:
        end = type(e).__name__
    sock.close()
    code, at = None, 0
    while at + 9 <= len(data):
        n = int.from_bytes(data[at:at + 3], "big")
        if data[at + 3] == 7 and at + 9 + 8 <= len(data):  # GOAWAY
            code = int.from_bytes(data[at + 13:at + 17], "big")
        at += 9 + n
    return code, end


def reload_goaway(port, plog, small):
    """SIGHUP on a `serve --config` server: an open h2c session gets
    GOAWAY NO_ERROR (last stream id: its one stream) and then the server's
    FIN; an HTTP/1.1 keep-alive connection beside it is still served; a
    new connection gets 200; http.h2_goaway_reload at exit."""
    p, log = plog
    c = H2Client(port)
    res = c.run({1: c.headers("GET", "/small.txt")})
    check("reload.before", res[1] == (200, small), f"{res[1][0]} {len(res[1][1])} B")
    h1 = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    h1.request("GET", "/small.txt")
    r1 = h1.getresponse()
    b1 = r1.read()
    h1_sock = h1.sock
    p.send_signal(signal.SIGHUP)
    goaway, end = None, "timeout"
    c.sock.settimeout(5)  # the workers look for SIGHUP once a second
    try:
        while True:
            data = c.sock.recv(65536)
            if not data:
                end = "eof"
                break
            for ev in c.conn.receive_data(data):
                if isinstance(ev, h2.events.ConnectionTerminated):
                    goaway = (int(ev.error_code), ev.last_stream_id)
    except OSError as e:
        end = type(e).__name__
    c.sock.close()
    check("reload.goaway", goaway == (0, 1) and end == "eof",
          f"GOAWAY (code, last stream) {goaway} then {end} (want (0, 1) then eof)")
    h1.request("GET", "/small.txt")
    r2 = h1.getresponse()
    b2 = r2.read()
    check("reload.http1-kept", r1.status == r2.status == 200 and b1 == b2 == small
          and h1.sock is h1_sock, f"{r1.status} {r2.status} on the same connection")
    h1.close()
    c = H2Client(port)
    res = c.run({1: c.headers("GET", "/small.txt")})
    c.close()
    check("reload.new-session", res[1] == (200, small), f"{res[1][0]} {len(res[1][1])} B")
    stop(p)
    log.seek(0)
    text = log.read()
    st = stats_of(text)
    check("reload.stats", "SIGHUP:" in text and st.get("http.h2_goaway_reload", 0) == 1,
          f"http.h2_goaway_reload={st.get('http.h2_goaway_reload')} (1); "
          f"SIGHUP logged: {'SIGHUP:' in text}")


def stats_of(text):
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\S+)\s+(\d+)\s*$", text, re.M)}


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


STREAM_FILES = ("index.html", "small.txt", "mid.bin", "big.bin")


def streams_check(host, port, site, n=20):
    """n concurrent streams on one connection, STREAM_FILES in turn:
    (every stream a 200 with its file's bytes, what came back)."""
    c = H2Client(port, host)
    streams = {1 + 2 * i: c.headers("GET", "/" + STREAM_FILES[i % 4]) for i in range(n)}
    res = c.run(streams)
    c.close()
    bad = []
    for sid, (status, body) in sorted(res.items()):
        with open(os.path.join(site, STREAM_FILES[((sid - 1) // 2) % 4]), "rb") as f:
            want = f.read()
        if status != 200 or body != want:
            bad.append(f"stream {sid}: {status} {len(body)} B")
    msg = f"{len(res) - len(bad)} of {n} streams 200 with the file's bytes"
    return not bad, msg + ("; " + ", ".join(bad) if bad else "")


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "--streams":
        ok, msg = streams_check(sys.argv[2], int(sys.argv[3]), sys.argv[4])
        print(msg)
        return 0 if ok else 1
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    skiff, echo = sys.argv[1], sys.argv[2]
    for tool in ("curl", "nghttp", "h2load"):
        if not shutil.which(tool):
            check(f"tool.{tool}", False, "not installed (tools/deps.sh)")
            return 1
    work = tempfile.mkdtemp(prefix="h2-serve.")
    root = os.path.join(work, "root")
    os.mkdir(root)
    files = {"index.html": b"<html>hello over h2</html>\n",
             "small.txt": os.urandom(41),
             "mid.bin": os.urandom(100000),
             "big.bin": os.urandom(3 * 1024 * 1024 + 17)}
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    procs = []
    logs = {}

    def start(name, argv, port):
        log = open(os.path.join(work, name + ".log"), "w+")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        procs.append(p)
        logs[name] = (p, log)
        ok = wait_port(port, p)
        check(f"{name}.start", ok, " ".join(argv[1:4]))
        return ok

    try:
        port = free_port()
        if not start("files", [skiff, "serve", "--stack", "linux", "--ip", "127.0.0.1", "--port",
                               str(port), "--root", root, "--stats"], port):
            return 1
        base = f"http://127.0.0.1:{port}"

        # Files: h2c against HTTP/1.1 and the file.
        for name, data in files.items():
            c2, v2, b2 = curl("--http2-prior-knowledge", f"{base}/{name}")
            c1, v1, b1 = curl("--http1.1", f"{base}/{name}")
            check(f"files.{name}", c2 == 200 and v2 == "2" and sha(b2) == sha(data) == sha(b1)
                  and c1 == 200 and v1 == "1.1",
                  f"h2 {c2} v{v2} {len(b2)} B, h1 {c1} v{v1} {len(b1)} B, file {len(data)} B")
        h = curl_head("--http2-prior-knowledge", "-I", f"{base}/mid.bin")
        check("head", h.startswith("HTTP/2 200") and re.search(r"(?im)^content-length: 100000\r?$", h)
              is not None, h.splitlines()[0] if h else "no answer")
        c, v, b = curl("--http2-prior-knowledge", "-r", "1000-1999", f"{base}/mid.bin")
        check("range", c == 206 and v == "2" and b == files["mid.bin"][1000:2000], f"{c} {len(b)} B")
        etag = re.search(r'(?im)^etag: (".*")', h)
        c, v, b = curl("--http2-prior-knowledge", "-H", f"If-None-Match: {etag.group(1) if etag else 'x'}",
                       f"{base}/mid.bin")
        check("304", c == 304 and v == "2" and b == b"", f"{c} {len(b)} B")
        c, v, b = curl("--http2-prior-knowledge", f"{base}/missing")
        check("404", c == 404 and v == "2", f"{c}")
        c, v, b = curl(f"{base}/small.txt")
        check("http1-same-port", c == 200 and v == "1.1" and b == files["small.txt"], f"{c} v{v}")

        r = subprocess.run(["nghttp", "-n", "-s", f"{base}/index.html", f"{base}/mid.bin",
                            f"{base}/big.bin"], capture_output=True, timeout=30)
        out = r.stdout.decode(errors="replace")
        check("nghttp", r.returncode == 0 and out.count("200") >= 0 and "/big.bin" in out,
              f"exit {r.returncode}")
        r = subprocess.run(["nghttp", "-v", f"{base}/index.html"], capture_output=True, timeout=30)
        check("nghttp.body", r.returncode == 0 and files["index.html"] in r.stdout and
              b":status: 200" in r.stdout, f"exit {r.returncode}")

        for path, n in (("/small.txt", 4000), ("/mid.bin", 400)):
            r = subprocess.run(["h2load", "-n", str(n), "-c", "4", "-m", "10", base + path],
                               capture_output=True, timeout=60)
            out = r.stdout.decode(errors="replace")
            ok = re.search(rf"requests: {n} total, {n} started, {n} done, {n} succeeded, 0 failed",
                           out) and re.search(rf"status codes: {n} 2xx", out)
            check(f"h2load{path}", bool(ok), " ".join(l for l in out.splitlines()
                                                      if l.startswith(("requests:", "status codes:", "finished"))))

        # Twenty concurrent streams on one connection (python3-h2).
        ok, msg = streams_check("127.0.0.1", port, root)
        check("concurrent-streams", ok, msg)

        # An application: POST bodies to the echo.
        eport = free_port()
        if start("echo", [echo, "--stack", "linux", "--ip", "127.0.0.1", "--port", str(eport),
                          "--stats"], eport):
            body = os.urandom(300000)
            with tempfile.NamedTemporaryFile(delete=False) as f:
                f.write(body)
                up = f.name
            c, v, b = curl("--http2-prior-knowledge", "--data-binary", "@" + up,
                           f"http://127.0.0.1:{eport}/echo")
            check("echo.curl-content-length", c == 200 and v == "2" and b == body, f"{c} {len(b)} B")
            c, v, b = curl("--http2-prior-knowledge", "-T", up, "-H", "Content-Length:",
                           "-H", "Transfer-Encoding:", f"http://127.0.0.1:{eport}/echo")
            check("echo.curl-upload", c == 200 and v == "2" and b == body, f"{c} {len(b)} B")
            os.unlink(up)
            cl = H2Client(eport)
            bodies = {1: body, 3: os.urandom(70000), 5: b"x" * 5}
            streams = {1: cl.headers("POST", "/echo", [("content-length", str(len(bodies[1])))]),
                       3: cl.headers("POST", "/echo"),  # framed by END_STREAM only
                       5: cl.headers("PUT", "/echo", [("content-length", "5")])}
            res = cl.run(streams, bodies)
            for sid in streams:
                st, b = res[sid]
                check(f"echo.h2-post.{sid}", st == 200 and b == bodies[sid], f"{st} {len(b)} B")
            cl.close()
            c, v, b = curl("--http1.1", "--data-binary", "hello", f"http://127.0.0.1:{eport}/echo")
            check("echo.http1", c == 200 and b == b"hello", f"{c}")
            # Over max_body (1 MiB) by content-length: 413, the stream ended cleanly.
            with tempfile.NamedTemporaryFile(delete=False) as f:
                f.write(os.urandom(2 * 1024 * 1024))
                up = f.name
            # (nghttp: curl 7.88 reports the RST_STREAM NO_ERROR that
            # follows the whole 413, RFC 9113 8.1, as a failed transfer.)
            r = subprocess.run(["nghttp", "-v", "-d", up, f"http://127.0.0.1:{eport}/echo"],
                               capture_output=True, timeout=30)
            os.unlink(up)
            out = r.stdout.decode(errors="replace")
            check("echo.413", ":status: 413" in out and "error_code=NO_ERROR" in out,
                  "413 then RST_STREAM NO_ERROR" if ":status: 413" in out else "no 413")
            # nghttp sends its body at once, in the default 65,535-byte
            # window, before our SETTINGS (a smaller window) arrive.
            body = os.urandom(200000)
            with tempfile.NamedTemporaryFile(delete=False) as f:
                f.write(body)
                up = f.name
            r = subprocess.run(["nghttp", "-d", up, f"http://127.0.0.1:{eport}/echo"],
                               capture_output=True, timeout=30)
            os.unlink(up)
            check("echo.nghttp-before-settings", r.returncode == 0 and r.stdout == body,
                  f"exit {r.returncode} {len(r.stdout)} B")

        # The proxy: HTTP/2 to the client, HTTP/1.1 to the upstream.
        pport = free_port()
        conf = os.path.join(work, "proxy.conf")
        with open(conf, "w") as f:
            f.write(f"site p {{\n  listen 127.0.0.1:{pport};\n  default;\n"
                    f"  route / {{ proxy 127.0.0.1:{port}; }}\n}}\n")
        if start("proxy", [skiff, "serve", "--stack", "linux", "--config", conf, "--stats"], pport):
            pbase = f"http://127.0.0.1:{pport}"
            for name in ("index.html", "mid.bin", "big.bin"):
                c, v, b = curl("--http2-prior-knowledge", f"{pbase}/{name}")
                check(f"proxy.{name}", c == 200 and v == "2" and b == files[name], f"{c} v{v} {len(b)} B")
            r = subprocess.run(["h2load", "-n", "1000", "-c", "4", "-m", "10", pbase + "/small.txt"],
                               capture_output=True, timeout=60)
            out = r.stdout.decode(errors="replace")
            ok = re.search(r"1000 succeeded, 0 failed", out) and re.search(r"status codes: 1000 2xx", out)
            check("proxy.h2load", bool(ok), " ".join(l for l in out.splitlines()
                                                     if l.startswith(("requests:", "status codes:"))))
            reload_goaway(pport, logs["proxy"], files["small.txt"])

        # The session's close lingers (as HTTP/1.1's does): after its GOAWAY
        # ENHANCE_YOUR_CALM the server half-closes and reads on, so the
        # flood's unread frames and those still in flight do not make its
        # kernel send RST, which would make the client drop the GOAWAY.
        lport = free_port()
        if start("linger", [skiff, "serve", "--stack", "linux", "--ip", "127.0.0.1", "--port",
                            str(lport), "--root", root, "--stats"], lport):
            got = [flood_goaway(lport) for _ in range(5)]
            check("linger.goaway", all(g == (11, "eof") for g in got),
                  f"(GOAWAY code, end) x5: {got} (want (11, 'eof'): ENHANCE_YOUR_CALM, then FIN)")
            c, v, b = curl("--http2-prior-knowledge", f"http://127.0.0.1:{lport}/small.txt")
            check("linger.serves", c == 200 and v == "2" and b == files["small.txt"], f"{c} v{v}")
            p, log = logs["linger"]
            stop(p)
            log.seek(0)
            st = stats_of(log.read())
            check("linger.stats", st.get("http.h2_floods", 0) >= 5 and st.get("http.conns_open", -1) == 0,
                  f"http.h2_floods={st.get('http.h2_floods')} (>= 5) "
                  f"conns_open={st.get('http.conns_open')} (0)")

        # The switch: --http2 off answers the preface as HTTP/1.1 does.
        oport = free_port()
        if start("off", [skiff, "serve", "--stack", "linux", "--ip", "127.0.0.1", "--port", str(oport),
                         "--root", root, "--http2", "off"], oport):
            c, v, b = curl("--http2-prior-knowledge", f"http://127.0.0.1:{oport}/small.txt")
            check("off.h2c-refused", v != "2", f"{c} v{v}")
            c, v, b = curl(f"http://127.0.0.1:{oport}/small.txt")
            check("off.http1", c == 200 and b == files["small.txt"], f"{c} v{v}")

        # Over TLS: ALPN offers h2 then http/1.1 by default (RFC 9113 3.2), so curl and h2load
        # get HTTP/2; --tls-alpn http/1.1 and --http2 off make HTTPS HTTP/1.1 only.  The key
        # and certificate are made here and removed with the work folder.
        key, crt = os.path.join(work, "k.pem"), os.path.join(work, "c.pem")
        r = subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
                            "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", crt,
                            "-days", "2", "-subj", "/CN=localhost"], capture_output=True, timeout=60)
        check("tls.cert", r.returncode == 0, r.stderr.decode(errors="replace")[-200:])
        for tag, extra, want in (("tls-default", [], "2"),
                                 ("tls-alpn-http1", ["--tls-alpn", "http/1.1"], "1.1"),
                                 ("tls-http2-off", ["--http2", "off"], "1.1")):
            tport, hport = free_port(), free_port()
            argv = [skiff, "serve", "--stack", "linux", "--ip", "127.0.0.1", "--port", str(hport),
                    "--tls-port", str(tport), "--tls-cert", crt, "--tls-key", key, "--root", root,
                    *extra]
            if not start(tag, argv, tport):
                continue
            tbase = f"https://127.0.0.1:{tport}"
            # curl's default over HTTPS: it offers h2 and http/1.1 and takes what ALPN agrees.
            c, v, b = curl("-k", f"{tbase}/mid.bin")
            check(f"{tag}.curl", c == 200 and v == want and b == files["mid.bin"],
                  f"{c} v{v} {len(b)} B (want v{want})")
            c, v, b = curl("-k", "--http1.1", f"{tbase}/small.txt")
            check(f"{tag}.curl-http1.1", c == 200 and v == "1.1" and b == files["small.txt"],
                  f"{c} v{v}")
            if want == "2":
                n = 3200
                r = subprocess.run(["h2load", "-n", str(n), "-c", "16", "-m", "10", tbase + "/small.txt"],
                                   capture_output=True, timeout=120)
                out = r.stdout.decode(errors="replace")
                ok = re.search(rf"requests: {n} total, {n} started, {n} done, {n} succeeded, 0 failed",
                               out) and re.search(rf"status codes: {n} 2xx", out) and "h2" in out
                check(f"{tag}.h2load", bool(ok), " ".join(l for l in out.splitlines()
                      if l.startswith(("requests:", "status codes:", "Application protocol"))))

        # The counters at exit.
        p, log = logs["files"]
        stop(p)
        log.seek(0)
        st = stats_of(log.read())
        check("stats", st.get("http.h2_sessions", 0) >= 10 and st.get("http.h2_streams", 0) >= 4400
              and st.get("http.h2_sessions_refused", -1) == 0 and st.get("http.h2_conn_errors", -1) == 0,
              " ".join(f"{k}={st.get(k)}" for k in ("http.h2_sessions", "http.h2_streams",
                                                    "http.h2_streams_refused", "http.h2_conn_errors",
                                                    "http.conns_open")))
        check("stats.conns-closed", st.get("http.conns_open", -1) == 0, f"conns_open={st.get('http.conns_open')}")
    finally:
        for p in procs:
            stop(p)
        shutil.rmtree(work, ignore_errors=True)
    return CHECKS.summary()


if __name__ == "__main__":
    sys.exit(main())
