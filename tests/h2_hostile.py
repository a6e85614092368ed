#!/usr/bin/python3
"""h2_hostile.py — hostile HTTP/2 clients against the real server, written
with raw frames: the h2-hostile phase of `make test` (docs/testing.md).

  tests/h2_hostile.py SKIFF     (make h2-hostile: SKIFF is build/skiff)

Runs `SKIFF serve --root DIR` and `SKIFF serve --config FILE` (the same
engine, http/app.c, with short send/header/idle timeouts from the file) on
ephemeral 127.0.0.1 ports (h2c, prior knowledge; kernel sockets, no root),
each with --stats and --metrics, and sends one attack per check (issue 33's
defences, docs/h2.md "Defences"):

  rapid-reset          300 HEADERS + RST_STREAM pairs (budget 200 a second)
  continuation-flood   HEADERS then 100 empty CONTINUATIONs (32 a block)
  header-block-large   a 24,000-byte block in 3 frames (16,384 a block)
  hpack-bomb           a 4,000-byte table entry, then 20 requests naming it
                       100 times each (431 each, the connection goes on)
  settings-flood       300 SETTINGS (50 a second)
  ping-flood           300 PINGs (50 a second)
  empty-data-flood     300 empty DATA frames on a POST (100 a second)
  window-update-flood  3,000 WINDOW_UPDATEs (2,000 a second)
  priority-flood       1,500 PRIORITY frames (1,000 a second)
  slow-preface         half the client preface, then silence
  slow-header-block    HEADERS without END_HEADERS, then silence
  idle-pings           no stream, a PING every 0.5 s (under the budget)
  zero-window-stall    (--config: send_timeout 2s) a stream held at a zero
                       window: RST_STREAM CANCEL, the connection goes on
  no-read              (--config) 100 answers asked for, nothing read: the
                       send timeout (2 s) ends the connection
  too-many-streams     SETTINGS_MAX_CONCURRENT_STREAMS + 10 streams held at
                       a zero window: the extra ones REFUSED_STREAM
  sessions-exhausted   (--root) the pool of 128 sessions held by idle
                       connections: 5 more closed, HTTP/1.1 served, the
                       idle timeout (3 s) frees them

Each check passes when all of these hold:
  - the attack gets its answer: GOAWAY with the expected code and the
    connection closed within a bound (of the budget: 2 s after the last
    frame; of a timeout: the timeout plus 2 s), or the RST_STREAMs / 431s
    expected with the connection kept;
  - an honest connection opened before the attack and held through it gets
    a 200 and the file afterwards, and so does a new one (curl
    --http2-prior-knowledge);
  - the server's peak resident memory (VmHWM, /proc/PID/status) stays under
    a bound derived from its configuration: the resident size after start
    plus, for what the attack can hold at once, HTTP/2 sessions (one per
    connection: H2_SESSION bytes) and stream states (one per stream held:
    H2_STATE bytes), plus H2_SLACK; under ASan the shadow (one byte per
    eight) on top;
  - the server's counter for that defence (the metrics page, read while the
    attacker's connection is still open where the attack keeps it) moved
    by what the attack earned.
At the end the counters printed by --stats at SIGTERM agree with the
metrics page, and no connection is left.

Needs Debian's python3 (python3-hpack): mk/h2.mk runs it with $(DEB_PYTHON3).
Prints PASS/FAIL lines and "h2-hostile: N passed, M failed"; exit 1 on a
failure, 2 on bad usage.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

try:
    import hpack
except ImportError:
    sys.exit("h2_hostile: python3 module 'hpack' is missing: it comes from Debian package "
             "python3-hpack (tools/deps.sh)")

import skt
from h2raw import (ACK, CANCEL, CONTINUATION, DATA, END_HEADERS, END_STREAM, ENHANCE_YOUR_CALM,
                   GOAWAY, HEADERS, NO_ERROR, PING, PREFACE, PRIORITY, REFUSED_STREAM, RST_STREAM,
                   SETTINGS, WINDOW_UPDATE, Conn, frame)

CHECKS = skt.Checks("h2-hostile", prefix="h2-hostile.")
check = CHECKS.check

# Memory, from the server's configuration (src/http/app.c, docs/h2.md):
# a session is a struct http_app_h2 (struct h2_conn, 141,160 bytes on
# x86-64, and its stream table): "about 150 KiB"; a stream's state is a
# connection state of the pool: its rbuf (rbuf_size 32 KiB), obuf
# (out_size 16 KiB), header buffer and struct, each under 4 KiB.  Both come
# from the engine's block, resident only once touched; nothing else grows
# with what a peer sends.  The slack covers what is not per connection: a
# metrics page answered, the kernel-socket loop's buffers, pages of the
# block touched only in part.
H2_SESSION = 150 * 1024
H2_STATE = 32768 + 16384 + 4096 + 4096
H2_SLACK = 2 * 1024 * 1024

WINDOW0 = (4).to_bytes(2, "big") + (0).to_bytes(4, "big")  # SETTINGS_INITIAL_WINDOW_SIZE 0
FILES = {"x.txt": b"hello from skiff over h2\n", "big.bin": os.urandom(300000)}


def lit(idx, value):
    """A literal without indexing, the name by static index idx (< 15),
    the value raw (< 127 bytes)."""
    return bytes([idx, len(value)]) + value


def req_block(path, post=False):
    """:method GET/POST, :scheme http, :path, :authority (static indices
    and literals: no dynamic table entry)."""
    return bytes([0x83 if post else 0x82, 0x86]) + lit(4, path.encode()) + lit(1, b"127.0.0.1")


def hpack_int(v, prefix_bits, first):
    top = (1 << prefix_bits) - 1
    if v < top:
        return bytes([first | v])
    out, v = [first | top], v - top
    while v >= 128:
        out.append((v & 0x7f) | 0x80)
        v >>= 7
    return bytes(out + [v])


class Raw(Conn):
    """A client speaking raw frames (tests/h2raw.py); it decodes what comes
    back (every header block through one hpack.Decoder, in order)."""

    def __init__(self, port, settings=b"", preface=True):
        self.dec = hpack.Decoder()
        self.block, self.block_sid = b"", 0
        self.status, self.body, self.ended, self.resets = {}, {}, set(), {}
        self.goaway = None          # (last stream id, code)
        self.server_settings = None  # {id: value}
        self.next_sid = 1
        super().__init__(port, settings, preface)

    def get(self, path="/x.txt"):
        """A GET on the next stream: its id."""
        sid, self.next_sid = self.next_sid, self.next_sid + 2
        self.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, req_block(path)))
        return sid

    def on_frame(self, t, fl, sid, p):
        if t in (HEADERS, CONTINUATION):
            self.block += p
            self.block_sid = sid
            if t == HEADERS and fl & END_STREAM:
                self.ended.add(sid)
            if fl & END_HEADERS:
                hdrs = dict(self.dec.decode(self.block, raw=True))
                self.block = b""
                if b":status" in hdrs:
                    self.status[sid] = hdrs[b":status"].decode()
        elif t == DATA:
            self.body[sid] = self.body.get(sid, b"") + p
            if fl & END_STREAM:
                self.ended.add(sid)
        elif t == RST_STREAM:
            self.resets[sid] = int.from_bytes(p[:4], "big")
        elif t == GOAWAY:
            self.goaway = (int.from_bytes(p[:4], "big") & 0x7fffffff,
                           int.from_bytes(p[4:8], "big"))
        elif t == SETTINGS and not fl & ACK:
            self.server_settings = {int.from_bytes(p[i:i + 2], "big"):
                                    int.from_bytes(p[i + 2:i + 6], "big")
                                    for i in range(0, len(p), 6)}


class Honest:
    """A client that keeps asking while an attack runs (a GET each second on
    one connection, opened before the attack): each answer must be 200 and
    the file.  It also keeps its connection from the idle timeout."""

    def __init__(self, port):
        self.r = Raw(port)
        self.r.pump(lambda: self.r.server_settings is not None, 5)
        self.sids, self.last = [], 0.0

    def tick(self):
        if time.monotonic() - self.last >= 1.0:
            self.last = time.monotonic()
            self.sids.append(self.r.get())
        self.r.pump(lambda: all(s in self.r.ended or s in self.r.resets for s in self.sids), 0.01)

    def wait(self, r, until, timeout):
        """Pump attacker r until until() or timeout, ticking meanwhile."""
        end = time.monotonic() + timeout
        while not until() and not r.eof and time.monotonic() < end:
            self.tick()
            r.pump(until, min(0.2, max(0.0, end - time.monotonic())))
        return until()

    def finish(self):
        """One more GET, every answer in: (ok, how many)."""
        self.last = 0.0
        self.tick()
        r = self.r
        r.pump(lambda: all(s in r.ended or s in r.resets for s in self.sids), 5)
        ok = r.goaway is None and not r.eof and all(
            r.status.get(s) == "200" and r.body.get(s) == FILES["x.txt"] for s in self.sids)
        r.close()
        return ok, len(self.sids)


class Server:
    def __init__(self, skiff, name, work, root, conf=None, extra=()):
        self.name = name
        self.port, self.mport = skt.free_port(), skt.free_port()
        if conf is not None:
            path = os.path.join(work, name + ".conf")
            with open(path, "w") as f:
                f.write(conf.format(port=self.port, root=root))
            where = ["--config", path]
        else:
            where = ["--ip", "127.0.0.1", "--port", str(self.port), "--root", root, *extra]
        self.argv = [skiff, "serve", "--stack", "linux", *where, "--stats", "--metrics",
                     f"127.0.0.1:{self.mport}", "--control", "none"]
        self.log = open(os.path.join(work, name + ".log"), "w+")
        self.proc = subprocess.Popen(self.argv, stdout=self.log, stderr=subprocess.STDOUT)
        self.ok = self._wait()

    def _wait(self):
        end = time.monotonic() + 20
        while time.monotonic() < end and self.proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                self.metrics()
                return True
            except OSError:
                time.sleep(0.05)
        return False

    def metrics(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.mport}/metrics", timeout=5) as r:
            text = r.read().decode()
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"^skiff_(\w+?)(?:_total)? (\d+)$", text, re.M)}

    def mem(self):
        """(VmRSS, VmHWM) in bytes."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            st = dict(l.split(":", 1) for l in f if ":" in l)
        return int(st["VmRSS"].split()[0]) * 1024, int(st["VmHWM"].split()[0]) * 1024

    def stop(self):
        """SIGTERM (drain); the --stats lines."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.seek(0)
        text = self.log.read()
        return {m.group(1): int(m.group(2))
                for m in re.finditer(r"^(\S+)\s+(\d+)\s*$", text, re.M)}, text


def curl_ok(port):
    r = subprocess.run(["curl", "-s", "-m", "10", "--http2-prior-knowledge", "-o", "-", "-w",
                        "\n%{http_code} %{http_version}", f"http://127.0.0.1:{port}/x.txt"],
                       capture_output=True, timeout=20)
    return r.stdout == FILES["x.txt"] + b"\n200 2", r.stdout[-12:]


class Run:
    """One server and what an attack may cost on it."""

    def __init__(self, srv, asan):
        self.srv = srv
        self.asan = asan
        # The baseline: the server after start and one honest HTTP/2
        # exchange (a session and a state touched).
        h = Raw(srv.port)
        h.get()
        h.pump(lambda: 1 in h.ended, 5)
        h.close()
        curl_ok(srv.port)
        time.sleep(0.2)
        self.base = srv.mem()[0]
        self.max_streams = (h.server_settings or {}).get(3, 0)

    def bound(self, sessions, states):
        extra = sessions * H2_SESSION + states * H2_STATE + H2_SLACK
        if self.asan:
            extra += extra // 8  # the shadow of what is touched
        return self.base + extra

    def attack(self, name, fn, counter, want, sessions=3, states=4):
        """Run fn(honest) -> (ok, detail, live metrics or None); check the
        honest side, the counter, the memory."""
        srv = self.srv
        m0 = srv.metrics()
        honest = Honest(srv.port)
        t0 = time.monotonic()
        try:
            ok, detail, live = fn(honest)
        except OSError as e:
            ok, detail, live = False, f"attack raised {e!r}", None
        took = time.monotonic() - t0
        h_ok, h_n = honest.finish()
        c_ok, c_out = curl_ok(srv.port)
        m1 = live if live is not None else srv.metrics()
        got = m1.get(counter, 0) - m0.get(counter, 0)
        lo, hi = want if isinstance(want, tuple) else (want, want)
        rss, hwm = srv.mem()
        lim = self.bound(sessions, states)
        check(f"{srv.name}.{name}",
              ok and h_ok and c_ok and lo <= got <= hi and hwm <= lim and srv.proc.poll() is None,
              f"{detail}; honest conn {f'{h_n} x 200' if h_ok else 'NOT served'}, curl "
              f"{'200' if c_ok else c_out}; {counter} +{got} (want +{lo}{'' if lo == hi else f'..{hi}'}"
              f"{', read live' if live is not None else ''}); VmHWM {hwm / 2**20:.1f} MiB <= "
              f"{lim / 2**20:.1f} MiB ({'ok' if hwm <= lim else 'OVER'}); {took:.2f} s")


def expect_goaway(r, honest, code, within, t_sent):
    """The attacker's connection: GOAWAY code, then closed within `within`
    seconds of t_sent.  (ok, detail)."""
    honest.wait(r, lambda: r.eof, within + 1)
    closed = r.eof_at is not None and r.eof_at - t_sent <= within
    got = r.goaway[1] if r.goaway else None
    ok = got == code and closed
    dt = f"{r.eof_at - t_sent:.2f} s" if r.eof_at else "not closed"
    return ok, f"GOAWAY {got if got is None else hex(got)} (want {hex(code)}), closed after {dt}"


def flood(frames, code=ENHANCE_YOUR_CALM, settings=b""):
    def fn(honest, frames=frames):
        r = Raw(RUN.srv.port, settings=settings)
        r.send(b"".join(frames))
        t = time.monotonic()
        ok, d = expect_goaway(r, honest, code, 2.0, t)
        r.close()
        return ok, f"{len(frames)} frames: {d}", None
    return fn


def attacks(run, short_send):
    srv = run.srv
    port = srv.port
    global RUN
    RUN = run

    # Rapid reset (CVE-2023-44487): open and cancel at once.  The requests
    # are for a file the server cannot finish (the client's stream window
    # is 0), so each reset cancels work under way; a request already
    # answered whole is closed before its RST_STREAM is read, which the
    # engine ignores (RFC 9113 5.1): that is a plain request flood, bounded
    # by SETTINGS_MAX_CONCURRENT_STREAMS like any other.
    pairs = []
    for i in range(300):
        sid = 1 + 2 * i
        pairs.append(frame(HEADERS, END_HEADERS | END_STREAM, sid, req_block("/big.bin")))
        pairs.append(frame(RST_STREAM, 0, sid, CANCEL.to_bytes(4, "big")))
    run.attack("rapid-reset", flood(pairs, settings=WINDOW0), "http_h2_rapid_reset", 1)

    blk = req_block("/x.txt")
    run.attack("continuation-flood",
               flood([frame(HEADERS, END_STREAM, 1, blk)] + [frame(CONTINUATION, 0, 1)] * 100),
               "http_h2_header_large", 1)
    big = b"\x00\x05x-pad" + hpack_int(23950, 7, 0) + b"p" * 23950
    block = blk + big
    parts = [block[:8000], block[8000:16000], block[16000:]]
    run.attack("header-block-large",
               flood([frame(HEADERS, END_STREAM, 1, parts[0]), frame(CONTINUATION, 0, 1, parts[1]),
                      frame(CONTINUATION, END_HEADERS, 1, parts[2])]),
               "http_h2_header_large", 1)

    def bomb(honest):
        r = Raw(port)
        # One 4,000-byte entry (literal with incremental indexing, a new
        # name), in a request that is itself within the bounds: 200.
        entry = b"\x40\x03x-b" + hpack_int(4000, 7, 0) + b"v" * 4000
        r.send(frame(HEADERS, END_HEADERS | END_STREAM, 1, blk + entry))
        honest.wait(r, lambda: 1 in r.ended, 5)
        sids = [3 + 2 * i for i in range(20)]
        for sid in sids:  # each names it 100 times: 403,500 bytes decoded
            r.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, blk + b"\xbe" * 100))
        honest.wait(r, lambda: all(s in r.ended or s in r.resets for s in sids), 5)
        r.next_sid = sids[-1] + 2
        r.get()
        honest.wait(r, lambda: sids[-1] + 2 in r.ended, 5)
        live = srv.metrics()  # the attacker's connection is still open
        n431 = sum(r.status.get(s) == "431" for s in sids)
        ok = r.status.get(1) == "200" and n431 == len(sids) and \
            r.status.get(sids[-1] + 2) == "200" and r.goaway is None and not r.eof
        r.close()
        return ok, (f"entry request {r.status.get(1)}, {n431}/{len(sids)} bombs 431, then "
                    f"{r.status.get(sids[-1] + 2)} on the same connection, GOAWAY {r.goaway}"), live
    run.attack("hpack-bomb", bomb, "http_h2_header_large", 20)

    run.attack("settings-flood", flood([frame(SETTINGS, 0, 0)] * 300), "http_h2_floods", 1)
    run.attack("ping-flood", flood([frame(PING, 0, 0, i.to_bytes(8, "big")) for i in range(300)]),
               "http_h2_floods", 1)
    run.attack("empty-data-flood",
               flood([frame(HEADERS, END_HEADERS, 1, req_block("/x.txt", post=True))] +
                     [frame(DATA, 0, 1)] * 300), "http_h2_floods", 1)
    run.attack("window-update-flood",
               flood([frame(WINDOW_UPDATE, 0, 0, (1).to_bytes(4, "big"))] * 3000),
               "http_h2_floods", 1)
    run.attack("priority-flood",
               flood([frame(PRIORITY, 0, 1 + 2 * i, b"\x00\x00\x00\x00\x10") for i in range(1500)]),
               "http_h2_floods", 1)

    # Timeouts (the servers run with header 2 s, idle 3 s).
    def slow_preface(honest):
        r = Raw(port, preface=False)
        r.send(PREFACE[:12])
        t = time.monotonic()
        honest.wait(r, lambda: r.eof, 6)
        dt = r.eof_at - t if r.eof_at else None
        ok = dt is not None and 1.5 <= dt <= 4.0
        r.close()
        return ok, "12 of the preface's 24 bytes: closed after " + (f"{dt:.2f} s" if dt else "never"), None
    run.attack("slow-preface", slow_preface, "http_timeout_header", 1)

    def slow_block(honest):
        r = Raw(port)
        r.send(frame(HEADERS, END_STREAM, 1, blk[:3]))
        t = time.monotonic()
        ok, d = expect_goaway(r, honest, ENHANCE_YOUR_CALM, 4.0, t)
        ok = ok and r.eof_at - t >= 1.5
        r.close()
        return ok, "a header block left open: " + d, None
    run.attack("slow-header-block", slow_block, "http_h2_timeouts", 1)

    def idle_pings(honest):
        r = Raw(port)
        t = time.monotonic()
        n = 0
        while not r.eof and time.monotonic() - t < 8:
            r.send(frame(PING, 0, 0, n.to_bytes(8, "big")))
            n += 1
            honest.wait(r, lambda: r.eof, 0.5)
        ok = r.goaway is not None and r.goaway[1] == NO_ERROR and r.eof and \
            2.5 <= r.eof_at - t <= 5.0
        r.close()
        dt = f"{r.eof_at - t:.2f} s" if r.eof_at else "never"
        return ok, f"{n} PINGs, one per 0.5 s: GOAWAY {r.goaway}, closed after {dt}", None
    run.attack("idle-pings", idle_pings, "http_h2_timeouts", 1)

    if short_send:
        def stall(honest):
            # INITIAL_WINDOW_SIZE 0: the answer's HEADERS go, no DATA can.
            r = Raw(port, settings=WINDOW0)
            r.get("/big.bin")
            t = time.monotonic()
            honest.wait(r, lambda: 1 in r.resets, 6)
            dt = time.monotonic() - t
            live = srv.metrics()
            ok = r.status.get(1) == "200" and r.resets.get(1) == CANCEL and 1.5 <= dt <= 4.5 and \
                not r.eof and r.goaway is None and not r.body.get(1)
            r.close()
            return ok, (f"HEADERS {r.status.get(1)}, RST_STREAM {r.resets.get(1)} (want {CANCEL}) "
                        f"after {dt:.2f} s, connection kept"), live
        run.attack("zero-window-stall", stall, "http_h2_timeouts", 1)

    if short_send:
        def noread(honest):
            # Every window wide open, 100 answers of 300,000 bytes asked
            # for, and nothing read: the server's writes stop at the full
            # socket, and send_timeout (2 s) ends the connection.
            r = Raw(port, settings=(4).to_bytes(2, "big") + (2**31 - 1).to_bytes(4, "big"))
            r.send(frame(WINDOW_UPDATE, 0, 0, (2**31 - 1 - 65535).to_bytes(4, "big")))
            for _ in range(100):
                r.get("/big.bin")
            t, m0 = time.monotonic(), srv.metrics()
            gone = None
            while time.monotonic() - t < 8:
                honest.tick()
                m = srv.metrics()
                if m.get("http_timeout_send", 0) > m0.get("http_timeout_send", 0):
                    gone = time.monotonic() - t
                    break
                time.sleep(0.2)
            honest.wait(r, lambda: r.eof, 5)  # what was sent, then the close
            ok = gone is not None and gone <= 4.5 and r.eof
            r.close()
            return ok, ("100 x /big.bin asked, nothing read: closed by the send timeout after "
                        + (f"{gone:.2f} s" if gone is not None else "never")), None
        # Each stream whose answer waits counts its send timeout, and the
        # connection may count its own: 1 to 101.
        run.attack("no-read", noread, "http_timeout_send", (1, 101), states=104)

    ms = run.max_streams

    def many(honest):
        r = Raw(port, settings=WINDOW0)
        sids = [1 + 2 * i for i in range(ms + 10)]
        r.send(b"".join(frame(HEADERS, END_HEADERS | END_STREAM, s, req_block("/big.bin"))
                        for s in sids))
        honest.wait(r, lambda: all(s in r.status or s in r.resets for s in sids), 5)
        held = sum(r.status.get(s) == "200" and s not in r.resets for s in sids[:ms])
        refused = sum(r.resets.get(s) == REFUSED_STREAM for s in sids[ms:])
        # The honest connection is served while the streams are held.
        hr = honest.r
        hs = hr.get()
        honest.sids.append(hs)
        hr.pump(lambda: hs in hr.ended, 5)
        during = hr.status.get(hs) == "200"
        live = srv.metrics()
        ok = ms > 0 and held == ms and refused == 10 and r.goaway is None and during
        r.close()
        return ok, (f"{ms} streams held (SETTINGS_MAX_CONCURRENT_STREAMS {ms}): {held} answered, "
                    f"{refused}/10 over it REFUSED_STREAM, honest stream during it "
                    f"{hr.status.get(hs)}"), live
    run.attack("too-many-streams", many, "http_h2_streams_refused", 10, states=ms + 4)

    if not short_send:
        # Every HTTP/2 session of the pool held by idle connections (the
        # hosted pool: --max-conns, at most 128: sites_host.c): a connection
        # more is closed (HTTP/1.1 is still served, and the connections that
        # hold a session are), and the idle timeout (3 s) frees them all.
        pool = 128

        def sessions(honest):
            held = [Raw(port) for _ in range(pool + 4)]  # the honest one holds one
            for r in held:
                r.pump(lambda: r.server_settings is not None or r.eof, 2)
            got = sum(r.server_settings is not None for r in held)
            refused = sum(r.eof and r.server_settings is None for r in held)
            h1 = subprocess.run(["curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                                 f"http://127.0.0.1:{port}/x.txt"], capture_output=True, text=True)
            t = time.monotonic()
            for r in held:
                honest.wait(r, lambda: r.eof, max(0.0, t + 5.5 - time.monotonic()))
            freed = sum(r.eof and r.goaway is not None and r.goaway[1] == NO_ERROR for r in held)
            dt = time.monotonic() - t
            for r in held:
                r.close()
            ok = got == pool - 1 and refused == 5 and h1.stdout == "200" and freed == got
            return ok, (f"{len(held)} idle connections: {got} took a session (pool {pool}, the "
                        f"honest one holds one), {refused} closed, HTTP/1.1 {h1.stdout} meanwhile; "
                        f"{freed} freed by the idle timeout (GOAWAY NO_ERROR) within {dt:.2f} s"), None
        run.attack("sessions-exhausted", sessions, "http_h2_sessions_refused", 5,
                   sessions=pool + 2)


def main():
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) == 2 else 2
    skiff = sys.argv[1]
    if not shutil.which("curl"):
        check("tool.curl", False, "not installed (tools/deps.sh)")
        return CHECKS.summary()
    with open(skiff, "rb") as f:
        asan = b"__asan_init" in f.read()
    work = tempfile.mkdtemp(prefix="h2-hostile.")
    root = os.path.join(work, "root")
    os.mkdir(root)
    for name, data in FILES.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    conf = ("header_timeout 2s;\nkeepalive_timeout 3s;\nsend_timeout 2s;\n"
            "site h {{\n  listen 127.0.0.1:{port};\n  default;\n  route / {{ files {root}; }}\n}}\n")
    servers = []
    try:
        for name, kw, short_send in (
                ("root", dict(extra=["--header-timeout", "2", "--keepalive-timeout", "3"]), False),
                ("config", dict(conf=conf), True)):
            srv = Server(skiff, name, work, root, **kw)
            servers.append(srv)
            if not check(f"{name}.start", srv.ok, " ".join(srv.argv[2:])):
                continue
            run = Run(srv, asan)
            print(f"h2-hostile: {name}: {srv.argv[0]} on 127.0.0.1:{srv.port}, resident "
                  f"{run.base / 2**20:.1f} MiB after one exchange, "
                  f"SETTINGS_MAX_CONCURRENT_STREAMS {run.max_streams}{', ASan' if asan else ''}")
            sys.stdout.flush()
            attacks(run, short_send)
            last = srv.metrics()
            st, text = srv.stop()
            keys = [k for k in last if k.startswith("http_h2_")]
            diff = [k for k in keys if st.get(k.replace("http_", "http.", 1)) != last[k]]
            check(f"{name}.stats-at-exit", keys and not diff and st.get("http.conns_open") == 0 and
                  srv.proc.returncode == 0,
                  f"{len(keys)} http.h2_* counters as on the metrics page"
                  f"{' but ' + ','.join(diff) if diff else ''}; conns_open "
                  f"{st.get('http.conns_open')}; exit {srv.proc.returncode}")
    finally:
        for srv in servers:
            if srv.proc.poll() is None:
                srv.proc.kill()
                srv.proc.wait()
            srv.log.close()
        shutil.rmtree(work, ignore_errors=True)
    return CHECKS.summary()


RUN = None

if __name__ == "__main__":
    sys.exit(main())
