#!/usr/bin/env python3
"""tls_probe.py — python's ssl against skiff serve's HTTPS port
(tests/tls.sh runs it inside the client namespace; tests/vm_tls.sh against
the unikernel through QEMU's forwards).

  tls_probe.py resume HOST PORT CAFILE NAME [VERSIONS]
      per TLS version in VERSIONS (default 1.2,1.3; the unikernel: 1.2): three connections, the 2nd and 3rd offering the
      1st's session; each GET / must answer 200 with ALPN http/1.1, and the
      2nd and 3rd must resume.  Prints one line; exit 1 on any miss.
  tls_probe.py hostile HOST PORT CAFILE NAME COUNT
      COUNT connections of each kind, each must end (closed by the server,
      never hanging past 15 s), and after all of them a good GET / still
      answers 200:
        garbage   random bytes instead of a ClientHello
        hello     a ClientHello whose lengths lie (truncated)
        badmac    a full handshake, then an application-data record of
                  random bytes (its MAC cannot verify)
        oversize  a full handshake, then a record header claiming 65 KiB
      Prints one line; exit 1 on any miss.
  tls_probe.py slow HOST PORT CAFILE NAME PATH SHA256
      an HTTP/1.0 GET of PATH read slowly (64 KiB per 10 ms, a 64 KiB
      receive buffer): the server queues the whole answer and closes while most of its records still
      wait, so they must all arrive after the close; the body's sha256
      must be SHA256.
  tls_probe.py preconnect HOST PORT CAFILE NAME [COUNT]
      a browser's preconnect, over TLS 1.3: COUNT + 1 (default 5 + 1)
      connections, none of which sends a byte of application data; each
      must receive a session ticket of its own (a new one) within 2 s of
      its handshake, and each one after the first must resume with the
      ticket the one before received.  Then one GET / on a resumed
      connection answers 200.  Prints one line (the times from handshake
      to ticket); exit 1 on any miss.  (`openssl s_client -reconnect`
      cannot check this: it drops each connection as soon as its own
      handshake is done, before any ticket can arrive, and resumes 0 of 5
      over TLS 1.3 against any OpenSSL server, openssl/openssl#10714.)
  tls_probe.py stall HOST PORT SECONDS
      opens a connection that sends 5 bytes of a ClientHello and stops; the
      server must close it within SECONDS + 3 (its handshake timeout).
  tls_probe.py truncated HOST PORT [MAX_SECONDS]
      a handshake record that claims 300 bytes, 40 of them sent, then our
      FIN: the server must close (or reset) within 15 s, and within
      MAX_SECONDS when given (at once, not by a handshake timeout).
"""
import os
import socket
import ssl
import struct
import sys
import time


def ctx_for(cafile, version=None):
    c = ssl.create_default_context(cafile=cafile)
    c.check_hostname = False  # the certificate names the test's address
    c.set_alpn_protocols(["http/1.1"])
    if version:
        c.minimum_version = c.maximum_version = version
    return c


def get(t):
    t.sendall(b"GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        d = t.recv(65536)
        if not d:
            break
        data += d
    return data.split(b"\r\n", 1)[0]


def resume(host, port, cafile, name, versions="1.2,1.3"):
    out, bad = [], 0
    want = {"1.2": ssl.TLSVersion.TLSv1_2, "1.3": ssl.TLSVersion.TLSv1_3}
    for v in (want[x] for x in versions.split(",")):
        c = ctx_for(cafile, v)
        sess, marks = None, ""
        for i in range(3):
            s = socket.create_connection((host, port), timeout=10)
            t = c.wrap_socket(s, server_hostname=name, session=sess)
            status = get(t)
            ok = status == b"HTTP/1.1 200 OK" and t.selected_alpn_protocol() == "http/1.1"
            if i > 0:
                ok = ok and t.session_reused
            marks += ("R" if t.session_reused else "N") if ok else "!"
            bad += not ok
            # TLS 1.3 tickets arrive after the handshake: the session is
            # complete once the response has been read.
            sess = t.session
            t.close()
        out.append(f"{v.name}:{marks}")
    print(f"resume: {' '.join(out)} (N new, R resumed, ! wrong)")
    return 1 if bad else 0


def ends(s, deadline=15):
    """True once the server has closed s (EOF or reset), within deadline."""
    s.settimeout(deadline)
    t0 = time.monotonic()
    try:
        while time.monotonic() - t0 < deadline:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def client_hello_liar():
    # A handshake record whose inner ClientHello says it is far longer
    # than the record that carries it.
    body = struct.pack("!BI", 1, 0xFFFF)[0:1] + b"\x00\xff\xff" + os.urandom(40)
    return struct.pack("!BHH", 22, 0x0301, len(body)) + body


def hostile(host, port, cafile, name, count):
    """All COUNT x 4 connections at once (a flood of them, and the ones
    that stall wait out one handshake timeout together), then each must
    be closed by the server.  A badmac/oversize connection whose own
    handshake failed is a miss, said as such (with how long it took and
    the error): it never got to send its bad record."""
    c = ctx_for(cafile)
    socks = {k: [] for k in ("garbage", "hello", "badmac", "oversize")}
    keep, hs_failed = [], []
    for kind in socks:
        for _ in range(count):
            s = socket.create_connection((host, port), timeout=10)
            try:
                if kind == "garbage":
                    s.sendall(os.urandom(512))
                elif kind == "hello":
                    s.sendall(client_hello_liar())
                else:
                    t0 = time.monotonic()
                    try:
                        t = c.wrap_socket(s, server_hostname=name)
                    except (ssl.SSLError, OSError) as e:
                        # wrap_socket took s's descriptor and closed it.
                        hs_failed.append(f"{kind} handshake failed after "
                                         f"{time.monotonic() - t0:.1f} s: {type(e).__name__}: {e}")
                        s = None
                        continue
                    keep.append(t)
                    # Raw bytes on the TCP stream under the TLS session.
                    s = socket.socket(fileno=os.dup(t.fileno()))
                    if kind == "badmac":
                        payload = os.urandom(64)
                        s.sendall(struct.pack("!BHH", 23, 0x0303, len(payload)) + payload)
                    else:
                        s.sendall(struct.pack("!BHH", 23, 0x0303, 0xFFFF) + os.urandom(100))
            except (ssl.SSLError, OSError):
                pass  # the server may already have closed: ends() tells
            finally:
                if s is not None:
                    socks[kind].append(s)
    tally = {k: sum(ends(s) for s in v) for k, v in socks.items()}
    for v in socks.values():
        for s in v:
            s.close()
    for t in keep:
        t.close()
    try:
        s = socket.create_connection((host, port), timeout=10)
        t = c.wrap_socket(s, server_hostname=name)
        after = get(t)
        t.close()
    except (ssl.SSLError, OSError) as e:
        after = f"{type(e).__name__}: {e}".encode()
    good = all(v == count for v in tally.values()) and after == b"HTTP/1.1 200 OK"
    print("hostile: " + " ".join(f"{k} {v}/{count} closed" for k, v in tally.items()) +
          f"; then GET / -> {after.decode(errors='replace')}" +
          "".join(f"; {m}" for m in hs_failed))
    return 0 if good else 1


def slow(host, port, cafile, name, path, want):
    import hashlib
    c = ctx_for(cafile)
    # A small fixed receive buffer, set before the connect so the window
    # never grows: the server must still hold records when it closes (the
    # orphan the counters check wants), however little memory the kernel
    # charges per received byte (TSO frames from skiff on tap: take far
    # less than MTU-sized ones, and autotuning then took all 3 MB).
    fam, st, pr, _, sa = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0]
    s = socket.socket(fam, st, pr)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
    s.settimeout(15)
    s.connect(sa)
    t = c.wrap_socket(s, server_hostname=name)
    t.sendall(f"GET {path} HTTP/1.0\r\n\r\n".encode())
    data = b""
    t0 = time.monotonic()
    while True:
        d = t.recv(65536)
        if not d:
            break
        data += d
        time.sleep(0.01)
    t.close()
    head, _, body = data.partition(b"\r\n\r\n")
    got = hashlib.sha256(body).hexdigest()
    ok = head.startswith(b"HTTP/1.1 200") and got == want
    print(f"slow: {len(body)} bytes in {time.monotonic() - t0:.1f} s, sha256 {got[:12]}.. "
          f"{'=' if got == want else '!='} {want[:12]}..")
    return 0 if ok else 1


def wait_ticket(t, old_id, secs):
    """Read t (sending nothing) until its session holds a ticket other than
    the one it was made from (old_id), for at most secs; the seconds it
    took, or None.  A TLS 1.3 ticket arrives after the handshake, and
    python's ssl takes it in only while it reads."""
    import select
    t.setblocking(False)
    t0 = time.monotonic()
    while True:
        s = t.session
        if s is not None and s.has_ticket and s.id != old_id:
            return time.monotonic() - t0
        left = secs - (time.monotonic() - t0)
        if left <= 0:
            return None
        select.select([t], [], [], left)
        try:
            if t.recv(1):
                return None  # application data, unasked for
            return None      # the server closed
        except ssl.SSLWantReadError:
            pass


def preconnect(host, port, cafile, name, count=5):
    c = ctx_for(cafile, ssl.TLSVersion.TLSv1_3)
    sess, marks, bad, worst = None, "", 0, 0.0
    for i in range(count + 1):
        s = socket.create_connection((host, port), timeout=10)
        t = c.wrap_socket(s, server_hostname=name, session=sess)
        resumed = t.session_reused
        dt = wait_ticket(t, sess.id if sess else None, 2.0)
        ok = dt is not None and (i == 0 or resumed)
        marks += ("R" if resumed else "N") + ("+" if dt is not None else "-")
        bad += not ok
        if dt is not None:
            worst = max(worst, dt)
            sess = t.session
        t.close()
    # The last ticket still resumes a connection that does send.
    s = socket.create_connection((host, port), timeout=10)
    t = c.wrap_socket(s, server_hostname=name, session=sess)
    t.setblocking(True)
    t.settimeout(10)
    status = get(t)
    last_ok = t.session_reused and status == b"HTTP/1.1 200 OK"
    t.close()
    bad += not last_ok
    print(f"preconnect: {marks} then GET {'R 200' if last_ok else 'failed: ' + repr(status)} "
          f"(N new, R resumed, + a new ticket without a request, - none in 2 s; "
          f"slowest ticket {worst * 1000:.1f} ms)")
    return 1 if bad else 0


def stall(host, port, secs):
    s = socket.create_connection((host, port), timeout=10)
    s.sendall(b"\x16\x03\x01\x02\x00")  # a record header, and nothing after
    t0 = time.monotonic()
    ok = ends(s, secs + 3)
    dt = time.monotonic() - t0
    print(f"stall: closed={ok} after {dt:.1f} s (timeout {secs} s)")
    return 0 if ok and dt >= secs - 0.5 else 1


def truncated(host, port, max_s=None):
    s = socket.create_connection((host, port), timeout=15)
    s.sendall(struct.pack("!BHH", 22, 0x0301, 300) + os.urandom(40))
    s.shutdown(socket.SHUT_WR)
    t0 = time.monotonic()
    try:
        while s.recv(4096):
            pass
    except socket.timeout:
        print("truncated: not closed in 15 s")
        return 1
    except ConnectionResetError:
        print("truncated: reset")
        return 0
    dt = time.monotonic() - t0
    print(f"truncated: closed after {dt:.1f} s")
    return 0 if max_s is None or dt < max_s else 1


def main():
    a = sys.argv[1:]
    if len(a) >= 1 and a[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    try:
        if a[0] == "resume" and len(a) in (5, 6):
            return resume(a[1], int(a[2]), a[3], a[4], *a[5:])
        if a[0] == "hostile" and len(a) == 6:
            return hostile(a[1], int(a[2]), a[3], a[4], int(a[5]))
        if a[0] == "slow" and len(a) == 7:
            return slow(a[1], int(a[2]), a[3], a[4], a[5], a[6])
        if a[0] == "preconnect" and len(a) in (5, 6):
            return preconnect(a[1], int(a[2]), a[3], a[4], *map(int, a[5:]))
        if a[0] == "stall" and len(a) == 4:
            return stall(a[1], int(a[2]), float(a[3]))
        if a[0] == "truncated" and len(a) in (3, 4):
            return truncated(a[1], int(a[2]), *map(float, a[3:]))
    except (OSError, ssl.SSLError) as e:
        print(f"{a[0]}: {type(e).__name__}: {e}")
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
