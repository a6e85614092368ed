"""h2raw.py — an HTTP/2 client of raw frames for skiff's python tests, for
what a conforming client library will not send: floods, bombs, broken
blocks (tests/h2_hostile.py, tests/h2_interop.py).  No third-party module.

  frame(ftype, flags, sid, payload=b"")   one frame's bytes (RFC 9113 4.1)
  PREFACE, the frame types, flags and error codes below

  Conn(port, settings=b"", preface=True, host="127.0.0.1", timeout=5)
      connects; with preface, sends the client preface, a SETTINGS frame of
      settings (the 6-byte entries) and the ACK of the server's SETTINGS
      (sent blind: it comes before anything the tests look at)
      .send(b)          sendall; a failure (the server closed) sets
                        send_failed, and reading goes on
      .send_frame(ftype, flags, sid, payload=b"")
      .pump(until=lambda: False, timeout=5.0)
                        reads until until() holds, the server closes (eof,
                        eof_at: time.monotonic() then) or the deadline;
                        each whole frame goes to on_frame; returns until()
      .on_frame(ftype, flags, sid, payload)
                        keeps (ftype, flags, sid, payload) in .frames;
                        subclasses decode instead
      .close()

Scripts under tests/ import it directly, as they do tests/skt.py.
"""
import socket
import time

# Frame types, flags, error codes (RFC 9113 6, 7).
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = \
    0, 1, 2, 3, 4, 6, 7, 8, 9
END_STREAM, ACK, END_HEADERS = 0x1, 0x1, 0x4
NO_ERROR, PROTOCOL_ERROR, SETTINGS_TIMEOUT, REFUSED_STREAM, CANCEL, ENHANCE_YOUR_CALM = \
    0x0, 0x1, 0x4, 0x7, 0x8, 0xb
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(ftype, flags, sid, payload=b""):
    return len(payload).to_bytes(3, "big") + bytes([ftype, flags]) + sid.to_bytes(4, "big") + payload


class Conn:
    """One connection of raw frames; what comes back is cut into frames."""

    def __init__(self, port, settings=b"", preface=True, host="127.0.0.1", timeout=5):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""
        self.frames = []  # (type, flags, sid, payload), unless on_frame is another's
        self.eof, self.eof_at, self.send_failed = False, None, False
        if preface:
            self.send(PREFACE + frame(SETTINGS, 0, 0, settings) + frame(SETTINGS, ACK, 0))

    def send(self, b):
        try:
            self.sock.sendall(b)
        except OSError:
            self.send_failed = True

    def send_frame(self, ftype, flags, sid, payload=b""):
        self.send(frame(ftype, flags, sid, payload))

    def pump(self, until=lambda: False, timeout=5.0):
        end = time.monotonic() + timeout
        while not until() and not self.eof and time.monotonic() < end:
            self.sock.settimeout(max(0.01, end - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:  # reset: the server is gone as with a FIN
                data = b""
            if not data:
                self.eof, self.eof_at = True, time.monotonic()
                break
            self.buf += data
            while len(self.buf) >= 9:
                n = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) < 9 + n:
                    break
                t, fl = self.buf[3], self.buf[4]
                sid = int.from_bytes(self.buf[5:9], "big") & 0x7fffffff
                p, self.buf = self.buf[9:9 + n], self.buf[9 + n:]
                self.on_frame(t, fl, sid, p)
        return until()

    def on_frame(self, ftype, flags, sid, payload):
        self.frames.append((ftype, flags, sid, payload))

    def close(self):
        self.sock.close()
