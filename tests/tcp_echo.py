#!/usr/bin/env python3
"""tcp_echo.py — Linux's side of skiff's TCP echo tests.

  client: connect to HOST:PORT, send BYTES of seeded random data while
          reading the echo back in parallel, half-close, read to EOF, and
          compare the sha256 of what came back with what was sent.
          --hold SECS: once the echo of all BYTES is back, print a line
          "held: SECS" and keep the connection open and silent for SECS
          before the half-close (an idle connection, for the server's idle
          CPU in tests/tcp.sh).
  server: a Linux echo server (one thread per connection) for the tests in
          which skiff is the client.
  cycles: COUNT sequential connect / send / read echo / close cycles.
  sink:   a Linux receiver for one-way transfers (make bench-tcp's send
          role): reads each connection to EOF, hashes what came, answers
          one line "sink: got N sha256 HEX secs S" and closes; prints the
          same line on stdout.  S runs from accept to EOF, so it measures
          the data's transfer alone, whichever stack sends.
  send:   connect to a sink, send BYTES of seeded random data, half-close,
          and compare the sink's answer with what was sent.

send --trace FILE: every 10 ms while it sends (and once after), the sending
socket's TCP_INFO (what `ss -ti` shows) as a TSV line, in the column names
of `skiff tcp-client --tcp-trace` where the meaning is the same, so one
plotter (bench/tcp_trace_plot.py) reads both.

--cc NAME sets the socket's congestion control (TCP_CONGESTION; root may
name any the kernel has, even one a namespace's sysctl does not allow).

Prints one result line; exits 0 on success, 1 on a mismatch or error."""
import argparse
import hashlib
import random
import socket
import struct
import sys
import threading
import time

CHUNK = 64 * 1024


def random_stream(seed: int, total: int):
    """Deterministic pseudo-random chunks (random.randbytes is fast C)."""
    rng = random.Random(seed)
    left = total
    while left > 0:
        n = min(CHUNK, left)
        yield rng.randbytes(n)
        left -= n


def set_cc(s: socket.socket, name: str) -> None:
    if name:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, name.encode())


def client(a) -> int:
    t0 = time.monotonic()
    s = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET, socket.SOCK_STREAM)
    set_cc(s, a.cc)
    s.settimeout(a.timeout)
    s.connect((a.host, a.port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sent_hash = hashlib.sha256()
    got_hash = hashlib.sha256()
    got = [0]
    err = []

    def reader():
        try:
            while True:
                b = s.recv(1 << 20)
                if not b:
                    return
                got_hash.update(b)
                got[0] += len(b)
        except OSError as e:
            err.append(f"recv: {e}")

    th = threading.Thread(target=reader, daemon=True)
    th.start()
    sent = 0
    try:
        for chunk in random_stream(a.seed, a.bytes):
            s.sendall(chunk)
            sent_hash.update(chunk)
            sent += len(chunk)
        if a.hold > 0:
            end = time.monotonic() + a.timeout
            while got[0] < a.bytes and th.is_alive() and time.monotonic() < end:
                time.sleep(0.01)
            print(f"held: {a.hold:g}", flush=True)
            time.sleep(a.hold)
        s.shutdown(socket.SHUT_WR)
    except OSError as e:
        err.append(f"send after {sent} bytes: {e}")
    th.join(max(1.0, a.timeout))
    secs = time.monotonic() - t0 - max(a.hold, 0.0)
    if a.info:
        ws = tcp_info(s)["wscale"]
        print(f"tcp_info: wscale:{ws & 15},{ws >> 4}", flush=True)
    s.close()
    ok = not err and not th.is_alive() and got[0] == a.bytes and \
        sent_hash.digest() == got_hash.digest()
    why = "; ".join(err) if err else ("reader still running" if th.is_alive() else "")
    print(f"echo: sent {sent} got {got[0]} in {secs:.2f} s "
          f"({got[0] * 8 / max(secs, 1e-9) / 1e6:.0f} Mbit/s) "
          f"sha256 sent {sent_hash.hexdigest()[:16]} got {got_hash.hexdigest()[:16]} "
          f"{'MATCH' if ok else 'MISMATCH'}{' ' + why if why else ''}")
    return 0 if ok else 1


def server(a) -> int:
    ls = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(ls, a.cc)
    ls.bind((a.host, a.port))
    ls.listen(1024)
    print(f"server: ready {a.host}:{a.port}", flush=True)

    def serve(c):
        try:
            set_cc(c, a.cc)
            c.settimeout(a.timeout)
            while True:
                b = c.recv(1 << 20)
                if not b:
                    break
                c.sendall(b)
            c.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        finally:
            c.close()

    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def sink(a) -> int:
    ls = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    set_cc(ls, a.cc)
    ls.bind((a.host, a.port))
    ls.listen(64)
    print(f"server: ready {a.host}:{a.port}", flush=True)
    lock = threading.Lock()

    def serve(c):
        t0 = time.monotonic()
        h = hashlib.sha256()
        n = 0
        try:
            c.settimeout(a.timeout)
            while True:
                b = c.recv(1 << 20)
                if not b:
                    break
                h.update(b)
                n += len(b)
            line = f"sink: got {n} sha256 {h.hexdigest()} secs {time.monotonic() - t0:.6f}"
            c.sendall((line + "\n").encode())
            c.shutdown(socket.SHUT_WR)
        except OSError as e:
            line = f"sink: error after {n} bytes: {e}"
        finally:
            c.close()
        with lock:
            print(line, flush=True)

    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


# struct tcp_info's fields, by their offsets in the Linux UAPI layout
# (include/uapi/linux/tcp.h: eight u8s, then u32s from offset 8, the u64s
# 8-aligned).  (name, offset, struct format); a field past the length the
# kernel returns reads as None.
# wscale: byte 6, tcpi_snd_wscale in its low 4 bits and tcpi_rcv_wscale in
# the high 4 (bitfields, little-endian).
TCPI = [("state", 0, "B"), ("ca_state", 1, "B"), ("wscale", 6, "B"), ("snd_mss", 16, "I"),
        ("unacked", 24, "I"), ("sacked", 28, "I"), ("lost", 32, "I"), ("retrans", 36, "I"),
        ("rtt", 68, "I"), ("snd_ssthresh", 76, "I"), ("snd_cwnd", 80, "I"),
        ("total_retrans", 100, "I"), ("pacing_rate", 104, "Q"),
        ("bytes_acked", 120, "Q"), ("notsent_bytes", 144, "I"),
        ("min_rtt", 148, "I"), ("delivery_rate", 160, "Q"),
        ("busy_time", 168, "Q"), ("rwnd_limited", 176, "Q"), ("sndbuf_limited", 184, "Q"),
        ("snd_wnd", 228, "I")]
TCP_STATES = ["?", "ESTABLISHED", "SYN_SENT", "SYN_RECV", "FIN_WAIT1", "FIN_WAIT2",
              "TIME_WAIT", "CLOSE", "CLOSE_WAIT", "LAST_ACK", "LISTEN", "CLOSING"]
TRACE_COLS = ["ms", "state", "cwnd", "ssthresh", "pipe", "unacked", "notsent",
              "srtt_us", "pacing_rate", "delivery_rate", "retransmits",
              "bytes_acked", "min_rtt_us", "busy_us", "rwnd_limited_us",
              "sndbuf_limited_us", "snd_wnd", "ca_state", "bbr_bw", "bbr_mode"]
# tcp_ca_state (include/uapi/linux/tcp.h's order), as the trace writes it.
CA_STATES = "open disorder cwr recovery loss".split()
TCP_CC_INFO = 26  # getsockopt: the congestion control's own state
TRACE_SECS = 0.010


def tcp_info(s: socket.socket) -> dict:
    """TCP_INFO decoded; fields the kernel did not return are None."""
    b = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 256)
    return {name: (struct.unpack_from("=" + fmt, b, off)[0]
                   if off + struct.calcsize(fmt) <= len(b) else None)
            for name, off, fmt in TCPI}


def bbr_info(s: socket.socket) -> tuple:
    """BBR's model from TCP_CC_INFO (struct tcp_bbr_info: bw in bytes/s
    as two u32s, min_rtt in us, the pacing and cwnd gains in 1/256) as
    (bw, mode), the mode named as skiff's trace names it and told by the
    gains (tcp_bbr.c's: 739 both in startup, 88 pacing in drain, 256 both
    in probe_rtt; probe_bw cycles the pacing gain with cwnd's at 512; no
    mode before the first estimate).  The caller asks only of a BBR socket
    (cc_name, once: the struct is another control's otherwise)."""
    try:
        b = s.getsockopt(socket.IPPROTO_TCP, TCP_CC_INFO, 20)
    except OSError:
        return (None, None)
    if len(b) < 20:
        return (None, None)
    lo, hi, _min_rtt, pg, cg = struct.unpack_from("=5I", b, 0)
    bw = lo | hi << 32
    if not bw:
        return (0, "")  # no estimate yet: the gains then say nothing
    mode = ("startup" if pg == 739 else "drain" if pg == 88 else
            "probe_rtt" if pg == 256 and cg == 256 else "probe_bw")
    return (bw, mode)


def cc_name(s: socket.socket) -> str:
    """The socket's congestion control's name (TCP_CONGESTION)."""
    return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()


def trace_line(ms: float, t: dict, bbr: tuple = (None, None)) -> str:
    """One TSV line in skiff's units: windows and flight in bytes (Linux
    counts them in segments of snd_mss); srtt and min_rtt in us; rates in
    bytes/s.  ssthresh: Linux's "infinite" (0x7fffffff segments and more,
    which `ss` leaves out) is written 4294967295, skiff's infinite (UINT32_MAX
    bytes), not multiplied by snd_mss.  pipe is Linux's packets_in_flight: unacked -
    (sacked + lost) + retrans, the same sum as RFC 6675's pipe.  busy_us,
    rwnd_limited_us and sndbuf_limited_us are the kernel's chronographs
    (tcpi_busy_time and the time in it the peer's window, or the send
    buffer, held the sender), beside skiff's --stats counters of the same
    names; snd_wnd is the peer's window in bytes (Linux 6.2 and later);
    ca_state the kernel's loss state (open, disorder, cwr, recovery, loss:
    a BBR recovery's packet conservation begins on entering recovery);
    bbr_bw (bytes/s) and bbr_mode BBR's model from TCP_CC_INFO (bbr_info),
    empty under another control."""
    mss = t["snd_mss"] or 0

    def b(x):
        return "" if x is None else str(x * mss)

    pipe = None
    if None not in (t["unacked"], t["sacked"], t["lost"], t["retrans"]):
        pipe = max(0, t["unacked"] - t["sacked"] - t["lost"] + t["retrans"])
    ssth = t["snd_ssthresh"]
    ssth_b = "" if ssth is None else str(0xFFFFFFFF if ssth >= 0x7FFFFFFF else ssth * mss)
    st = t["state"]
    vals = [f"{ms:.1f}", TCP_STATES[st] if st is not None and st < len(TCP_STATES) else str(st),
            b(t["snd_cwnd"]), ssth_b, b(pipe), b(t["unacked"]),
            t["notsent_bytes"], t["rtt"], t["pacing_rate"], t["delivery_rate"],
            t["total_retrans"], t["bytes_acked"], t["min_rtt"], t["busy_time"],
            t["rwnd_limited"], t["sndbuf_limited"], t["snd_wnd"],
            CA_STATES[t["ca_state"]] if t["ca_state"] is not None and t["ca_state"] < len(CA_STATES)
            else t["ca_state"]] + list(bbr)
    return "\t".join("" if v is None else str(v) for v in vals)


def tracer(s: socket.socket, path: str, t0: float, stop: threading.Event):
    """Samples s every TRACE_SECS until stop is set, then once more."""
    bbr = cc_name(s) == "bbr"
    with open(path, "w") as f:
        f.write("\t".join(TRACE_COLS) + "\n")
        nxt = time.monotonic()
        while True:
            last = stop.is_set()
            try:
                t = tcp_info(s)
            except OSError:
                return
            f.write(trace_line((time.monotonic() - t0) * 1000, t,
                               bbr_info(s) if bbr else (None, None)) + "\n")
            if last:
                return
            nxt += TRACE_SECS
            stop.wait(max(0.0, nxt - time.monotonic()))


def send(a) -> int:
    t0 = time.monotonic()
    s = socket.socket(socket.AF_INET6 if ":" in a.host else socket.AF_INET, socket.SOCK_STREAM)
    set_cc(s, a.cc)
    s.settimeout(a.timeout)
    sent_hash = hashlib.sha256()
    sent = 0
    answer = b""
    err = ""
    stop = threading.Event()
    th = None
    try:
        t_conn = time.monotonic()
        s.connect((a.host, a.port))
        if a.trace:
            # ms from the connect's start (the SYN), as skiff's trace counts
            # from its client's start, which sends the SYN at once.
            th = threading.Thread(target=tracer, args=(s, a.trace, t_conn, stop),
                                  daemon=True)
            th.start()
        for chunk in random_stream(a.seed, a.bytes):
            s.sendall(chunk)
            sent_hash.update(chunk)
            sent += len(chunk)
        s.shutdown(socket.SHUT_WR)
        while True:
            b = s.recv(4096)
            if not b:
                break
            answer += b
    except OSError as e:
        err = f"after {sent} bytes: {e}"
    secs = time.monotonic() - t0
    if th:
        stop.set()
        th.join(5)
    s.close()
    words = answer.decode(errors="replace").split()
    ok = not err and len(words) >= 7 and words[2] == str(a.bytes) and \
        words[4] == sent_hash.hexdigest()
    print(f"send: sent {sent} in {secs:.2f} s sha256 {sent_hash.hexdigest()[:16]} "
          f"sink's {words[4][:16] if len(words) >= 5 else '-'} "
          f"{'MATCH' if ok else 'MISMATCH'}{' ' + err if err else ''}")
    return 0 if ok else 1


def cycles(a) -> int:
    t0 = time.monotonic()
    end = t0 + a.timeout
    fails = 0
    first_err = ""
    payload = b"skiff-cycle-" + b"x" * max(0, a.size - 12)
    for i in range(a.count):
        if time.monotonic() > end:
            first_err = first_err or f"deadline hit after {i} cycles"
            fails += a.count - i
            break
        try:
            with socket.create_connection((a.host, a.port), timeout=5) as s:
                s.sendall(payload)
                s.shutdown(socket.SHUT_WR)
                got = b""
                while True:
                    b = s.recv(65536)
                    if not b:
                        break
                    got += b
                if got != payload:
                    raise OSError(f"echo mismatch ({len(got)} of {len(payload)} bytes)")
        except OSError as e:
            fails += 1
            if not first_err:
                first_err = f"cycle {i}: {e}"
    secs = time.monotonic() - t0
    print(f"cycles: {a.count - fails}/{a.count} ok in {secs:.1f} s "
          f"({a.count / max(secs, 1e-9):.0f}/s){'; first failure: ' + first_err if first_err else ''}")
    return 0 if fails == 0 else 1


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["client", "server", "cycles", "sink", "send"])
    ap.add_argument("--host", required=True)
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--bytes", type=int, default=1 << 20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--size", type=int, default=100, help="cycles: bytes per connection")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--cc", default="", help="TCP_CONGESTION for the sockets (e.g. cubic)")
    ap.add_argument("--info", action="store_true",
                    help="client: before the result, a line 'tcp_info: wscale:S,R' with the "
                    "window scales from the socket's TCP_INFO (Linux's view, as ss -ti prints it)")
    ap.add_argument("--hold", type=float, default=0.0, metavar="SECS",
                    help="client: once the whole echo is back, print 'held: SECS' and keep the "
                    "connection open and silent for SECS before the half-close")
    ap.add_argument("--trace", default="", metavar="FILE",
                    help="send: the socket's TCP_INFO every 10 ms as a TSV")
    a = ap.parse_args()
    return {"client": client, "server": server, "cycles": cycles, "sink": sink,
            "send": send}[a.mode](a)


if __name__ == "__main__":
    sys.exit(main())
