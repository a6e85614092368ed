"""pcap_frames.py — the frames of a classic pcap file (tcpdump -w), for the
checks and bench tools that read captures themselves (tests/pace_check.py,
bench/tcp_pcap_flow.py): no library beyond Python's.

frames(path) yields (time in seconds, frame bytes) in capture order, for an
Ethernet capture (link type 1) in either byte order, micro- or nanosecond
stamps; a record cut short by the file's end ends it.  A file that is not
such a capture raises ValueError; one that cannot be read, OSError."""
import struct


def frames(path):
    with open(path, "rb") as f:
        hdr = f.read(24)
        if len(hdr) < 24:
            raise ValueError("not a pcap file (too short)")
        magic = struct.unpack("<I", hdr[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            end = "<"
        elif magic in (0xD4C3B2A1, 0x4D3CB2A1):
            end = ">"
        else:
            raise ValueError(f"not a pcap file (magic {magic:#x})")
        nano = magic in (0xA1B23C4D, 0x4D3CB2A1)
        link = struct.unpack(end + "I", hdr[20:24])[0]
        if link != 1:
            raise ValueError(f"link type {link}, only Ethernet (1) is read")
        while True:
            rh = f.read(16)
            if len(rh) < 16:
                return
            sec, frac, incl, _orig = struct.unpack(end + "IIII", rh)
            data = f.read(incl)
            if len(data) < incl:
                return
            yield sec + frac / (1e9 if nano else 1e6), data
