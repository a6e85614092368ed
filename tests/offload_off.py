#!/usr/bin/env python3
"""offload_off.py IFACE — turn off tx/rx checksum, TSO, GSO and GRO offloads
on IFACE with the SIOCETHTOOL ioctl (what `ethtool -K IF tx off rx off tso off
gso off gro off` does), for machines without ethtool.  Run it inside the
namespace that holds IFACE."""
import ctypes
import fcntl
import socket
import struct
import sys

SIOCETHTOOL = 0x8946
# Legacy per-feature "set" commands of <linux/ethtool.h>.
COMMANDS = {
    "tx": 0x17,   # ETHTOOL_STXCSUM
    "rx": 0x15,   # ETHTOOL_SRXCSUM
    "tso": 0x1F,  # ETHTOOL_STSO
    "gso": 0x24,  # ETHTOOL_SGSO
    "gro": 0x2C,  # ETHTOOL_SGRO
}


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: offload_off.py IFACE", file=sys.stderr)
        return 2
    name = sys.argv[1].encode()
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    failed = 0
    for feature, cmd in COMMANDS.items():
        value = ctypes.create_string_buffer(struct.pack("II", cmd, 0))
        ifreq = struct.pack("16sP", name, ctypes.addressof(value))
        try:
            fcntl.ioctl(sock.fileno(), SIOCETHTOOL, ifreq)
        except OSError as e:
            print(f"offload_off: {sys.argv[1]} {feature} off: {e}", file=sys.stderr)
            failed += 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
