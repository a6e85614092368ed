#!/usr/bin/env python3
"""doc_examples.py — build and run every C example in the docs and in the
public headers, the way a reader would (`make check`'s doc-examples step).

usage: tools/doc_examples.py [--build DIR] [--list] [FILE...]

FILE: pages (*.md) and headers (*.h) to read; default docs/*.md and every
header under src/.  --list prints the programs and requests found and stops.

How an example is marked (docs/app.md's last section says the same):

  In a page (*.md), by the fence's info string:
    ```c              a whole program, built alone;
    ```c NAME.c       a piece of NAME.c: the pieces of one NAME.c in one page,
                      in page order, are one program;
    ```c fragment     shown only, never built: say beside it why.
  In a header, in a comment: a line "---- Example: NAME.c ----", then the
  program as lines indented three or more spaces after the " *" (blank " *"
  lines may sit between them); lines there that start with "$ " are
  commands (as in a page, below), not code; the first prose line ends it.

What is run, in page order, once every program of the page has been built:
  - "$SKIFF/build/app/NAME ARGS" lines (any path ending in build/app/NAME;
    a backslash continues a line, a "$ " prompt and a trailing "&" are
    dropped) start NAME.c's program with ARGS, the instance before it
    stopped; other commands ("make ...") are the reader's, not run;
  - "openssl ..." lines run in a scratch folder of the page (so the files
    they write, cert.pem, key.pem, are there for the ARGS and curl lines);
  - "curl ... http://127.0.0.1:8080/..." (or localhost, or https://...:8443)
    lines are sent to the running instance, in order, with curl from that
    folder.  A comment after the line says what it must answer:
        # NNN: words    status NNN (the words after the colon are for the
                        reader);
        # TEXT          a 2xx status and TEXT as the whole body (trimmed);
        (none)          a 2xx status.
    A curl line with no instance running starts the page's last program
    with no ARGS.  Other curl lines (another host: a namespace, a VM) are
    counted and listed as not run here.
  - a program that no line starts gets one GET / that must not be 5xx.
Every instance runs on the kernel's sockets (--stack linux, its default),
bound to 127.0.0.1 (--ip 127.0.0.1 is added), on free ports the script picks
for the page's 8080 and 8443, and must stop on SIGTERM within 5 s.

Building: `make app APP=BUILD/check/doc/doc-PAGE-NAME.c`, which docs/app.md
tells a user to run: the hosted program (build/app/doc-PAGE-NAME) and the
unikernel image (build/app/doc-PAGE-NAME-uk.elf), compiled with skiff's own
flags (-Wall -Wextra -Werror; -ffreestanding for the guest).  The image is
built and linked here, not booted: booting takes QEMU and a minute of TCG,
so the guest form of an application is `make test`'s (its app phase boots
the examples/ programs, built from the same rule).

Exit status: 0 if every program built, started, answered as written and
stopped; 1 otherwise (each failure says which page, which line, and why);
2 on bad usage.
"""

import glob
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from skt import free_port  # noqa: E402 (tests/skt.py: one copy for tests/ and tools/)
DOC_PORT, DOC_TLS_PORT = 8080, 8443
CURL_LOCAL = re.compile(r"(https?)://(127\.0\.0\.1|localhost):(%d|%d)(?=[/\s]|$)" % (DOC_PORT, DOC_TLS_PORT))
RUN_LINE = re.compile(r"^([$\w./{}~-]*/)?build/app/[\w.-]+(\s|$)")
HDR_MARK = re.compile(r"^\s*\*\s*-{2,}\s*Example:\s*(\S+\.c)\s*-{2,}\s*$")


class Program:
    def __init__(self, page, name, line):
        self.page, self.name, self.line = page, name, line
        self.text = []
        self.stem = os.path.splitext(name)[0]
        slug = re.sub(r"[^A-Za-z0-9]+", "_", os.path.basename(page).rsplit(".", 1)[0] if page.endswith(".md")
                      else os.path.basename(page).replace(".", "_"))
        self.out = "doc-%s-%s" % (slug, self.stem)


def logical_lines(lines):
    """(line number, text) with backslash continuations joined."""
    out, buf, start = [], "", 0
    for i, l in enumerate(lines, 1):
        if not buf:
            start = i
        if l.rstrip().endswith("\\"):
            buf += l.rstrip()[:-1] + " "
            continue
        out.append((start, buf + l))
        buf = ""
    if buf:
        out.append((start, buf))
    return out


def parse_md(path, lines):
    """Programs and the page's command lines (outside ```c fences)."""
    progs, order, cmds, fragments = {}, [], [], 0
    fence, cur, cmd_lines = None, None, []
    for i, l in enumerate(lines, 1):
        m = re.match(r"^\s*(```+|~~~+)\s*(.*)$", l)
        if fence is None and m:
            info = m.group(2).split()
            fence = m.group(1)
            if info and info[0] == "c":
                arg = info[1] if len(info) > 1 else None
                if arg == "fragment":
                    cur = "skip"
                    fragments += 1
                else:
                    name = arg or "example%d.c" % (len(order) + 1)
                    if not name.endswith(".c"):
                        raise SystemExit("%s:%d: ```c %s: the word after c is NAME.c or fragment" % (path, i, name))
                    if name not in progs:
                        progs[name] = Program(path, name, i)
                        order.append(name)
                    elif arg is None:
                        raise SystemExit("%s:%d: two whole programs named %s" % (path, i, name))
                    cur = progs[name]
                    # The compiler's messages name the page's own lines.
                    cur.text.append('#line %d "%s"' % (i + 1, path))
            else:
                cur = None
            continue
        if fence is not None and l.strip().startswith(fence[:3]) and l.strip().strip(fence[0]) == "":
            fence, cur = None, None
            continue
        if isinstance(cur, Program):
            cur.text.append(l)
        elif cur is None:
            cmd_lines.append((i, l))
    # Command lines: from the text outside C fences, continuations joined.
    nums = [n for n, _ in cmd_lines]
    for start, text in logical_lines([t for _, t in cmd_lines]):
        text = text.strip()
        cmds.append((nums[start - 1], text[2:].strip() if text.startswith("$ ") else text))
    return [progs[n] for n in order], cmds, fragments


def parse_h(path, lines):
    progs, cmds = [], []
    cur = None
    for i, l in enumerate(lines, 1):
        m = HDR_MARK.match(l)
        if m:
            cur = Program(path, m.group(1), i)
            progs.append(cur)
            continue
        if cur is None:
            continue
        code = re.match(r"^\s*\*( {3,}.*)?$", l)
        if not code or "*/" in l:
            cur = None
            continue
        text = (code.group(1) or "")[3:] if code.group(1) else ""
        stripped = text.strip()
        if stripped.startswith("$ "):
            cmds.append((i, stripped[2:].strip()))
        else:
            cur.text.append(text)
    return progs, cmds, 0


class Runner:
    def __init__(self, build, page, workdir):
        self.build, self.page, self.workdir = build, page, workdir
        self.ports = {DOC_PORT: free_port(), DOC_TLS_PORT: free_port()}
        self.proc = None
        self.log = None
        self.failures = []

    def fail(self, line, msg):
        self.failures.append("%s:%d: %s" % (self.page, line, msg))
        print("doc-examples: FAIL %s:%d: %s" % (self.page, line, msg))

    def rewrite(self, text):
        return CURL_LOCAL.sub(lambda m: "%s://%s:%d" % (m.group(1), m.group(2), self.ports[int(m.group(3))]), text)

    def start(self, prog, args, line):
        self.stop(line)
        binary = os.path.join(self.build, "app", prog.out)
        args = [self.rewrite(a) for a in args]
        args = [str(self.ports[int(a)]) if i and args[i - 1] in ("--port", "--tls-port") and a.isdigit()
                and int(a) in self.ports else a for i, a in enumerate(args)]
        if "--port" not in args:
            args += ["--port", str(self.ports[DOC_PORT])]
        argv = [binary] + args + ["--ip", "127.0.0.1"]
        self.log = os.path.join(self.workdir, "%s.log" % prog.out)
        self.prog = prog
        with open(self.log, "w") as lf:
            self.proc = subprocess.Popen(argv, cwd=self.workdir, stdout=lf, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            ready = re.search(r"^\S+: listening.*$", open(self.log).read(), re.M)
            if ready:
                print("doc-examples: %s:%d: started %s: %s" % (self.page, line, " ".join(
                    [os.path.relpath(argv[0], ROOT)] + argv[1:]), ready.group(0)))
                return True
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.fail(line, "%s did not start (no 'NAME: listening' line): %s" % (prog.out, self.tail()))
        self.kill()
        return False

    def tail(self):
        try:
            return " | ".join(open(self.log).read().strip().splitlines()[-3:])
        except OSError:
            return "(no log)"

    def kill(self):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None

    def stop(self, line):
        if not self.proc:
            return
        if self.proc.poll() is not None:
            self.fail(line, "%s exited early (status %d): %s" % (self.prog.out, self.proc.returncode, self.tail()))
            self.proc = None
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=5)
            if rc != 0:
                self.fail(line, "%s exited %d on SIGTERM: %s" % (self.prog.out, rc, self.tail()))
        except subprocess.TimeoutExpired:
            self.fail(line, "%s still running 5 s after SIGTERM" % self.prog.out)
            self.kill()
        self.proc = None

    def curl(self, line, text):
        m = re.match(r"^(.*?)\s+#\s*(.*)$", text)
        cmd, want = (m.group(1), m.group(2).strip()) if m else (text, None)
        argv = shlex.split(self.rewrite(cmd))
        body = os.path.join(self.workdir, "body")
        full = ["curl", "-sS", "--max-time", "10", "-o", body, "-w", "%{http_code}"] + argv[1:]
        r = subprocess.run(full, cwd=self.workdir, capture_output=True, text=True)
        got_body = open(body, "rb").read().decode("utf-8", "replace") if os.path.exists(body) else ""
        if os.path.exists(body):
            os.unlink(body)
        status = r.stdout.strip()
        shown = "%s -> %s %r" % (cmd, status, got_body[:60])
        if r.returncode != 0:
            return self.fail(line, "%s: curl failed (exit %d): %s" % (cmd, r.returncode, r.stderr.strip()))
        sm = re.match(r"^(\d{3}):", want or "")
        if sm:
            ok = status == sm.group(1)
            what = "status %s" % sm.group(1)
        elif want:
            ok = status.startswith("2") and got_body.strip() == want
            what = "2xx and the body %r" % want
        else:
            ok = status.startswith("2")
            what = "2xx"
        if ok:
            print("doc-examples: %s:%d: %s" % (self.page, line, shown))
        else:
            self.fail(line, "%s: wanted %s" % (shown, what))


def build(prog, src_dir, make):
    src = os.path.join(src_dir, prog.out + ".c")
    with open(src, "w") as f:
        f.write("/* %s, from %s:%d (tools/doc_examples.py) */\n" % (prog.name, prog.page, prog.line))
        f.write("#line %d \"%s\"\n" % (prog.line + 1, prog.page) if prog.page.endswith(".h") else "")
        f.write("\n".join(prog.text) + "\n")
    env = dict(os.environ)
    # Not inside the caller's jobserver (its descriptors are not passed).
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):
        env.pop(k, None)
    r = subprocess.run(make + ["--no-print-directory", "-C", ROOT, "app", "APP=" + os.path.relpath(src, ROOT)],
                       capture_output=True, text=True, env=env)
    if r.returncode != 0:
        print("doc-examples: FAIL %s:%d: %s does not build (make app APP=%s):" % (
            prog.page, prog.line, prog.name, os.path.relpath(src, ROOT)))
        for l in (r.stdout + r.stderr).strip().splitlines()[-25:]:
            print("    " + l)
        return False
    print("doc-examples: %s:%d: %s built: build/app/%s and %s-uk.elf" % (
        prog.page, prog.line, prog.name, prog.out, prog.out))
    return True


def main():
    args = sys.argv[1:]
    if "-h" in args or "--help" in args:
        print(__doc__.strip())
        return 0
    build_dir, listing, files = os.path.join(ROOT, "build"), False, []
    while args:
        a = args.pop(0)
        if a == "--build" and args:
            build_dir = os.path.abspath(args.pop(0))
        elif a == "--list":
            listing = True
        elif a.startswith("-"):
            print("doc_examples: unknown option %s (--help)" % a, file=sys.stderr)
            return 2
        else:
            files.append(a)
    os.chdir(ROOT)
    if not files:
        files = sorted(glob.glob("docs/*.md")) + sorted(glob.glob("src/**/*.h", recursive=True))
    make = shlex.split(os.environ.get("MAKE") or "make")
    src_dir = os.path.join(build_dir, "check", "doc")
    os.makedirs(src_dir, exist_ok=True)

    failures, nprogs, nreq, notrun, nfrag = [], 0, 0, [], 0
    for page in files:
        with open(page, encoding="utf-8") as f:
            lines = f.read().split("\n")
        progs, cmds, frags = (parse_md if page.endswith(".md") else parse_h)(page, lines)
        nfrag += frags
        if not progs:
            continue
        nprogs += len(progs)
        by_stem = {p.stem: p for p in progs}
        if listing:
            for p in progs:
                print("%s:%d: %s, %d lines" % (page, p.line, p.name, len(p.text)))
            for n, c in cmds:
                if c.startswith(("curl ", "openssl ")) or RUN_LINE.match(c):
                    print("%s:%d:   %s" % (page, n, c))
            continue
        built = [build(p, src_dir, make) for p in progs]
        if not all(built):
            failures.append("%s: %d of %d programs do not build" % (page, built.count(False), len(built)))
            continue
        with tempfile.TemporaryDirectory(prefix="skiff-doc-") as work:
            run = Runner(build_dir, page, work)
            started = set()
            try:
                for n, c in cmds:
                    if c.startswith("openssl "):
                        r = subprocess.run(c, shell=True, cwd=work, capture_output=True, text=True)
                        if r.returncode != 0:
                            run.fail(n, "%s: exit %d: %s" % (c, r.returncode, r.stderr.strip()[-200:]))
                    elif RUN_LINE.match(c):
                        argv = shlex.split(c)
                        if argv[-1] == "&":
                            argv.pop()
                        stem = os.path.basename(argv[0])
                        if stem.endswith("-uk.elf") or stem not in by_stem:
                            continue
                        started.add(stem)
                        run.start(by_stem[stem], argv[1:], n)
                    elif c.startswith("curl "):
                        if not CURL_LOCAL.search(c):
                            notrun.append("%s:%d: %s" % (page, n, c))
                            continue
                        nreq += 1
                        if not run.proc:
                            started.add(progs[-1].stem)
                            if not run.start(progs[-1], [], n):
                                continue
                        run.curl(n, c)
                run.stop(len(lines))
                for p in progs:
                    if p.stem in started:
                        continue
                    nreq += 1
                    if run.start(p, [], p.line):
                        run.curl(p.line, "curl http://127.0.0.1:%d/" % DOC_PORT)
                        run.stop(p.line)
            finally:
                run.kill()
            failures += run.failures
    if listing:
        return 0
    for l in notrun:
        print("doc-examples: not run here (another host: a namespace or a VM, make test's): " + l)
    print("doc-examples: %d programs, %d requests, %d failures; %d curl lines for other hosts not run; "
          "%d fragments (```c fragment) not built" % (nprogs, nreq, len(failures), len(notrun), nfrag))
    if nprogs == 0:
        print("doc-examples: FAIL: no example found (a marker convention changed?)")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
