#!/usr/bin/env python3
"""tests/metrics_check.py — helpers for tests/metrics.sh.

  parse FILE            the exposition in FILE, read by our own reading of
                        the 0.0.4 text format (in addition to promtool):
                        every sample belongs to a family announced by
                        # HELP and # TYPE before it, names match
                        [a-zA-Z_:][a-zA-Z0-9_:]*, counters end in _total,
                        no family twice; histograms have cumulative buckets
                        ending in le="+Inf" equal to _count, and a _sum.
                        Prints "N families, N samples, N histograms".
  value FILE NAME       the value of the sample NAME (no labels)
  hold HOST PORT N      open N keep-alive connections, one GET each, print
                        "ports P1 P2 ..." (the local ports), then hold them
                        open until stdin closes or 60 s
  stat FILE PEER PORTS  FILE is `skiff stat` output: every port in PORTS
                        (comma-separated) has an ESTAB line with peer
                        PEER:PORT and a detail line with rtt and cwnd; and
                        the counters section has http.requests
"""
import re
import select
import socket
import sys
import time

NAME = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*$')
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def die(msg):
    print(msg)
    sys.exit(1)


def parse(path):
    fams = {}   # name -> type
    helped = set()
    samples = 0
    hists = {}  # name -> list of (le, value), count, sum
    for n, line in enumerate(open(path, encoding='utf-8'), 1):
        line = line.rstrip('\n')
        if not line:
            continue
        if line.startswith('# HELP '):
            name = line.split(' ', 3)[2]
            if not NAME.match(name):
                die(f'line {n}: bad name {name!r}')
            if name in helped:
                die(f'line {n}: {name} announced twice')
            helped.add(name)
            continue
        if line.startswith('# TYPE '):
            _, _, name, typ = line.split(' ')
            if name not in helped:
                die(f'line {n}: TYPE before HELP for {name}')
            if name in fams:
                die(f'line {n}: TYPE twice for {name}')
            if typ not in ('counter', 'gauge', 'histogram'):
                die(f'line {n}: type {typ}')
            if typ == 'counter' and not name.endswith('_total'):
                die(f'line {n}: counter {name} does not end in _total')
            fams[name] = typ
            if typ == 'histogram':
                hists[name] = {'b': [], 'count': None, 'sum': None}
            continue
        if line.startswith('#'):
            die(f'line {n}: stray comment {line!r}')
        m = SAMPLE.match(line)
        if not m:
            die(f'line {n}: not a sample: {line!r}')
        name, labels, val = m.groups()
        if not re.match(r'^[0-9]+(\.[0-9]+)?$', val):
            die(f'line {n}: value {val!r} is not a number')
        samples += 1
        fam = name
        for suf in ('_bucket', '_sum', '_count'):
            if name.endswith(suf) and name[:-len(suf)] in hists:
                fam = name[:-len(suf)]
        if fam not in fams:
            die(f'line {n}: {name} has no # TYPE before it')
        if fams[fam] == 'histogram':
            h = hists[fam]
            if name.endswith('_bucket'):
                lm = re.match(r'^\{le="([^"]+)"\}$', labels or '')
                if not lm:
                    die(f'line {n}: bucket without le: {line!r}')
                le = float('inf') if lm.group(1) == '+Inf' else float(lm.group(1))
                h['b'].append((le, int(val)))
            elif name.endswith('_count'):
                h['count'] = int(val)
            else:
                h['sum'] = int(val)
        elif labels:
            die(f'line {n}: unexpected labels {labels}')
    for name, h in hists.items():
        b = h['b']
        if not b or b[-1][0] != float('inf'):
            die(f'{name}: no +Inf bucket')
        for (l0, v0), (l1, v1) in zip(b, b[1:]):
            if l1 <= l0 or v1 < v0:
                die(f'{name}: buckets not increasing/cumulative at le={l1}')
        if h['count'] != b[-1][1] or h['sum'] is None:
            die(f'{name}: _count {h["count"]} != +Inf bucket {b[-1][1]}, or no _sum')
    print(f'{len(fams)} families, {samples} samples, {len(hists)} histograms')


def value(path, key):
    for line in open(path, encoding='utf-8'):
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            print(parts[1])
            return
    die(f'no sample {key}')


def hold(host, port, n):
    socks = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=5)
        s.sendall(f'GET / HTTP/1.1\r\nHost: {host}\r\n\r\n'.encode())
        buf = b''
        while b'\r\n\r\n' not in buf:
            d = s.recv(4096)
            if not d:
                die('closed before a response')
            buf += d
        head, _, body = buf.partition(b'\r\n\r\n')
        m = re.search(rb'(?i)content-length: *(\d+)', head)
        want = int(m.group(1)) if m else 0
        while len(body) < want:
            body += s.recv(4096)
        socks.append(s)
    print('ports ' + ' '.join(str(s.getsockname()[1]) for s in socks), flush=True)
    end = time.time() + 60
    while time.time() < end:
        r, _, _ = select.select([sys.stdin], [], [], 0.5)
        if r and not sys.stdin.readline():
            break
    for s in socks:
        s.close()


def stat(path, peer, ports):
    text = open(path, encoding='utf-8').read()
    lines = text.split('\n')
    for p in ports.split(','):
        want = f'{peer}:{p}'
        hit = [i for i, l in enumerate(lines) if l.startswith('ESTAB') and l.split()[-1] == want]
        if len(hit) != 1:
            die(f'{len(hit)} ESTAB lines with peer {want}')
        detail = lines[hit[0] + 1]
        if not (detail.startswith('\t') and 'rtt:' in detail and 'cwnd:' in detail and
                'rto:' in detail):
            die(f'no detail line after the one for {want}: {detail!r}')
    if not re.search(r'^http\.requests [0-9]+$', text, re.M):
        die('no http.requests counter')
    print(f'{len(ports.split(","))} connections listed with rtt/rto/cwnd')


def main():
    a = sys.argv[1:]
    if a[:1] == ['parse'] and len(a) == 2:
        parse(a[1])
    elif a[:1] == ['value'] and len(a) == 3:
        value(a[1], a[2])
    elif a[:1] == ['hold'] and len(a) == 4:
        hold(a[1], int(a[2]), int(a[3]))
    elif a[:1] == ['stat'] and len(a) == 4:
        stat(a[1], a[2], a[3])
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == '__main__':
    main()
