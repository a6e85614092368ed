#!/usr/bin/env python3
"""slow_client.py URL SECONDS THINK_US — bench.py's load "slow-c1": one
client that thinks between requests, as a person's browser or a distant
peer does: a new connection per request (HTTP/1.0, the server closes),
then THINK_US microseconds of sleep, for SECONDS.  Every gap the server
sees is then long, which is where a fixed spin after work burns its whole
length and a learned one should not.  Prints ab's summary lines (bench.py
parses them with parse_ab).  A request fails on any error, a status other
than 200 or a body shorter than its Content-Length."""
import socket
import sys
import time
import urllib.parse


def main():
    if len(sys.argv) != 4 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    url = urllib.parse.urlsplit(sys.argv[1])
    secs, think = float(sys.argv[2]), float(sys.argv[3]) / 1e6
    host, port = url.hostname, url.port or 80
    req = f"GET {url.path or '/'} HTTP/1.0\r\nHost: {host}\r\n\r\n".encode()
    done = failed = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < secs:
        try:
            with socket.create_connection((host, port), timeout=5) as s:
                s.sendall(req)
                data = b""
                while True:
                    b = s.recv(65536)
                    if not b:
                        break
                    data += b
            head, _, body = data.partition(b"\r\n\r\n")
            lines = head.split(b"\r\n")
            clen = [int(x.split(b":", 1)[1]) for x in lines[1:]
                    if x.lower().startswith(b"content-length:")]
            if not lines[0].split(b" ")[1:2] == [b"200"] or (clen and len(body) != clen[0]):
                failed += 1
        except OSError:
            failed += 1
        done += 1
        time.sleep(think)
    dt = time.monotonic() - t0
    print(f"Time taken for tests:   {dt:.3f} seconds")
    print(f"Complete requests:      {done}")
    print(f"Failed requests:        {failed}")
    print(f"Requests per second:    {done / dt:.2f} [#/sec] (mean)")


if __name__ == "__main__":
    main()
