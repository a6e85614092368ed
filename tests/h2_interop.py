#!/usr/bin/env python3
"""h2_interop.py — skiff's HTTP/2 engine (src/h2/conn.h, run by tests/h2_peer.c
on 127.0.0.1) against python3-h2 as the client, then curl, nghttp and h2load.

  tests/h2_interop.py H2_PEER
  (make h2-interop builds H2_PEER, build/test/h2_peer, and runs this)

Each check prints PASS or FAIL, then "h2-interop: N passed, N failed"; exit 1
on any failure.  Checks: concurrent streams, a POST larger than the initial
window, a response over 64 KiB through a 1 KiB client window, SETTINGS
changed mid-response (window to 0 and back, a larger frame size), RST_STREAM
mid-response from either side, GOAWAY both ways, malformed requests refused
per RFC 9113 8.2-8.3 (stream errors, the connection goes on), trailers, and
the defences: rapid reset and PING flood end the connection with
ENHANCE_YOUR_CALM while another connection keeps being served, raw frames
for a CONTINUATION flood, an HPACK bomb (431), SETTINGS and empty DATA
floods, a stream
held at a zero window is reset after the stall timeout, and streams over
SETTINGS_MAX_CONCURRENT_STREAMS are refused.
"""
import collections
import os
import socket
import subprocess
import sys
import time

try:
    import h2.config
    import h2.connection
    import h2.events
    import h2.errors
    import h2.settings
except ImportError:
    sys.exit("h2_interop: python3 module 'h2' is missing: it comes from Debian package "
             "python3-h2 (tools/deps.sh)")

import h2raw
import skt

CHECKS = skt.Checks("h2-interop", pass_detail=False)
check = CHECKS.check
PORT = 0


def big_body(n):
    return bytes(97 + i % 26 for i in range(n))


class Client:
    """One connection: an h2 client state machine on a socket."""

    def __init__(self, settings=None, validate=True, ack_data=True):
        self.sock = socket.create_connection(("127.0.0.1", PORT), timeout=5)
        cfg = h2.config.H2Configuration(client_side=True, header_encoding="utf-8",
                                        validate_outbound_headers=validate,
                                        normalize_outbound_headers=validate)
        self.c = h2.connection.H2Connection(config=cfg)
        self.c.local_settings = h2.settings.Settings(client=True, initial_values=settings or {})
        self.c.initiate_connection()
        self.ack_data = ack_data
        self.bodies, self.headers, self.trailers = {}, {}, {}
        self.ended, self.resets = set(), {}
        self.terminated = None
        self.max_data_frame = 0
        self.eof = False
        self.flush()

    def flush(self):
        out = self.c.data_to_send()
        if out:
            self.sock.sendall(out)

    def raw(self, data):
        self.sock.sendall(data)

    def pump(self, until, timeout=5.0):
        end = time.time() + timeout
        while not until() and time.time() < end and not self.eof:
            self.sock.settimeout(max(0.01, end - time.time()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                self.eof = True
                break
            if not data:
                self.eof = True
                break
            for ev in self.c.receive_data(data):
                self.on_event(ev)
            self.flush()
        return until()

    def on_event(self, ev):
        if isinstance(ev, h2.events.ResponseReceived):
            self.headers[ev.stream_id] = dict(ev.headers)
        elif isinstance(ev, h2.events.DataReceived):
            self.bodies.setdefault(ev.stream_id, bytearray()).extend(ev.data)
            self.max_data_frame = max(self.max_data_frame, len(ev.data))
            if self.ack_data:
                self.c.acknowledge_received_data(ev.flow_controlled_length, ev.stream_id)
        elif isinstance(ev, h2.events.TrailersReceived):
            self.trailers[ev.stream_id] = dict(ev.headers)
        elif isinstance(ev, h2.events.StreamEnded):
            self.ended.add(ev.stream_id)
        elif isinstance(ev, h2.events.StreamReset):
            self.resets[ev.stream_id] = ev.error_code
        elif isinstance(ev, h2.events.ConnectionTerminated):
            self.terminated = ev.error_code

    def get(self, path, end=True, extra=()):
        sid = self.c.get_next_available_stream_id()
        hdrs = [(":method", "GET" if end else "POST"), (":path", path), (":scheme", "http"),
                (":authority", f"127.0.0.1:{PORT}")] + list(extra)
        self.c.send_headers(sid, hdrs, end_stream=end)
        self.flush()
        return sid

    def done(self, sid):
        return sid in self.ended or sid in self.resets

    def close(self):
        self.sock.close()


def test_concurrent():
    cl = Client()
    sids = [cl.get(f"/s{i}") for i in range(10)]
    cl.pump(lambda: all(cl.done(s) for s in sids))
    ok = all(cl.headers.get(s, {}).get(":status") == "200" and
             bytes(cl.bodies.get(s, b"")).startswith(f"method=GET path=/s{i} ".encode())
             for i, s in enumerate(sids))
    check("10 concurrent streams (the limit) on one connection", ok)
    ok = all(cl.headers[s].get("content-length") == str(len(cl.bodies[s])) for s in sids)
    check("content-length matches the body; connection: dropped",
          ok and "connection" not in cl.headers[sids[0]])
    cl.close()


def send_body(cl, sid, body, trailers=None):
    """Send body within the peer's windows, waiting for WINDOW_UPDATEs."""
    off = 0
    while off < len(body):
        win = min(cl.c.local_flow_control_window(sid), cl.c.max_outbound_frame_size)
        if win <= 0:
            if not cl.pump(lambda: cl.c.local_flow_control_window(sid) > 0 or cl.done(sid), 5):
                return False
            if cl.done(sid):
                return False
            continue
        n = min(win, len(body) - off)
        last = off + n == len(body) and trailers is None
        cl.c.send_data(sid, body[off:off + n], end_stream=last)
        cl.flush()
        off += n
    if trailers is not None:
        cl.c.send_headers(sid, trailers, end_stream=True)
        cl.flush()
    return True


def test_post_large():
    cl = Client()
    body = os.urandom(300000)
    sid = cl.get("/echo", end=False, extra=[("content-length", str(len(body)))])
    sent = send_body(cl, sid, body)
    cl.pump(lambda: cl.done(sid))
    want = f"method=POST path=/echo authority=127.0.0.1:{PORT} len={len(body)} sum={sum(body) % 2**32}\n"
    check("POST of 300000 bytes (> 65535 initial window), windows reopened by consumption",
          sent and bytes(cl.bodies.get(sid, b"")).decode() == want, bytes(cl.bodies.get(sid, b"")))
    # two uploads at once share the connection window
    b1, b2 = os.urandom(100000), os.urandom(150000)
    s1 = cl.get("/up1", end=False)
    s2 = cl.get("/up2", end=False)
    ok = send_body(cl, s1, b1) and send_body(cl, s2, b2)
    cl.pump(lambda: cl.done(s1) and cl.done(s2))
    check("two concurrent uploads without content-length",
          ok and f"len={len(b1)} sum={sum(b1) % 2**32}".encode() in bytes(cl.bodies.get(s1, b"")) and
          f"len={len(b2)} sum={sum(b2) % 2**32}".encode() in bytes(cl.bodies.get(s2, b"")))
    cl.close()


def test_big_small_window():
    cl = Client(settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1024})
    sid = cl.get("/big?300000")
    cl.pump(lambda: cl.done(sid), 10)
    check("300000-byte response through a 1024-byte client window",
          bytes(cl.bodies.get(sid, b"")) == big_body(300000) and sid in cl.ended,
          len(cl.bodies.get(sid, b"")))
    check("DATA frames within the window (max seen %d)" % cl.max_data_frame,
          0 < cl.max_data_frame <= 1024)
    cl.close()


def test_settings_mid():
    cl = Client(ack_data=False)
    sid = cl.get("/big?200000")
    cl.pump(lambda: len(cl.bodies.get(sid, b"")) >= 65535, 5)
    got = len(cl.bodies.get(sid, b""))
    check("without WINDOW_UPDATE the server stops at 65535 bytes", got == 65535, got)
    # shrink the stream window below what is in flight: it goes negative
    cl.c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0,
                          h2.settings.SettingCodes.MAX_FRAME_SIZE: 65536})
    cl.flush()
    cl.c.acknowledge_received_data(got, sid)
    cl.flush()
    cl.pump(lambda: False, 0.3)
    check("INITIAL_WINDOW_SIZE 0: no more DATA even with the connection window open",
          len(cl.bodies[sid]) == got, len(cl.bodies[sid]))
    cl.ack_data = True
    cl.c.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 1 << 20})
    cl.flush()
    cl.pump(lambda: cl.done(sid), 10)
    check("INITIAL_WINDOW_SIZE raised: the body completes, intact",
          bytes(cl.bodies[sid]) == big_body(200000) and sid in cl.ended)
    check("MAX_FRAME_SIZE 65536 honoured and used (largest DATA %d)" % cl.max_data_frame,
          16384 < cl.max_data_frame <= 65536)
    cl.close()


def test_rst():
    cl = Client(settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 4096})
    sid = cl.get("/big?1000000")
    cl.pump(lambda: len(cl.bodies.get(sid, b"")) > 0)
    cl.c.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
    cl.flush()
    s2 = cl.get("/after-reset")
    cl.pump(lambda: cl.done(s2))
    check("client RST_STREAM mid-response; the connection serves the next stream",
          bytes(cl.bodies.get(s2, b"")).startswith(b"method=GET path=/after-reset"))
    s3 = cl.get("/rst")
    cl.pump(lambda: cl.done(s3))
    check("server RST_STREAM (CANCEL) mid-response reaches the client",
          cl.resets.get(s3) == h2.errors.ErrorCodes.CANCEL and len(cl.bodies.get(s3, b"")) == 100,
          (cl.resets.get(s3), len(cl.bodies.get(s3, b""))))
    cl.close()


def test_goaway():
    cl = Client()
    sid = cl.get("/before-goaway")
    cl.pump(lambda: cl.done(sid))
    cl.c.close_connection()
    cl.flush()
    cl.pump(lambda: False, 2)
    check("client GOAWAY: the server closes the idle connection", cl.eof)
    cl.close()
    cl = Client(validate=False)
    cl.raw(bytes.fromhex("000005010500000002") + b"\x82\x84\x86\x41\x00")  # HEADERS on stream 2
    cl.pump(lambda: cl.terminated is not None)
    check("HEADERS on an even stream: GOAWAY PROTOCOL_ERROR",
          cl.terminated == h2.errors.ErrorCodes.PROTOCOL_ERROR, cl.terminated)
    cl.close()


def test_malformed():
    cl = Client(validate=False)
    cases = [
        ("connection-specific field", [("connection", "close")]),
        ("te other than trailers", [("te", "gzip")]),
        ("upper-case name", [("X-Upper", "1")]),
        ("transfer-encoding", [("transfer-encoding", "chunked")]),
    ]
    for name, extra in cases:
        sid = cl.get("/m", extra=extra)
        cl.pump(lambda: cl.done(sid))
        check(f"malformed ({name}): RST_STREAM PROTOCOL_ERROR",
              cl.resets.get(sid) == h2.errors.ErrorCodes.PROTOCOL_ERROR, cl.resets.get(sid))
    sid = cl.c.get_next_available_stream_id()
    cl.c.send_headers(sid, [(":method", "GET"), (":scheme", "http")], end_stream=True)
    cl.flush()
    cl.pump(lambda: cl.done(sid))
    check("malformed (no :path): RST_STREAM PROTOCOL_ERROR",
          cl.resets.get(sid) == h2.errors.ErrorCodes.PROTOCOL_ERROR)
    sid = cl.get("/cl", end=False, extra=[("content-length", "10")])
    cl.c.send_data(sid, b"12345", end_stream=True)
    cl.flush()
    cl.pump(lambda: cl.done(sid))
    check("content-length 10 with 5 bytes of DATA: RST_STREAM PROTOCOL_ERROR",
          cl.resets.get(sid) == h2.errors.ErrorCodes.PROTOCOL_ERROR, cl.resets.get(sid))
    sid = cl.get("/ok")
    cl.pump(lambda: cl.done(sid))
    check("the connection serves a good request after the refusals",
          bytes(cl.bodies.get(sid, b"")).startswith(b"method=GET path=/ok"))
    cl.close()


def test_trailers():
    cl = Client()
    sid = cl.get("/trailers", end=False, extra=[("te", "trailers")])
    send_body(cl, sid, b"abc", trailers=[("x-checksum", "1"), ("x-other", "2")])
    cl.pump(lambda: cl.done(sid))
    check("trailers accepted and delivered to the handler",
          b"len=3" in bytes(cl.bodies.get(sid, b"")) and
          b"trailers=x-checksum,x-other" in bytes(cl.bodies.get(sid, b"")),
          bytes(cl.bodies.get(sid, b"")))
    sid = cl.get("/trailers", end=False)
    cl.c.send_data(sid, b"x")
    cl.flush()
    # h2 will not send it: a raw HEADERS (END_HEADERS only) holding
    # "x-t: 1" as a literal without indexing
    blk = b"\x00\x03x-t\x011"
    cl.raw(len(blk).to_bytes(3, "big") + b"\x01\x04" + sid.to_bytes(4, "big") + blk)
    cl.pump(lambda: cl.done(sid) or cl.terminated is not None)
    check("trailers without END_STREAM refused (RST_STREAM PROTOCOL_ERROR)",
          cl.resets.get(sid) == h2.errors.ErrorCodes.PROTOCOL_ERROR, cl.resets.get(sid))
    cl.close()


def test_defences(log):
    # rapid reset: open and reset streams at once, over the budget (50)
    other = Client()
    cl = Client()
    for _ in range(120):
        sid = cl.c.get_next_available_stream_id()
        cl.c.send_headers(sid, [(":method", "GET"), (":path", "/x"), (":scheme", "http"),
                                (":authority", "a")], end_stream=True)
        cl.c.reset_stream(sid, h2.errors.ErrorCodes.CANCEL)
    try:
        cl.flush()
    except OSError:
        pass
    cl.pump(lambda: cl.terminated is not None or cl.eof)
    check("rapid reset: GOAWAY ENHANCE_YOUR_CALM",
          cl.terminated == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM, cl.terminated)
    cl.close()
    sid = other.get("/still-served")
    other.pump(lambda: other.done(sid))
    check("another connection is still served after the attack",
          bytes(other.bodies.get(sid, b"")).startswith(b"method=GET path=/still-served"))
    other.close()
    # PING flood (budget 20)
    cl = Client()
    for i in range(60):
        cl.c.ping(i.to_bytes(8, "big"))
    try:
        cl.flush()
    except OSError:
        pass
    cl.pump(lambda: cl.terminated is not None or cl.eof)
    check("PING flood: GOAWAY ENHANCE_YOUR_CALM",
          cl.terminated == h2.errors.ErrorCodes.ENHANCE_YOUR_CALM, cl.terminated)
    cl.close()
    # a stream held at a zero window (stall 500 ms)
    cl = Client(settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    sid = cl.get("/big?10000")
    t0 = time.time()
    cl.pump(lambda: cl.done(sid), 5)
    dt = time.time() - t0
    check("stream held at a zero window: RST_STREAM CANCEL after the stall timeout (%.2f s)" % dt,
          cl.resets.get(sid) == h2.errors.ErrorCodes.CANCEL and 0.4 < dt < 3, cl.resets.get(sid))
    cl.close()
    # SETTINGS_MAX_CONCURRENT_STREAMS (the peer runs with 10)
    cl = Client(settings={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 0})
    sids = []
    cl.pump(lambda: cl.c.remote_settings.max_concurrent_streams == 10)
    for _ in range(12):
        sid = cl.c.get_next_available_stream_id()
        # bypass h2's own check of the server's limit
        cl.c.remote_settings._settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = \
            collections.deque([1000])
        cl.c.send_headers(sid, [(":method", "GET"), (":path", "/big?100"), (":scheme", "http"),
                                (":authority", "a")], end_stream=True)
        sids.append(sid)
    cl.flush()
    cl.pump(lambda: all(s in cl.resets for s in sids[10:]), 3)
    check("streams over MAX_CONCURRENT_STREAMS (10): REFUSED_STREAM, the first 10 kept",
          all(cl.resets.get(s) == h2.errors.ErrorCodes.REFUSED_STREAM for s in sids[10:]) and
          not any(s in cl.resets for s in sids[:10]), cl.resets)
    cl.close()


class Raw(h2raw.Conn):
    """A client of raw frames (tests/h2raw.py), for what h2 will not send:
    floods and bombs.  It keeps every frame it reads."""

    def __init__(self):
        super().__init__(PORT)

    def goaway(self):
        for t, _, _, p in self.frames:
            if t == h2raw.GOAWAY:
                return int.from_bytes(p[4:8], "big")
        return None

    def status(self, sid):
        import hpack
        dec = hpack.Decoder()
        for t, _, s, p in self.frames:
            if t == h2raw.HEADERS:
                hdrs = dict(dec.decode(p))
                if s == sid:
                    return hdrs.get(b":status", hdrs.get(":status"))
        return None


def test_raw_defences():
    calm = h2.errors.ErrorCodes.ENHANCE_YOUR_CALM
    # CONTINUATION flood: a header block that never ends
    r = Raw()
    r.send_frame(h2raw.HEADERS, 0, 1, b"\x82\x86\x84")
    for _ in range(100):
        r.send_frame(h2raw.CONTINUATION, 0, 1)
    r.pump(lambda: r.goaway() is not None)
    check("CONTINUATION flood (100 empty frames): GOAWAY ENHANCE_YOUR_CALM", r.goaway() == calm,
          r.goaway())
    r.close()
    # HPACK bomb: one 4000-byte entry, then a block naming it 100 times
    r = Raw()
    eh_es = h2raw.END_HEADERS | h2raw.END_STREAM
    v = 4000
    lit = b"\x40\x03x-b\x7f" + bytes([((v - 127) & 0x7f) | 0x80, (v - 127) >> 7]) + b"v" * v
    r.send_frame(h2raw.HEADERS, eh_es, 1, b"\x82\x86\x84" + lit)
    r.send_frame(h2raw.HEADERS, eh_es, 3, b"\x82\x86\x84" + b"\xbe" * 100)
    r.send_frame(h2raw.HEADERS, eh_es, 5, b"\x82\x86\x84")
    r.pump(lambda: r.status(5) is not None)
    check("HPACK bomb (a 4,000-byte entry named 100 times): 431, the connection serves on",
          r.status(1) in (b"200", "200") and r.status(3) in (b"431", "431") and
          r.status(5) in (b"200", "200") and r.goaway() is None,
          (r.status(1), r.status(3), r.status(5)))
    r.close()
    # SETTINGS flood and empty DATA flood
    r = Raw()
    for _ in range(200):
        r.send_frame(h2raw.SETTINGS, 0, 0)
    r.pump(lambda: r.goaway() is not None)
    check("SETTINGS flood (200): GOAWAY ENHANCE_YOUR_CALM", r.goaway() == calm, r.goaway())
    r.close()
    r = Raw()
    r.send_frame(h2raw.HEADERS, h2raw.END_HEADERS, 1, b"\x83\x86\x84")  # POST, body to come
    for _ in range(300):
        r.send_frame(h2raw.DATA, 0, 1)
    r.pump(lambda: r.goaway() is not None)
    check("empty DATA flood (300): GOAWAY ENHANCE_YOUR_CALM", r.goaway() == calm, r.goaway())
    r.close()


def test_tools():
    curl = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "-", "-w", "%{http_version}",
                           f"http://127.0.0.1:{PORT}/big?100000"], capture_output=True, timeout=20)
    check("curl --http2-prior-knowledge: 100000-byte body over HTTP/2",
          curl.stdout == big_body(100000) + b"2", curl.stdout[-20:])
    curl = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "--data-binary", "@-",
                           f"http://127.0.0.1:{PORT}/post"], input=b"z" * 70000,
                          capture_output=True, timeout=20)
    check("curl POST of 70000 bytes", f"len=70000 sum={70000 * 122}".encode() in curl.stdout,
          curl.stdout)
    ng = subprocess.run(["nghttp", f"http://127.0.0.1:{PORT}/big?150000"], capture_output=True,
                        timeout=20)
    check("nghttp: 150000-byte body", ng.stdout == big_body(150000), len(ng.stdout))
    h2l = subprocess.run(["h2load", "-n", "5000", "-c", "4", "-m", "10",
                          f"http://127.0.0.1:{PORT}/hello"], capture_output=True, text=True, timeout=60)
    line = [l for l in h2l.stdout.splitlines() if l.startswith("requests:")]
    check("h2load -n 5000 -c 4 -m 10: 5000 succeeded, 0 failed",
          bool(line) and "5000 succeeded, 0 failed" in line[0], line)


def main():
    global PORT
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    peer = subprocess.Popen([sys.argv[1], "--max-streams", "10", "--reset-budget", "50",
                             "--ping-budget", "20", "--stall-ms", "500"],
                            stdout=subprocess.PIPE, text=True)
    try:
        PORT = int(peer.stdout.readline().split()[1])
        print(f"h2-interop: python3-h2 {h2.__version__}, h2_peer on 127.0.0.1:{PORT}")
        for t in (test_concurrent, test_post_large, test_big_small_window, test_settings_mid,
                  test_rst, test_goaway, test_malformed, test_trailers):
            t()
        test_defences(None)
        test_raw_defences()
        test_tools()
    finally:
        peer.terminate()
        out = peer.communicate(timeout=5)[0]
    closed = [l for l in out.splitlines() if l.startswith("closed")]
    check("the peer counted the rapid reset and the PING flood",
          any("rapid_reset=1" in l for l in closed) and any("ping_flood=1" in l for l in closed))
    check("the peer counted the refused and the stalled streams",
          any("refused=2" in l for l in closed) and any("stall_resets=1" in l for l in closed))
    check("the peer counted the CONTINUATION flood and the HPACK bomb",
          any("continuation_flood=1" in l for l in closed) and
          any("header_list_large=1" in l for l in closed))
    sys.exit(CHECKS.summary())


if __name__ == "__main__":
    main()
