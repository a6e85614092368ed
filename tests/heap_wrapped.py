#!/usr/bin/env python3
"""tests/heap_wrapped.py — every path into musl's heap in a guest image goes
through the heap lock (src/plat/kvm/musl/heap_lock.c).

  tests/heap_wrapped.py IMAGE.elf...

Reads `objdump -d` of each image and builds its direct-call graph (call and
jump instructions whose target is another function).  The allocator's entry
points are musl's malloc, calloc, realloc, free, aligned_alloc,
malloc_usable_size, __libc_malloc, __libc_malloc_impl, __libc_calloc,
__libc_free, __libc_realloc, __malloc_alloc_meta, __malloc_donate and
__malloc_allzerop.  A function may call one only if it is one of them, a
__wrap_ function (the lock), heap_stress.c's unlocked_* (its test mode that
goes past the lock on purpose), or a function called only from such
functions (musl's own static helpers, e.g. alloc_slot).  Any other caller is
a path around the lock: listed, exit 1.

Prints, per image, "ok IMAGE: N callers of the wrappers (...)" naming the
C library's own callers that reach the heap through the lock (strdup,
__fdopen, getdelim, ...), or "FAIL IMAGE: ...".  An image without the
wrappers but with the allocator fails too; one with neither (no musl) is
said so and fails: this check is for images that link musl.
"""
import re
import subprocess
import sys

ENTRIES = {
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "malloc_usable_size",
    "__libc_malloc", "__libc_malloc_impl", "__libc_calloc", "__libc_free",
    "__libc_realloc", "__malloc_alloc_meta", "__malloc_donate", "__malloc_allzerop",
}
FUNC = re.compile(r"^[0-9a-f]+ <(.+)>:$")
# call/jmp/jcc to a symbol; "<name+0x..>" targets inside a function count
# as that function.
BRANCH = re.compile(r"\s(call\w*|j[a-z]+)\s+[0-9a-f]+ <([^>+]+)(?:\+0x[0-9a-f]+)?>")


def graph(path):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", path], check=True,
                         capture_output=True, text=True).stdout
    callers, funcs, cur = {}, set(), None
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            funcs.add(cur)
            continue
        m = BRANCH.search(line)
        if m and cur and m.group(2) != cur:
            callers.setdefault(m.group(2), set()).add(cur)
    return funcs, callers


def check(path):
    funcs, callers = graph(path)
    wraps = {f for f in funcs if f.startswith("__wrap_")}
    entries = ENTRIES & funcs
    if not wraps:
        return False, "no __wrap_ function: not linked with the heap lock" + (
            f" (yet musl's allocator is here: {sorted(entries)})" if entries else " (no musl)")
    allowed = set(entries) | wraps | {f for f in funcs if f.startswith("unlocked_")}
    # Functions called only from allowed ones are the allocator's own.
    grew = True
    while grew:
        grew = False
        for f, cs in callers.items():
            if f not in allowed and cs and cs <= allowed:
                allowed.add(f)
                grew = True
    bad = sorted(f"{c} -> {e}" for e in entries for c in callers.get(e, ()) if c not in allowed)
    if bad:
        return False, "calls into musl's heap past the lock: " + ", ".join(bad)
    through = set()
    for w in wraps:
        through |= callers.get(w, set())
    through -= allowed
    return True, (f"{len(through)} callers of the wrappers ({', '.join(sorted(through))}); "
                  f"entries linked: {', '.join(sorted(entries))}")


def main():
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(sys.argv) > 1 else 2
    rc = 0
    for path in sys.argv[1:]:
        ok, what = check(path)
        print(f"{'ok' if ok else 'FAIL'} {path}: {what}")
        rc |= not ok
    return rc


if __name__ == "__main__":
    sys.exit(main())
