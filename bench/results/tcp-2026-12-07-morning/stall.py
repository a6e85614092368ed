# stall.py PCAP [MS]: in a bench-tcp send run's capture (BENCH_TCP_PCAP=1, beside the sender),
# the periods the cumulative ACK stood still longer than MS (default 30) with data outstanding,
# each with the sends of the segment at the hole: its first send, then its retransmissions (the
# gap from the second to the third is how long a lost retransmission took to be found).  Times in
# ms from the sender's SYN.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
from tcp_capture import segments  # noqa: E402  (bench/tcp_capture.py)

if len(sys.argv) < 2 or sys.argv[1] in ('-h', '--help'):
    print('usage: stall.py PCAP [MS]')
    sys.exit(0 if len(sys.argv) >= 2 else 2)
LIM = float(sys.argv[2]) if len(sys.argv) > 2 else 30
MSS = 1448
una = hi = 0
una_t = 0.0
sends, stalls = {}, []
for t, out, lo, r, ack in segments(sys.argv[1]):
    if out:
        for s in range(lo, r, MSS):
            sends.setdefault(s, []).append(t)
        hi = max(hi, r)
    elif ack > una:
        # The handshake's wait (one send of the first segment) is not a repair.
        if t - una_t > LIM and hi > una and len(sends.get(una, [])) > 1:
            stalls.append((una_t, t - una_t, una, [round(x, 1) for x in sends[una]], (ack - una) // MSS))
        una, una_t = ack, t
print(sys.argv[1].split('/')[-1], 'stalls', len(stalls), 'total %.0f ms' % sum(s[1] for s in stalls))
for s in stalls:
    print('   at %.1f for %.1f ms hole %d sends %s then acked %d segs' % s)
