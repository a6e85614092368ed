#!/usr/bin/env python3
"""tls_idle_mem.py SKIFF_BIN [N] — what an idle keep-alive HTTPS connection
holds in skiff serve, on each TLS engine: the server's RSS growth
(/proc/PID/status VmRSS) with N (default 500) TLS 1.3 connections open,
each after one keep-alive GET answered, divided by N.  Loopback only
(127.0.0.1, --stack linux), the engines one after the other, each twice
(openssl, gnutls, gnutls, openssl); the certificate (ECDSA P-256) is made
at start and removed at exit.  Prints one line per run."""
import os
import resource
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def run(binary, engine, n, work, port=28444):
    cert, key = os.path.join(work, "c.pem"), os.path.join(work, "k.pem")
    srv = subprocess.Popen([binary, "serve", "--stack", "linux", "--ip", "127.0.0.1",
                            "--port", str(port - 363), "--tls-port", str(port),
                            "--tls-cert", cert, "--tls-key", key, "--tls-engine", engine,
                            "--max-conns", str(n + 64)],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctx = ssl.create_default_context(cafile=cert)
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_3
    conns = []
    try:
        for _ in range(50):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        def one():
            s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port), timeout=10),
                                server_hostname="127.0.0.1")
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            got = b""
            while b"\r\n\r\n" not in got or not got.endswith(b"you.\n"):
                b = s.recv(4096)
                if not b:
                    raise SystemExit("server closed")
                got += b
            return s
        for _ in range(20):  # warm: pools and caches at their working size
            one().close()
        time.sleep(0.3)
        before = rss_kib(srv.pid)
        for _ in range(n):
            conns.append(one())
        time.sleep(0.5)
        after = rss_kib(srv.pid)
        print(f"{engine}: {n} idle TLS 1.3 connections: RSS {before} -> {after} KiB, "
              f"{(after - before) / n:.1f} KiB each", flush=True)
    finally:
        for s in conns:
            s.close()
        srv.terminate()
        srv.wait()


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(sys.argv) > 1 else 2
    binary, n = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 500
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * n + 64)), hard))
    work = tempfile.mkdtemp(prefix="skiff-tlsmem.")
    try:
        subprocess.run(["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=skiff-mem",
                        "-addext", "subjectAltName=IP:127.0.0.1", "-newkey", "ec", "-pkeyopt",
                        "ec_paramgen_curve:P-256", "-keyout", os.path.join(work, "k.pem"),
                        "-out", os.path.join(work, "c.pem")], check=True, capture_output=True)
        for engine in ("openssl", "gnutls", "gnutls", "openssl"):
            run(binary, engine, n, work)
    finally:
        shutil.rmtree(work)
    return 0


if __name__ == "__main__":
    sys.exit(main())
