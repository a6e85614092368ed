# hole_lat.py DIR [SRC]: in bench-tcp captures (BENCH_TCP_PCAP=1; DIR/*/pcap/*-{skiff,linux}-bbr-send-1.pcap,
# taken on the sender's side), per stack: for every segment resent at least once, the time from its
# first send until the cumulative ACK passed it, and the times between its first and second send and
# between its second and third (a lost retransmission found).  SRC: the sender's address (default
# 198.18.0.2, a serial run's namespace).
import glob
import re
import statistics as S
import subprocess
import sys

if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
    print('usage: hole_lat.py DIR [SRC]')
    sys.exit(0 if len(sys.argv) >= 2 else 2)
SRC = sys.argv[2] if len(sys.argv) > 2 else '198.18.0.2'


def run(cap):
    out = subprocess.run(['tcpdump', '-r', cap, '-tt', '-n', '-S'], capture_output=True,
                         text=True).stdout.splitlines()
    t0 = isn = None
    sent, done, una = {}, {}, 0
    for ln in out:
        m = re.match(r'(\d+\.\d+) IP (\S+)\.\d+ >', ln)
        if not m:
            continue
        t = float(m.group(1))
        t0 = t if t0 is None else t0
        t = (t - t0) * 1000
        if m.group(2) == SRC:
            if isn is None:
                isn = int(re.search(r'seq (\d+)', ln).group(1)) + 1
                continue
            ms = re.search(r'seq (\d+):(\d+)', ln)
            if ms:
                sent.setdefault(int(ms.group(1)) - isn, []).append(t)
        elif isn is not None:
            ma = re.search(r'ack (\d+)', ln)
            if ma and int(ma.group(1)) - isn > una:
                a = int(ma.group(1)) - isn
                for seq, ts in sent.items():
                    if una <= seq < a and len(ts) > 1 and seq not in done:
                        done[seq] = t
                una = a
    lat = [done[s] - ts[0] for s, ts in sent.items() if len(ts) > 1 and s in done]
    lat2 = [done[s] - ts[0] for s, ts in sent.items() if len(ts) > 2 and s in done]
    d1 = [ts[1] - ts[0] for s, ts in sent.items() if len(ts) > 1 and s in done]
    d2 = [ts[2] - ts[1] for s, ts in sent.items() if len(ts) > 2 and s in done]
    return lat, lat2, d1, d2


def q(x):
    if not x:
        return 'n=0'
    return f'n={len(x)} median {S.median(x):.1f} p90 {sorted(x)[int(len(x) * .9)]:.1f} max {max(x):.1f} ms'


for st in ('skiff', 'linux'):
    acc = [[], [], [], []]
    for cap in sorted(glob.glob(f'{sys.argv[1]}/*/pcap/*-{st}-bbr-send-1.pcap')):
        for a, b in zip(acc, run(cap)):
            a += b
    print(f'{st}: resent segments, first send to the cumulative ACK past it: {q(acc[0])}')
    print(f'{st}:   of them resent twice or more: {q(acc[1])}')
    print(f'{st}:   first to second send: {q(acc[2])}')
    print(f'{st}:   second to third send: {q(acc[3])}')
