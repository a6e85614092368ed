#!/usr/bin/env python3
"""check_layers.py — every #include "..." in src/ must point down a layer.

Each folder of src/ is one layer; tools/layers.txt says which folder may
include which (its header explains the format).  This reads every quoted
#include in src/**/*.{c,h,S}, resolves it the way the compiler does (beside
the including file first, then -Isrc), and refuses any include from one
folder into another that the table does not allow, naming file:line, the
include and the rule it breaks.  It also refuses a quoted include that
resolves to no file, a folder the table does not name, and a table whose
allowed directions form a cycle (then some include could point up).

With --core, the freestanding core's folders (the Makefile's CORE_DIRS) may
include from outside the core only the headers the table's "core
interfaces:" line names (plat/plat.h, dev/dev.h: interfaces that every
platform implements), whatever else the table allows: a core file that
reached into a hosted folder would still compile with no OS headers
(elog.h has none) and then fail to link in the unikernel.  Unit tests are
hosted programs and exempt.

Exit status: 0 all allowed, 1 a violation, 2 a usage or table error.
Run by `make check-layers` (mk/layers.mk).
"""

import argparse
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCE_EXT = (".c", ".h", ".S")


class TableError(Exception):
    pass


def read_table(path):
    """{folder: set(allowed)}, {folder: set(allowed for tests)}, {(folder, tests?): line},
    set(core interface headers)."""
    allow, tests, where, ifaces = {}, {}, {}, set()
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].strip()
            if not line:
                continue
            if ":" not in line:
                raise TableError(f"{path}:{no}: expected 'FOLDER: OTHER ...', got {raw.strip()!r}")
            head, rest = line.split(":", 1)
            words = head.split()
            targets = rest.split()
            if words == ["core", "interfaces"]:
                ifaces |= set(targets)
                continue
            if len(words) == 1:
                table = allow
            elif len(words) == 2 and words[1] == "tests":
                table = tests
            else:
                raise TableError(f"{path}:{no}: expected 'FOLDER', 'FOLDER tests' or "
                                 "'core interfaces' before ':'")
            folder = words[0]
            if folder in table:
                raise TableError(f"{path}:{no}: {head.strip()} has a line already "
                                 f"({path}:{where[(folder, table is tests)]})")
            table[folder] = set(targets)
            where[(folder, table is tests)] = no
    for folder in tests:
        if folder not in allow:
            raise TableError(f"{path}:{where[(folder, True)]}: '{folder} tests' but no line for {folder}")
    for folder, targets in allow.items():
        for t in targets:
            if t not in allow and not t.startswith("../"):
                raise TableError(f"{path}:{where[(folder, False)]}: {folder} may include {t}, "
                                 f"which has no line of its own")
    cycle = find_cycle(allow)
    if cycle:
        raise TableError(f"{path}: the allowed directions form a cycle ({' -> '.join(cycle)}): "
                         "some include could then point up a layer")
    for h in sorted(ifaces):
        folder = h.rsplit("/", 1)[0] if "/" in h else ""
        if folder not in allow:
            raise TableError(f"{path}: core interface {h} is not in a folder of the table")
    return allow, tests, where, ifaces


def find_cycle(allow):
    """A list of folders that closes a cycle, or None (depth-first search)."""
    state = {}  # folder -> 1 on the path, 2 done

    def visit(node, path):
        state[node] = 1
        path.append(node)
        for nxt in sorted(allow.get(node, ())):
            if nxt == node:
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt, path)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(allow):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def sources(src):
    for top, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(top, name)


def folder_of(path, src):
    """The table's name for the folder holding path: relative to src."""
    rel = os.path.relpath(os.path.dirname(os.path.abspath(path)), os.path.abspath(src))
    return rel.replace(os.sep, "/")


def resolve(inc, including, src):
    """The file a quoted include names, as the compiler finds it, or None."""
    for base in (os.path.dirname(including), src):
        cand = os.path.normpath(os.path.join(base, inc))
        if os.path.isfile(cand):
            return cand
    return None


def main(argv):
    ap = argparse.ArgumentParser(
        prog="check_layers.py",
        description="Check that every quoted #include in SRC points down a layer: "
        "from one folder into another only where the table allows it.",
        epilog="The table's format is in its header (tools/layers.txt).  "
        "Exit status: 0 all allowed, 1 a violation, 2 a usage or table error.")
    ap.add_argument("src", nargs="?", default="src", help="the source tree (default: src)")
    ap.add_argument("--table", default=None,
                    help="the table of allowed directions (default: layers.txt beside this script)")
    ap.add_argument("--core", default="",
                    help="the freestanding core's folders, space-separated (src/ prefix "
                    "optional): from outside them they may include only the table's "
                    "'core interfaces'")
    ap.add_argument("-q", "--quiet", action="store_true", help="print nothing when all is allowed")
    args = ap.parse_args(argv)

    table_path = args.table or os.path.relpath(
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "layers.txt"))
    if not os.path.isdir(args.src):
        print(f"check_layers: {args.src}: not a directory", file=sys.stderr)
        return 2
    try:
        allow, tests, where, ifaces = read_table(table_path)
    except (OSError, TableError) as e:
        print(f"check_layers: {e}", file=sys.stderr)
        return 2

    core = {c[len("src/"):] if c.startswith("src/") else c for c in args.core.split()}
    for c in sorted(core):
        if c not in allow:
            print(f"check_layers: --core names {c}, which has no line in {table_path}",
                  file=sys.stderr)
            return 2
    errors = []
    files = includes = crossing = 0
    unknown = {}
    for path in sources(args.src):
        files += 1
        here = folder_of(path, args.src)
        if here not in allow:
            unknown.setdefault(here, path)
            continue
        is_test = path.endswith(("_test.c", "_test.h"))  # a header only tests include
        with open(path, encoding="utf-8", errors="replace") as f:
            for no, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                includes += 1
                inc = m.group(1)
                target = resolve(inc, path, args.src)
                if target is None:
                    errors.append(f"{path}:{no}: #include \"{inc}\": no such file "
                                  f"(beside {path} or under {args.src}/)")
                    continue
                there = folder_of(target, args.src)
                if there == here:
                    continue
                crossing += 1
                ok = allow[here] | (tests.get(here, set()) if is_test else set())
                rel = os.path.relpath(target, args.src).replace(os.sep, "/")
                if there in ok and not (here in core and not is_test and there not in core
                                        and rel not in ifaces):
                    continue
                if there in ok:
                    errors.append(f"{path}:{no}: #include \"{inc}\": {here} is in the freestanding "
                                  f"core (Makefile CORE_DIRS), {rel} is not; the core may include "
                                  f"from outside it only: {' '.join(sorted(ifaces)) or 'nothing'} "
                                  f"(core interfaces, {table_path})")
                    continue
                may = " ".join(sorted(allow[here])) or "(nothing else)"
                rule = f"{table_path}:{where[(here, False)]}"
                extra = ""
                if is_test and here in tests:
                    extra = f"; its tests also: {' '.join(sorted(tests[here]))}"
                errors.append(f"{path}:{no}: #include \"{inc}\": {here} may not include {there} "
                              f"({here} may include: {may}{extra}; {rule})")
    for folder, path in sorted(unknown.items()):
        errors.append(f"{path}: folder {folder} has no line in {table_path}: "
                      "say which folders it may include")
    for e in errors:
        print(e, file=sys.stderr)
    if errors:
        print(f"check_layers: {len(errors)} violation(s) in {files} files", file=sys.stderr)
        return 1
    if not args.quiet:
        print(f"layers: {files} files, {includes} includes ({crossing} across folders), "
              f"all allowed by {table_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
