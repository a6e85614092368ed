#!/usr/bin/env python3
"""site_tool.py — the tree and the client of tests/site.sh.

  site_tool.py gen DIR [--files N] [--seed S] [--max-total BYTES]
      A tree of N regular files (default 1000) with random names in nested
      folders (up to 5 deep; names mix letters, digits, spaces, '%', '+',
      '~', and UTF-8), sizes from 0 B to 4 MiB (both ends included; most
      small, some large), the total kept under --max-total (default 190
      MiB).  Also an index.html at the top, plus what must NOT be served:
      dotfiles, a dot-directory and symbolic links (to a file inside and to
      /etc/passwd).  Prints "gen: N files, B bytes".

  site_tool.py fetch URL DIR [--conns C] [--sizes-only]
      GETs every file the tree serves (the walk's rules: regular files, no
      symlinks, no names starting with '.'), percent-encoded, over C
      keep-alive connections (default 4), and compares each body's sha256
      with the file's.  Also: "/" is index.html's bytes, a missing path and
      every file that must not be served get 404.  Prints one line per
      mismatch and "fetch: N files, B bytes, all sha256 equal" or "fetch: K
      of N differ"; exit 0 only if everything matched.
"""
import argparse
import hashlib
import http.client
import os
import random
import stat
import sys
import threading
import urllib.parse

MIB = 1 << 20
NAME_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
SPECIAL = [" ", "%", "+", "~", "é", "ü", "(", ")", "=", ",", "!"]


def rand_name(rng):
    n = rng.randint(1, 24)
    s = [rng.choice(NAME_CHARS) for _ in range(n)]
    for _ in range(rng.randint(0, 2)):
        s.insert(rng.randint(1, len(s)), rng.choice(SPECIAL))
    name = "".join(s)
    if rng.random() < 0.5:
        name += rng.choice([".html", ".css", ".js", ".png", ".bin", ".txt", ".json", ""])
    return name


def sizes(rng, n, max_total):
    out = [0, 4 * MIB]  # both ends, always
    while len(out) < n:
        r = rng.random()
        if r < 0.05:
            out.append(rng.randint(0, 16))
        elif r < 0.90:
            out.append(int(2 ** rng.uniform(4, 18)))  # 16 B .. 256 KiB
        else:
            out.append(rng.randint(256 * 1024, 4 * MIB))
    # Keep the total modest: shrink the largest ones (never the 4 MiB one).
    total = sum(out)
    order = sorted(range(2, n), key=lambda i: -out[i])
    k = 0
    while total > max_total and k < len(order):
        i = order[k]
        total -= out[i] - out[i] // 16
        out[i] //= 16
        k += 1
    rng.shuffle(out)
    return out


def gen(args):
    rng = random.Random(args.seed)
    root = args.dir
    os.makedirs(root, exist_ok=True)
    dirs = [""]
    for _ in range(max(4, args.files // 25)):
        parent = rng.choice(dirs)
        if parent.count("/") >= 5:
            continue
        d = (parent + "/" if parent else "") + rand_name(rng).replace(".", "_")
        dirs.append(d)
    seen = set()
    total = 0
    made = 0
    for size in sizes(rng, args.files, args.max_total):
        while True:
            d = rng.choice(dirs)
            rel = (d + "/" if d else "") + rand_name(rng)
            if rel.lower() not in seen and not os.path.basename(rel).startswith("."):
                break
        seen.add(rel.lower())
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(rng.randbytes(size))
        total += size
        made += 1
    with open(os.path.join(root, "index.html"), "wb") as f:
        body = b"<!doctype html><title>site test</title><p>the site test's tree</p>\n"
        f.write(body)
    total += len(body)
    made += 1
    # What must not be served.
    with open(os.path.join(root, ".hidden"), "w") as f:
        f.write("secret\n")
    os.makedirs(os.path.join(root, ".git"), exist_ok=True)
    with open(os.path.join(root, ".git", "config"), "w") as f:
        f.write("secret\n")
    os.symlink("/etc/passwd", os.path.join(root, "passwd-link"))
    os.symlink("index.html", os.path.join(root, "index-link.html"))
    print(f"gen: {made} files, {total} bytes")


def served(root):
    """(rel, abspath) of what the walk serves, and what it must not."""
    good, bad = [], []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        keep = []
        for d in dirnames:
            p = os.path.join(dirpath, d)
            if d.startswith(".") or os.path.islink(p):
                bad.append(os.path.join(rel_dir, d, "x"))
            else:
                keep.append(d)
        dirnames[:] = keep
        for fn in filenames:
            p = os.path.join(dirpath, fn)
            rel = os.path.join(rel_dir, fn)
            st = os.lstat(p)
            if fn.startswith(".") or not stat.S_ISREG(st.st_mode):
                bad.append(rel)
            else:
                good.append((rel, p))
    return good, bad


def quote(rel):
    return "/" + urllib.parse.quote(rel.encode("utf-8"), safe="/")


class Client:
    def __init__(self, host, port):
        self.host, self.port = host, port
        self.c = None

    def get(self, path):
        for attempt in range(3):
            try:
                if self.c is None:
                    self.c = http.client.HTTPConnection(self.host, self.port, timeout=60)
                self.c.request("GET", path)
                r = self.c.getresponse()
                body = r.read()
                if r.getheader("connection", "").lower() == "close":
                    self.c.close()
                    self.c = None
                return r.status, body
            except (OSError, http.client.HTTPException):
                if self.c:
                    self.c.close()
                self.c = None
                if attempt == 2:
                    raise
        raise RuntimeError("unreachable")


def fetch(args):
    u = urllib.parse.urlsplit(args.url)
    host, port = u.hostname, u.port or 80
    good, bad = served(args.dir)
    work = list(good)
    lock = threading.Lock()
    errors = []
    done = {"n": 0, "bytes": 0}

    def worker():
        cl = Client(host, port)
        while True:
            with lock:
                if not work:
                    return
                rel, p = work.pop()
            try:
                status, body = cl.get(quote(rel))
            except Exception as e:  # noqa: BLE001 - reported as a mismatch
                with lock:
                    errors.append(f"{rel}: {type(e).__name__}: {e}")
                continue
            with open(p, "rb") as f:
                want = f.read()
            with lock:
                if status != 200:
                    errors.append(f"{rel}: status {status}")
                elif hashlib.sha256(body).digest() != hashlib.sha256(want).digest():
                    errors.append(f"{rel}: sha256 differs ({len(body)} bytes, want {len(want)})")
                else:
                    done["n"] += 1
                    done["bytes"] += len(body)

    threads = [threading.Thread(target=worker) for _ in range(args.conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    cl = Client(host, port)
    idx = os.path.join(args.dir, "index.html")
    if os.path.isfile(idx):
        status, body = cl.get("/")
        with open(idx, "rb") as f:
            if status != 200 or body != f.read():
                errors.append(f"/: status {status}, {len(body)} bytes, not index.html")
    for rel in bad + ["no/such/file", "nope.html"]:
        status, _ = cl.get(quote(rel))
        if status != 404:
            errors.append(f"{rel}: status {status}, want 404 (must not be served)")
    for e in errors[:40]:
        print("mismatch:", e)
    if errors:
        print(f"fetch: {len(errors)} of {len(good) + len(bad) + 3} checks failed")
        return 1
    print(f"fetch: {done['n']} files, {done['bytes']} bytes, all sha256 equal; "
          f"{len(bad) + 2} paths 404 as they must")
    return 0


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("dir")
    g.add_argument("--files", type=int, default=1000)
    g.add_argument("--seed", type=int, default=13)
    g.add_argument("--max-total", type=int, default=190 * MIB)
    f = sub.add_parser("fetch")
    f.add_argument("url")
    f.add_argument("dir")
    f.add_argument("--conns", type=int, default=4)
    args = ap.parse_args()
    if args.cmd == "gen":
        gen(args)
        return 0
    return fetch(args)


if __name__ == "__main__":
    sys.exit(main())
