#!/usr/bin/env python3
"""hpack_interop.py — skiff's HPACK (src/h2/hpack.h) against python3-hpack,
an independent implementation, both ways.

  tests/hpack_interop.py [--seed N] [--rounds N] [--mutants N] HPACK_PEER
  (make hpack-interop builds HPACK_PEER, build/test/hpack_peer, and runs this)
  --mutants N (default 600, or $HPACK_MUTANTS): how many mutants; each is a
  process of its own, about 85 ms of CPU under ASan with leak checking, so
  the ASan phase takes the first 150 of the same sequence.

Checks, each a PASS or FAIL line, then "hpack-interop: N passed, N failed":
  py-to-skiff/*   python's Encoder writes blocks (Huffman on and off,
                  never-indexed fields, table size changes, random lists
                  that make the table evict); one `hpack_peer decode` run
                  decodes them in order, as one connection, and must return
                  every list exactly, never-indexed flags included.
  skiff-to-py/*   the same lists through one `hpack_peer encode` run per
                  Huffman mode (and with a small table and a peer limit
                  that changes), decoded by python's Decoder: the same lists,
                  the never-indexed ones coming back as such.
  refuse/*        blocks RFC 7541 forbids (an index past the table, EOS in a
                  Huffman string, a size update above our limit or after a
                  field, an integer overflow): skiff answers with the
                  error named, and python's Decoder refuses them too.
  mutants         valid blocks with bytes changed or cut: whenever both
                  decoders accept one, they return the same list; whenever
                  python refuses one, so does skiff (600, --mutants).
  bounds          a list over --max-fields is "elist" with its first fields,
                  and the next block still decodes right (the table stayed
                  in step with python's encoder).
Exit status: 0 when every check passed, 1 otherwise, 2 on a usage error.
"""
import os
import random
import subprocess
import sys

try:
    import hpack
    from hpack import Decoder, Encoder, HeaderTuple, NeverIndexedHeaderTuple
except ImportError:
    # Debian's module lives in Debian's python3; another python3 first on
    # PATH (pyenv) does not see it.
    if os.path.realpath(sys.executable) != os.path.realpath("/usr/bin/python3") \
            and os.path.exists("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("hpack_interop: python3 module 'hpack' is missing: it comes from Debian package "
             "python3-hpack (run: tools/deps.sh)")

PASSED = 0
FAILED = 0


def ok(name):
    global PASSED
    PASSED += 1
    print(f"PASS {name}")


def bad(name, why):
    global FAILED
    FAILED += 1
    print(f"FAIL {name}: {' '.join(str(why).split())[:300]}")


def hx(b):
    return b.hex() if b else "."


def unhx(s):
    return b"" if s == "." else bytes.fromhex(s)


class Peer:
    """One hpack_peer process: one connection's state."""

    def __init__(self, path, *args):
        self.p = subprocess.Popen([path, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, bufsize=1)

    def decode(self, block):
        """-> ("ok"|"elist", [(name, value, never)]) or ("err", text)."""
        self.p.stdin.write(block.hex() + "\n")
        self.p.stdin.flush()
        head = self.p.stdout.readline().split()
        if not head:
            raise RuntimeError("hpack_peer decode gave no answer (exit %s)" % self.p.poll())
        if head[0] == "err":
            return "err", " ".join(head[1:])
        fields = []
        for _ in range(int(head[1])):
            n, v, f = self.p.stdout.readline().split()
            fields.append((unhx(n), unhx(v), f == "n"))
        return head[0], fields

    def encode(self, fields, peer_limit=None):
        """fields: [(name, value, flag)], flag "n", "x" or "-" -> block bytes."""
        if peer_limit is not None:
            self.p.stdin.write(f"peer-limit {peer_limit}\n")
        for n, v, f in fields:
            self.p.stdin.write(f"{hx(n)} {hx(v)} {f}\n")
        self.p.stdin.write("end\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline().strip()
        if not line and self.p.poll() is not None:
            raise RuntimeError("hpack_peer encode exited %s" % self.p.returncode)
        return unhx(line)

    def close(self):
        self.p.stdin.close()
        rc = self.p.wait(timeout=10)
        if rc != 0:
            raise RuntimeError(f"hpack_peer exited {rc}")


NAMES = [b":method", b":path", b":scheme", b":authority", b"user-agent", b"accept", b"cookie",
         b"accept-encoding", b"x-request-id", b"content-type", b"x-custom-long-header-name",
         b"authorization", b"if-none-match", b"referer"]


def random_list(rng):
    out = []
    for _ in range(rng.randrange(1, 14)):
        name = rng.choice(NAMES) if rng.random() < 0.85 else \
            bytes(rng.choice(b"abcdefghijklmnopqrstuvwxyz-") for _ in range(rng.randrange(1, 30)))
        k = rng.random()
        if k < 0.3:   # repeated values: table hits
            value = rng.choice([b"GET", b"/", b"https", b"example.org", b"*/*", b"gzip, br", b""])
        elif k < 0.8:
            value = bytes(rng.choice(b"abcdefghij0123456789/=;. ") for _ in range(rng.randrange(0, 120)))
        else:         # any byte, any length up to 600: eviction, every Huffman code
            value = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 600)))
        out.append((name, value, rng.random() < 0.1))
    return out


def scenario_lists(rng, rounds):
    req = [(b":method", b"GET", False), (b":scheme", b"https", False), (b":path", b"/index.html", False),
           (b":authority", b"www.example.com", False), (b"user-agent", b"curl/7.88.1", False),
           (b"accept", b"*/*", False)]
    lists = [req, req, req + [(b"cookie", b"a=b; c=d", False), (b"authorization", b"secret", True)],
             req[:3] + [(b"x-empty", b"", False), (b"", b"", False)]]
    lists += [random_list(rng) for _ in range(rounds)]
    return lists


def py_tuples(fields):
    return [NeverIndexedHeaderTuple(n, v) if never else HeaderTuple(n, v) for n, v, never in fields]


def same(got, want):
    return [(n, v, bool(f)) for n, v, f in got] == [(n, v, bool(f)) for n, v, f in want]


def check_py_to_skiff(peer_path, name, lists, huffman, sizes=None):
    enc = Encoder()
    # What python's own decoder reads from the block: python's encoder
    # sends a sensitive pair already in its table as an index, not as a
    # never-indexed literal, so the flag to expect is the wire's.
    own = Decoder()
    own.max_header_list_size = 1 << 24
    peer = Peer(peer_path, "decode", "--limit", "4096")
    try:
        for i, fields in enumerate(lists):
            if sizes and i in sizes:
                enc.header_table_size = sizes[i]
            block = enc.encode(py_tuples(fields), huffman=huffman)
            want = [(t[0], t[1], isinstance(t, NeverIndexedHeaderTuple)) for t in own.decode(block, raw=True)]
            if [(n, v) for n, v, _ in want] != [(n, v) for n, v, _ in fields]:
                return bad(name, f"block {i}: python does not read back its own block")
            verdict, got = peer.decode(block)
            if verdict != "ok" or not same(got, want):
                return bad(name, f"block {i} ({block[:40].hex()}...): skiff said {verdict} {str(got)[:200]}")
        peer.close()
    except Exception as e:  # a crash of the peer is a failure, with its words
        return bad(name, e)
    ok(f"{name} ({len(lists)} blocks)")


def check_skiff_to_py(peer_path, name, lists, args, peer_limits=None):
    dec = Decoder()
    dec.max_header_list_size = 1 << 24
    peer = Peer(peer_path, "encode", *args)
    try:
        for i, fields in enumerate(lists):
            lim = peer_limits.get(i) if peer_limits else None
            if lim is not None:
                dec.max_allowed_table_size = lim
            flags = [(n, v, "n" if never else "-") for n, v, never in fields]
            block = peer.encode(flags, lim)
            try:
                got = dec.decode(block, raw=True)
            except Exception as e:
                return bad(name, f"block {i}: python refused skiff's block {block[:40].hex()}...: {e!r}")
            got = [(t[0], t[1], isinstance(t, NeverIndexedHeaderTuple)) for t in got]
            if not same(got, fields):
                return bad(name, f"block {i}: python decoded {str(got)[:200]}")
        peer.close()
    except Exception as e:
        return bad(name, e)
    ok(f"{name} ({len(lists)} blocks)")


def py_refuses(block, limit=4096):
    d = Decoder()
    d.max_allowed_table_size = limit
    try:
        d.decode(block, raw=True)
        return False
    except Exception:  # hpack's HPACKError family, or a bad index
        return True


def check_refusals(peer_path):
    e = Encoder()
    e.header_table_size = 8192
    cases = [
        ("index-past-table", bytes.fromhex("be"), "-3"),
        ("index-zero", bytes.fromhex("80"), "-3"),
        ("huffman-eos", bytes.fromhex("000161 84ffffffff".replace(" ", "")), "-4"),
        ("integer-overflow", bytes.fromhex("ffffffffffffffffff0f"), "-2"),
        ("size-update-above-limit", e.encode([(b"a", b"b")]), "-5"),
        ("truncated-string", bytes.fromhex("400a6375"), "-1"),
    ]
    for name, block, code in cases:
        peer = Peer(peer_path, "decode", "--limit", "4096")
        verdict, got = peer.decode(block)
        peer.close()
        if verdict != "err" or not got.startswith(code + " "):
            bad(f"refuse/{name}", f"skiff said {verdict} {got}, want err {code}")
        elif not py_refuses(block):
            bad(f"refuse/{name}", "python accepts it: the case is not an error")
        else:
            ok(f"refuse/{name} (skiff: {got}; python refuses too)")
    # A size update after a field: python-hpack does not check the place,
    # RFC 7541 4.2 does ("at the beginning of the first field block").
    peer = Peer(peer_path, "decode")
    verdict, got = peer.decode(bytes.fromhex("8220"))
    peer.close()
    if verdict == "err" and got.startswith("-6 "):
        ok(f"refuse/size-update-after-field (skiff: {got})")
    else:
        bad("refuse/size-update-after-field", f"skiff said {verdict} {got}")


def check_mutants(peer_path, rng, lists, count):
    enc = Encoder()
    blocks = [enc.encode(py_tuples(f), huffman=rng.random() < 0.5) for f in lists[:60]]
    agree = both_ok = stricter = 0
    for n in range(count):
        b = bytearray(rng.choice(blocks[:1]) if n % 3 == 0 else rng.choice(blocks))
        # Fresh decoders both sides: the mutant is the first block.
        for _ in range(rng.randrange(1, 4)):
            k = rng.random()
            if k < 0.5 and b:
                b[rng.randrange(len(b))] = rng.randrange(256)
            elif k < 0.8 and b:
                del b[rng.randrange(len(b)):]
            else:
                b.insert(rng.randrange(len(b) + 1), rng.randrange(256))
        b = bytes(b)
        d = Decoder()
        d.max_header_list_size = 1 << 24
        try:
            pyl = [(t[0], t[1], isinstance(t, NeverIndexedHeaderTuple)) for t in d.decode(b, raw=True)]
        except Exception:
            pyl = None
        peer = Peer(peer_path, "decode")
        verdict, got = peer.decode(b)
        peer.close()
        if pyl is None and verdict != "err":
            return bad("mutants", f"python refuses {b.hex()[:80]}..., skiff decodes it: {str(got)[:120]}")
        if pyl is not None and verdict == "ok":
            if not same(got, pyl):
                return bad("mutants", f"{b.hex()[:80]}...: skiff {str(got)[:100]} python {str(pyl)[:100]}")
            both_ok += 1
        stricter += pyl is not None and verdict == "err"
        agree += 1
    ok(f"mutants ({agree} blocks, {both_ok} accepted by both with the same list, "
       f"{stricter} refused by skiff alone)")


def check_bounds(peer_path):
    enc = Encoder()
    five = [(b":method", b"GET"), (b":path", b"/a"), (b"x-one", b"1"), (b"x-two", b"2"), (b"x-three", b"3")]
    peer = Peer(peer_path, "decode", "--max-fields", "3")
    v1, got1 = peer.decode(enc.encode(five))
    # The second block refers to the entries the first one added, the
    # dropped fields' among them.
    v2, got2 = peer.decode(enc.encode(five[2:]))
    peer.close()
    if v1 != "elist" or [(n, v) for n, v, _ in got1] != five[:3]:
        return bad("bounds", f"first block: {v1} {got1}")
    if v2 != "ok" or [(n, v) for n, v, _ in got2] != five[2:]:
        return bad("bounds", f"second block: {v2} {got2}")
    ok("bounds (elist with 3 of 5 fields, then the table still in step)")


def main():
    args = sys.argv[1:]
    if not args or args[0] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if args else 2)
    seed, rounds = 1, 300
    mutants = int(os.environ.get("HPACK_MUTANTS", "600"))
    while len(args) > 1 and args[0].startswith("--"):
        if args[0] == "--seed":
            seed = int(args[1])
        elif args[0] == "--rounds":
            rounds = int(args[1])
        elif args[0] == "--mutants":
            mutants = int(args[1])
        else:
            print(f"hpack_interop: unknown option {args[0]}", file=sys.stderr)
            sys.exit(2)
        args = args[2:]
    if len(args) != 1 or not os.access(args[0], os.X_OK):
        print("hpack_interop: want the path of build/test/hpack_peer (make hpack-interop)", file=sys.stderr)
        sys.exit(2)
    peer = args[0]
    print(f"hpack-interop: python3-hpack {getattr(hpack, '__version__', '?')}, seed {seed}, {rounds} random lists")
    rng = random.Random(seed)
    lists = scenario_lists(rng, rounds)

    check_py_to_skiff(peer, "py-to-skiff/huffman", lists, True)
    check_py_to_skiff(peer, "py-to-skiff/plain", lists, False)
    # Table size changes between blocks: down to 256, to 0 (empties it),
    # back up; python writes the updates, skiff applies them.
    check_py_to_skiff(peer, "py-to-skiff/size-updates", lists[:120], True,
                      sizes={10: 256, 30: 0, 31: 4096, 60: 1024, 90: 4096})

    for mode in ("auto", "never", "always"):
        check_skiff_to_py(peer, f"skiff-to-py/huffman-{mode}", lists, ["--huffman", mode])
    # Our table limited to 512 (announced in the first block), and the
    # peer's SETTINGS_HEADER_TABLE_SIZE changing under it.
    check_skiff_to_py(peer, "skiff-to-py/small-table", lists[:120], ["--limit", "512"],
                      peer_limits={20: 128, 40: 0, 41: 4096, 80: 300})

    check_refusals(peer)
    check_mutants(peer, rng, lists, mutants)
    check_bounds(peer)

    print(f"hpack-interop: {PASSED} passed, {FAILED} failed")
    sys.exit(1 if FAILED else 0)


if __name__ == "__main__":
    main()
