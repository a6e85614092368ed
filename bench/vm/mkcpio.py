#!/usr/bin/env python3
"""mkcpio.py — write a gzip'ed cpio "newc" archive (an initramfs).

    mkcpio.py OUT.img STAGING_DIR [--node PATH:c|b:MAJOR:MINOR:MODE]...

Every file, directory and symlink under STAGING_DIR goes in, in sorted
order, owned by 0:0 with mtime 0 (the archive depends only on its
contents).  --node adds a device node without mknod on the host (the
kernel needs /dev/console before /init runs).
"""
import gzip, os, stat, sys


def header(ino, mode, nlink, size, rdevmaj, rdevmin, name):
    namez = name.encode() + b"\0"
    fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, rdevmaj, rdevmin, len(namez), 0]
    h = b"070701" + b"".join(b"%08X" % f for f in fields) + namez
    return h + b"\0" * (-len(h) % 4)


def main():
    out, root, nodes = sys.argv[1], sys.argv[2], []
    args = sys.argv[3:]
    while args:
        if args[0] != "--node" or len(args) < 2:
            sys.exit("usage: mkcpio.py OUT STAGING [--node PATH:c|b:MAJ:MIN:MODE]...")
        path, kind, maj, mnr, mode = args[1].split(":")
        nodes.append((path, kind, int(maj), int(mnr), int(mode, 8)))
        args = args[2:]
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in sorted(dirnames + filenames):
            full = os.path.join(dirpath, n)
            entries.append((os.path.relpath(full, root), full))
    entries.sort()
    ino = 1
    with gzip.GzipFile(out, "wb", compresslevel=9, mtime=0) as z:
        for rel, full in entries:
            st = os.lstat(full)
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                data = os.readlink(full).encode()
            elif stat.S_ISREG(mode):
                with open(full, "rb") as f:
                    data = f.read()
            elif stat.S_ISDIR(mode):
                data = b""
            else:
                sys.exit(f"mkcpio: {full}: not a file, directory or symlink")
            z.write(header(ino, mode, 2 if stat.S_ISDIR(mode) else 1, len(data), 0, 0, rel))
            z.write(data + b"\0" * (-len(data) % 4))
            ino += 1
        for path, kind, maj, mnr, mode in nodes:
            t = stat.S_IFCHR if kind == "c" else stat.S_IFBLK
            z.write(header(ino, t | mode, 1, 0, maj, mnr, path))
            ino += 1
        z.write(header(0, 0, 1, 0, 0, 0, "TRAILER!!!"))


if __name__ == "__main__":
    main()
