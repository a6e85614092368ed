#!/usr/bin/env python3
"""tests/libc_check.py — what examples/libc_check.c must answer, computed here.

  tests/libc_check.py SEED FILE [--clock-slack S]

FILE holds the body of GET /libc/SEED (from the guest or the hosted build).
This script draws the same inputs from SEED (the example's LCG) and works
out every answer with Python's own formatting, int(), sorted(), time and
slice assignment, then compares line by line.  Prints one "ok NAME" or
"FAIL NAME: want ... got ..." per line and exits 1 on any difference.

The clock line is the one answer not computed from SEED: time(NULL) must
be within --clock-slack seconds (default 60) of the host's clock, and two
CLOCK_MONOTONIC reads must not go backwards.
"""
import argparse
import struct
import sys
import time

M64 = (1 << 64) - 1


class Lcg:
    """The example's generator: x = x*A + C mod 2^64, a draw is x >> 33."""

    def __init__(self, seed):
        self.x = seed & M64

    def draw(self):
        self.x = (self.x * 6364136223846793005 + 1442695040888963407) & M64
        return self.x >> 33


def fnv(data, h=0xCBF29CE484222325):
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def expect(seed):
    """Every line but the clock's, in the example's order, as a dict."""
    g = Lcg(seed)
    want = {"seed": "%d" % seed}

    d = g.draw() % 2000001 - 1000000
    x = g.draw()
    word = "w%d" % (g.draw() % 100000)
    want["printf"] = "%d %s %x %f|%.3e|%g|%8.2f|%-7s|%+d|%d|%d" % (
        d, word, x, d / 1024, d / 7, d / 3, d / 1000, word, d, d * 1000003, x << 20)
    cut = "truncated-%d" % d
    want["snprintf-trunc"] = "%d %s" % (len(cut), cut[:7])

    n = g.draw() % 1000000000 - 500000000
    h = g.draw()
    o = g.draw() % 100000
    # "  N xyz" base 10; "0xHEXg" base 0 (hex); "0OCT9" base 0 (octal, 9 ends it)
    want["strtol"] = " ".join(str(v) for v in (
        n, 2 + len(str(n)), h, 2 + len("%x" % h), o, 1 + len("%o" % o),
        (1 << 63) - 1, 34, (1 << 64) - 1, int("zz", 36)))

    v = sorted(g.draw() - (1 << 30) for _ in range(2000))
    hv = fnv(b"".join(struct.pack("<i", i) for i in v))
    words = sorted("%x" % (g.draw() % 0x100000) for _ in range(200))
    hw = fnv(b"".join(w.encode() + b"\0" for w in words))
    want["qsort"] = "%d %d %016x %s %s %016x" % (v[0], v[-1], hv, words[0], words[-1], hw)

    hi = g.draw()
    lo = g.draw() & 3
    t = (hi << 2 | lo) % 8000000000
    s = time.strftime("%Y-%m-%d %H:%M:%S %a %A %b %B %j %u %w %U %y %%", time.gmtime(t))
    want["strftime"] = "%d %d %s" % (t, len(s), s)

    slots = [None] * 64  # size held, or None
    mallocs = reallocs = frees = total = 0
    for _ in range(3000):
        r = g.draw()
        sl = r % 64
        size = 1 + g.draw() % (256 << 10) if (r >> 8) % 3 == 0 else 1 + g.draw() % 512
        if slots[sl] is None:
            mallocs += 1
        elif (r >> 16) & 1:
            reallocs += 1
        else:
            frees += 1
            slots[sl] = None
            continue
        slots[sl] = size
        total += size
    # bad 0; malloc(2^40) NULL with errno ENOMEM (12)
    want["malloc"] = "%d %d %d %d 0 1 12" % (mallocs, reallocs, frees, total)

    src_len, mv_len = 4096 + 128, 2 * 4096 + 128
    for _ in range(src_len):
        g.draw()  # the memcpy source: checked in the guest byte by byte
    mv = bytearray(g.draw() & 0xFF for _ in range(mv_len))
    for n in range(4097):
        a = g.draw() % (mv_len - n + 1)
        b = g.draw() % (mv_len - n + 1)
        mv[a:a + n] = mv[b:b + n]  # a copy first: memmove's meaning
    want["memcpy"] = "0 %016x" % fnv(mv)

    m = g.draw() % 100000
    num = "%d.%03de-%d!" % (m, g.draw() % 1000, g.draw() % 20)
    v = float(num[:-1])  # Python's float(): correctly rounded, as strtod must be
    keys = sorted(g.draw() for _ in range(257))
    k = keys[g.draw() % 257]
    g.draw()  # calloc's size: its bytes are counted in the guest
    # bsearch may find any of equal keys; the example reports the index it
    # found and whether the key there matches, so compare both loosely.
    want["more"] = "%s %.17g %d 3 12 ab 3.5 IDX 1 0 0 1" % (num, v, len(num) - 1)
    want["_more_keys"] = (keys, k)
    return want


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n", 2)[2])
    ap.add_argument("seed", type=int)
    ap.add_argument("file")
    ap.add_argument("--clock-slack", type=float, default=60.0)
    a = ap.parse_args()
    got = {}
    with open(a.file, encoding="utf-8", errors="replace") as f:
        for line in f.read().splitlines():
            name, _, rest = line.partition(" ")
            got[name] = rest
    bad = 0
    exp = expect(a.seed)
    keys, k = exp.pop("_more_keys")
    g = got.get("more", "").split()
    if len(g) == 12 and g[7].isdigit() and int(g[7]) < len(keys) and keys[int(g[7])] == k:
        exp["more"] = exp["more"].replace("IDX", g[7])
    for name, want in exp.items():
        if got.get(name) == want:
            print("ok %s" % name)
        else:
            print("FAIL %s: want %r got %r" % (name, want, got.get(name)))
            bad += 1
    clock = got.get("clock", "").split()
    now = time.time()
    if len(clock) == 2 and abs(int(clock[0]) - now) <= a.clock_slack and clock[1] == "1":
        print("ok clock (%+d s from the host's)" % (int(clock[0]) - now))
    else:
        print("FAIL clock: want time(NULL) within %g s of %d and monotonic 1, got %r"
              % (a.clock_slack, now, got.get("clock")))
        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
