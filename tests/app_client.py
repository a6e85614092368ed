#!/usr/bin/env python3
"""app_client.py — the client side of tests/app.sh: examples/kv driven
over HTTP/1.1 by concurrent clients, every answer checked.

  app_client.py ops    HOST PORT N CLIENTS SEED   N random PUT/GET/DELETE
  app_client.py limits HOST PORT                  413 by length and chunked, 507
  app_client.py limits413 HOST PORT               413 by length and chunked only
  app_client.py stuck  HOST PORT BODY_TIMEOUT SEND_TIMEOUT N
                       a client sending its body a byte at a time and one
                       that stops reading a 1 MiB GET are both cut off in
                       time, while N operations of a normal client succeed

ops: each client owns its keys (c<i>-<k>), keeps the model (key -> sha256,
length), and per operation picks PUT (Content-Length or chunked in random
pieces, a value of 0 B .. 1 MiB, log-uniform so both ends are common),
GET (status, length, sha256 and the ETag of the PUT; a conditional GET
with it gets 304 now and then), or DELETE (204 / 404 as the model says).
A client keeps its stored bytes under 40 MiB / CLIENTS, so the 64 MiB store
never fills: any 507 is a failure here.  Keep-alive, with a fresh
connection every 50 operations.  Prints one line, "ops N ok ... failed F",
and exits 1 on any failure (the first few are printed).
"""
import hashlib
import http.client
import math
import random
import socket
import sys
import threading
import time

MAX = 1 << 20
failures = []
lock = threading.Lock()


def fail(msg):
    with lock:
        failures.append(msg)
        if len(failures) <= 10:
            print("FAIL-DETAIL", msg, flush=True)


def rand_len(rng):
    if rng.random() < 0.05:
        return rng.choice([0, 1, MAX - 1, MAX])
    return min(MAX, int(math.exp(rng.uniform(0, math.log(MAX)))))


def chunks(data, rng):
    i = 0
    while i < len(data):
        n = rng.choice([1, 7, 100, 4096, 65536, 300000])
        yield data[i:i + n]
        i += n


class Client:
    def __init__(self, host, port, idx, seed, n, budget):
        self.host, self.port, self.idx, self.n = host, port, idx, n
        self.rng = random.Random(seed * 1000 + idx)
        self.model = {}  # key -> (sha256 hex, length, etag)
        self.budget = budget
        self.stored = 0
        self.conn = None
        self.count = {"put": 0, "put_chunked": 0, "get": 0, "get304": 0, "delete": 0,
                      "bytes": 0}

    def connect(self):
        if self.conn:
            self.conn.close()
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)

    def req(self, method, path, body=None, headers=None, chunked=False):
        self.conn.request(method, path, body=body, headers=headers or {},
                          encode_chunked=chunked)
        r = self.conn.getresponse()
        data = r.read()
        return r, data

    def put(self, key):
        n = rand_len(self.rng)
        # Room for it first, as the budget says.
        while self.stored + n > self.budget and self.model:
            self.delete(self.rng.choice(list(self.model)))
        val = self.rng.randbytes(n)
        chunked = self.rng.random() < 0.4
        if chunked:
            r, _ = self.req("PUT", "/kv/" + key, body=chunks(val, self.rng), chunked=True)
            self.count["put_chunked"] += 1
        else:
            r, _ = self.req("PUT", "/kv/" + key, body=val)
        self.count["put"] += 1
        self.count["bytes"] += n
        want = 204 if key in self.model else 201
        if r.status != want:
            fail(f"PUT {key} len={n} chunked={chunked}: {r.status}, want {want}")
            return
        etag = r.getheader("ETag")
        if not etag:
            fail(f"PUT {key}: no ETag")
        if key in self.model:
            self.stored -= self.model[key][1]
        self.model[key] = (hashlib.sha256(val).hexdigest(), n, etag)
        self.stored += n

    def get(self, key):
        m = self.model.get(key)
        if m and self.rng.random() < 0.1:
            r, data = self.req("GET", "/kv/" + key, headers={"If-None-Match": m[2]})
            self.count["get304"] += 1
            if r.status != 304 or data:
                fail(f"GET {key} If-None-Match: {r.status} {len(data)} B, want 304")
            return
        r, data = self.req("GET", "/kv/" + key)
        self.count["get"] += 1
        self.count["bytes"] += len(data)
        if not m:
            if r.status != 404:
                fail(f"GET {key} (absent): {r.status}, want 404")
            return
        if r.status != 200:
            fail(f"GET {key}: {r.status}, want 200")
        elif len(data) != m[1] or hashlib.sha256(data).hexdigest() != m[0]:
            fail(f"GET {key}: {len(data)} B sha mismatch (want {m[1]} B)")
        elif r.getheader("ETag") != m[2]:
            fail(f"GET {key}: ETag {r.getheader('ETag')} != {m[2]}")

    def delete(self, key):
        r, _ = self.req("DELETE", "/kv/" + key)
        self.count["delete"] += 1
        want = 204 if key in self.model else 404
        if r.status != want:
            fail(f"DELETE {key}: {r.status}, want {want}")
        if key in self.model:
            self.stored -= self.model.pop(key)[1]

    def run(self):
        try:
            self.connect()
            for i in range(self.n):
                if i % 50 == 0:
                    self.connect()
                key = f"c{self.idx}-{self.rng.randrange(40)}"
                p = self.rng.random()
                if p < 0.45:
                    self.put(key)
                elif p < 0.85:
                    self.get(key)
                else:
                    self.delete(key)
            # The listing holds exactly this client's keys (of its prefix).
            r, data = self.req("GET", "/kv/")
            mine = sorted(k for k in data.decode().split("\n") if k.startswith(f"c{self.idx}-"))
            if r.status != 200 or mine != sorted(self.model):
                fail(f"listing of c{self.idx}: {len(mine)} keys, want {len(self.model)}")
            for k in list(self.model):
                self.delete(k)
        except Exception as e:  # a dead connection is a failure, not a crash
            fail(f"client {self.idx}: {type(e).__name__}: {e}")


def ops(host, port, n, clients, seed):
    per = max(1, n // clients)
    cs = [Client(host, port, i, seed, per, (40 << 20) // clients) for i in range(clients)]
    t0 = time.time()
    ts = [threading.Thread(target=c.run) for c in cs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    tot = {k: sum(c.count[k] for c in cs) for k in cs[0].count}
    nops = tot["put"] + tot["get"] + tot["get304"] + tot["delete"]
    print(f"ops {nops} in {time.time() - t0:.1f} s clients={clients} put={tot['put']} "
          f"(chunked {tot['put_chunked']}) get={tot['get']} get304={tot['get304']} "
          f"delete={tot['delete']} MiB={tot['bytes'] / (1 << 20):.0f} failed {len(failures)}")
    return 0 if not failures and nops >= n else 1


def status_of(conn):
    r = conn.getresponse()
    r.read()
    return r.status


def limits(host, port, fill=True):
    big = b"x" * (MAX + 1)
    c = http.client.HTTPConnection(host, port, timeout=30)
    c.request("PUT", "/kv/big", body=big)
    s1 = status_of(c)
    c = http.client.HTTPConnection(host, port, timeout=30)
    try:
        c.request("PUT", "/kv/big", body=chunks(big, random.Random(1)), encode_chunked=True)
        s2 = status_of(c)
    except (BrokenPipeError, ConnectionResetError):
        s2 = "reset"
    if not fill:
        ok = s1 == 413 and s2 == 413
        print(f"limits put_1MiB+1={s1} chunked_1MiB+1={s2} {'ok' if ok else 'FAILED'}")
        return 0 if ok else 1
    # Fill the store with 1 MiB values until it says 507.
    c = http.client.HTTPConnection(host, port, timeout=30)
    val = b"v" * MAX
    stored, s3 = 0, None
    for i in range(200):
        c.request("PUT", f"/kv/fill-{i}", body=val)
        s3 = status_of(c)
        if s3 != 201:
            break
        stored += 1
    # Full: a chunked PUT is refused too (mid-body); then DELETE frees room.
    c.request("DELETE", f"/kv/fill-0")
    s4 = status_of(c)
    c.request("PUT", "/kv/again", body=val)
    s5 = status_of(c)
    for i in range(1, stored):
        c.request("DELETE", f"/kv/fill-{i}")
        status_of(c)
    c.request("DELETE", "/kv/again")
    status_of(c)
    ok = s1 == 413 and s2 == 413 and s3 == 507 and 32 <= stored <= 64 and s4 == 204 and s5 == 201
    print(f"limits put_1MiB+1={s1} chunked_1MiB+1={s2} filled={stored}x1MiB then={s3} "
          f"delete={s4} put_after={s5} {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def stuck(host, port, body_timeout, send_timeout, n):
    res = {}

    def slow_body():
        s = socket.create_connection((host, port), timeout=60)
        s.sendall(b"PUT /kv/slow HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n")
        t0 = time.time()
        got = b""
        s.settimeout(0.5)
        while time.time() - t0 < body_timeout + 10:
            try:
                s.sendall(b"x")
            except OSError:
                break
            try:
                d = s.recv(4096)
                if not d:
                    break
                got += d
            except socket.timeout:
                pass
        res["slow"] = (got.split(b"\r\n", 1)[0].decode(errors="replace"), time.time() - t0)

    def non_reader():
        c = http.client.HTTPConnection(host, port, timeout=30)
        c.request("PUT", "/kv/big1", body=b"b" * MAX)
        status_of(c)
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.connect((host, port))
        # 16 MiB asked for: more than any socket buffers hold, so the
        # server's sends stall for good.
        s.sendall(b"GET /kv/big1 HTTP/1.1\r\nHost: a\r\n\r\n" * 16)
        time.sleep(send_timeout + 4)
        # The server gave up: what is left is less than the value, then EOF or RST.
        s.settimeout(5)
        got = 0
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                got += len(d)
        except (ConnectionResetError, socket.timeout) as e:
            res["reader_err"] = type(e).__name__
        res["reader"] = got

    ts = [threading.Thread(target=slow_body), threading.Thread(target=non_reader)]
    for t in ts:
        t.start()
    time.sleep(0.5)
    c = Client(host, port, 99, 7, n, 8 << 20)
    t0 = time.time()
    c.run()
    busy = time.time() - t0
    for t in ts:
        t.join()
    line, secs = res.get("slow", ("none", 0))
    ok = (line.startswith("HTTP/1.1 408") and body_timeout - 1 <= secs <= body_timeout + 5
          and res.get("reader", 16 * MAX) < 16 * MAX and res.get("reader_err") != "TimeoutError"
          and not failures)
    print(f"stuck slow_body='{line}' after {secs:.1f} s; non_reader got {res.get('reader')} B "
          f"({res.get('reader_err', 'eof')}); meanwhile {n} ops in {busy:.1f} s, "
          f"failed {len(failures)} {'ok' if ok else 'FAILED'}")
    return 0 if ok else 1


def main():
    a = sys.argv[1:]
    if a and a[0] == "ops" and len(a) == 6:
        return ops(a[1], int(a[2]), int(a[3]), int(a[4]), int(a[5]))
    if a and a[0] in ("limits", "limits413") and len(a) == 3:
        return limits(a[1], int(a[2]), a[0] == "limits")
    if a and a[0] == "stuck" and len(a) == 6:
        return stuck(a[1], int(a[2]), float(a[3]), float(a[4]), int(a[5]))
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
