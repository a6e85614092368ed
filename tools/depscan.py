#!/usr/bin/env python3
"""depscan.py: find what skiff's scripts, makefiles and sources need from the
system, and check it against tools/deps.sh's list, so that list cannot drift.

  tools/depscan.py            check; exit 1 naming every gap
  tools/depscan.py --show     print every need found and where
  tools/depscan.py --without PKG   check as if PKG were not on the list (it
                              must fail: a package nothing needs is dead weight)
  tools/depscan.py --without-each  the same for every package on the list, from
                              one scan of the tree: a line "PACKAGE RC FIRST" each,
                              RC and FIRST being --without PACKAGE's exit status
                              and first line naming a need; exit 1 if some
                              package is needed by nothing (tests/deps_test.sh)

It reads the list from `tools/deps.sh --list` (lines "PACKAGE KIND:NAME ...").
Needs are found by reading the files, not by running them:
  cmd   the command words of shell scripts (tests/, tools/, bench/), of make
        recipes (Makefile, mk/*.mk), and the executables that python scripts
        and C programs start (subprocess argv lists, execvp of a literal);
  py    modules that python scripts import (everything but the project's own);
  inc   <headers> that C sources include;
  lib   libraries linked with -lNAME in Makefile and mk/*.mk;
  san   sanitizer runtimes asked for with -fsanitize= (gcc has address and
        undefined; clang's fuzzer runtime is a package of its own);
  path  files and folders under /usr/include or /usr/lib that Makefile and
        mk/*.mk name by their absolute path (musl's libc.a and headers).
A need is met when the list declares it, or when it belongs to Debian's
Essential set (bash, coreutils, grep, sed, ...) or to the C library and
compiler that build-essential brings.  Anything else is a gap: on a fresh
machine it would be missing.  A gap names the file and line that needs it
and, when this machine has it installed, the package it comes from.
"""
import functools
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Debian 12's Priority: required packages (dpkg-query -W -f='${Package} ${Priority}\n'),
# the Essential set among them: on every Debian system, even a minimal one.
ESSENTIAL_PKGS = {
    "apt", "base-files", "base-passwd", "bash", "bsdutils", "coreutils", "dash", "debconf",
    "debianutils", "diffutils", "dpkg", "e2fsprogs", "findutils", "grep", "gzip", "hostname",
    "init-system-helpers", "libc-bin", "login", "mawk", "mount", "ncurses-bin", "passwd",
    "perl-base", "sed", "sensible-utils", "sysvinit-utils", "tar", "util-linux",
}
# Packages that build-essential pulls in (the C library, kernel headers, the
# compiler's own headers); their headers count as part of the toolchain.
TOOLCHAIN_PKGS = {"libc6-dev", "linux-libc-dev", "libgcc-12-dev", "gcc-12", "libclang-common-14-dev"}

LIBC_LIBS = {"c", "m", "pthread", "dl", "rt", "gcc", "util"}
SHELL_WORDS = set("""
if then else elif fi for while until do done case esac in function select time coproc
{ } ! [[ ]] [ test echo printf read local declare typeset export readonly unset shift
return exit break continue set trap eval exec source . cd pwd pushd popd wait kill
true false : alias type command builtin let getopts hash ulimit umask jobs disown
fg bg shopt mapfile readarray caller enable compgen complete suspend times
""".split())
# Words that take a command after them (and the options they take first).
WRAPPERS = {"timeout", "env", "taskset", "nice", "nohup", "setsid", "stdbuf", "chrt",
            "flock", "xargs", "exec", "command", "builtin", "time", "sudo", "unshare",
            "chroot", "ionice", "strace", "perf", "valgrind", "then", "do", "else", "!"}


def run(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout
    except OSError:
        return ""


def declared():
    """{(kind, name): package} from tools/deps.sh --list."""
    out = run(["bash", os.path.join(TOP, "tools/deps.sh"), "--list"])
    d = {}
    for line in out.splitlines():
        f = line.split()
        if not f:
            continue
        for item in f[1:]:
            kind, _, name = item.partition(":")
            d[(kind, name)] = f[0]
    return d


def files(patterns):
    out = []
    for root, dirs, names in os.walk(TOP):
        rel = os.path.relpath(root, TOP)
        dirs[:] = [x for x in dirs if not x.startswith(".") and x != "build" and
                   not (rel == "bench" and x == "results")]
        for n in names:
            p = os.path.relpath(os.path.join(root, n), TOP)
            if any(re.fullmatch(pat, p) for pat in patterns):
                out.append(p)
    return sorted(out)


def open_quote(line, q):
    """The quote still open at the end of line, given the one open at its start."""
    i = 0
    while i < len(line):
        c = line[i]
        if q == "'":
            if c == "'":
                q = None
        elif c == "\\":
            i += 1
        elif q == '"':
            if c == '"':
                q = None
        elif c in "'\"":
            q = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        i += 1
    return q


def join_continued(text):
    """Lines joined while they end in a backslash or inside a quote (awk
    programs span lines); line numbers are those of the first."""
    out, buf, first, q = [], "", None, None
    for no, line in enumerate(text.splitlines(), 1):
        if first is None:
            first = no
        q = open_quote(line, q)
        if q:
            buf += line + " "
            continue
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        out.append((first, buf + line))
        buf, first = "", None
    if buf:
        out.append((first, buf))
    return out


def segments(line):
    """Split one shell line into the pieces that start with a command:
    at | || && ; & ( ` $( and newline, outside single quotes; the insides of
    $(...) and `...` within double quotes count too.  A '#' that starts a
    word ends the line.  Single-quoted text is dropped (it is data: awk
    programs, messages), except what follows `sh -c` / `bash -c`."""
    segs, cur, i, n = [], [], 0, len(line)
    dq = False
    while i < n:
        c = line[i]
        if c == "\\" and i + 1 < n:
            cur.append(line[i:i + 2]); i += 2; continue
        if not dq and c == "'":
            j = line.find("'", i + 1)
            j = n if j < 0 else j
            inner = line[i + 1:j]
            prev = "".join(cur).split()
            if prev[-2:] in (["sh", "-c"], ["bash", "-c"]):
                segs.extend(segments(inner))
            cur.append(" 'Q' ")
            i = j + 1; continue
        if c == '"':
            dq = not dq; cur.append(" "); i += 1; continue
        if dq:
            if line.startswith("$((", i):
                j = line.find("))", i)
                i = n if j < 0 else j + 2; continue
            if line.startswith("$(", i) or c == "`":
                segs.append("".join(cur)); cur = []; i += 2 if c == "$" else 1; continue
            if c == ")":
                segs.append("".join(cur)); cur = []; i += 1; continue
            cur.append("_" if c != " " else " "); i += 1; continue  # quoted data is not a command
        if c == "#" and (i == 0 or line[i - 1] in " \t;(|&"):
            break
        if line.startswith("${", i):  # a parameter expansion: a value
            j = line.find("}", i)
            cur.append(" VALUE ")
            i = n if j < 0 else j + 1; continue
        # $(( arithmetic )), (( arithmetic )) and NAME=( array ): values, not commands
        if line.startswith("$((", i) or line.startswith("((", i) or (c == "(" and i and line[i - 1] == "="):
            depth, j = 0, i
            while j < n:
                if line[j] == "(":
                    depth += 1
                elif line[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            cur.append(" VALUE ")
            i = j + 1; continue
        if line.startswith("$(", i) or line.startswith("<(", i) or line.startswith(">(", i):
            segs.append("".join(cur)); cur = []; i += 2; continue
        if c in "|;&(`){}":
            segs.append("".join(cur)); cur = []; i += 1; continue
        cur.append(c); i += 1
    segs.append("".join(cur))
    return segs


WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.+-]*$")
MAKE_FUNCS = set("""subst patsubst strip findstring filter filter-out sort word words wordlist firstword
lastword dir notdir suffix basename addsuffix addprefix join wildcard realpath abspath if or and
foreach file call value eval origin flavor error warning info shell""".split())
OPT_ARG = {"timeout": {"-s", "-k", "--signal", "--kill-after"}, "taskset": set(), "nice": {"-n"},
           "env": {"-u"}, "chrt": set(), "ionice": {"-c", "-n"}, "stdbuf": set(), "xargs": {"-n", "-I", "-P"}}


def shell_commands(text, funcs, make=False, wrappers=(), known=lambda w: False, checkers=()):
    """Yield (line number, command word) for the commands a shell text runs."""
    heredoc = None
    for no, raw in join_continued(text):
        if heredoc:
            if raw.strip() == heredoc:
                heredoc = None
            continue
        if make:
            if not raw.startswith("\t"):
                continue
            raw = raw.lstrip("\t@-+")
            raw = raw.replace("$$", "\0")
            while True:  # make's $(...) and ${...}: values, never commands here
                r2 = re.sub(r"\$[({][^(){}]*[)}]", "MAKEVAR", raw)
                if r2 == raw:
                    break
                raw = r2
            raw = raw.replace("\0", "$")
        raw = re.sub(r"^\s*[\w|*.\-\[\] ]+\)", " ", raw)  # a case arm's pattern
        raw = re.sub(r"\bcase\s+\S+\s+in\s+[^)]*\)", " ; ", raw)
        m = re.search(r"(?<!<)<<-?\s*['\"]?([A-Za-z_]\w*)['\"]?", raw)
        if m:
            heredoc = m.group(1)
        for seg in segments(raw):
            yield from command_words(no, seg.split(), funcs, make, wrappers, checkers, known)


def command_words(no, toks, funcs, make, wrappers, checkers, known):
    """The command words of one simple command (its tokens), through
    assignments, redirections, wrappers (timeout, ip netns exec, the
    scripts' own in_l and phase) and checks (command -v X, skt_need ... X)."""
    i = 0
    while True:
        # skip assignments, redirections and wrapper commands with their options
        while i < len(toks):
            t = toks[i]
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=", t) or re.match(r"^\d*[<>]", t):
                i += 1
            elif t == "ip" and toks[i + 1:i + 3] == ["netns", "exec"]:
                yield no, t
                i += 4  # ip netns exec NS CMD
            elif t in ("then", "do", "else", "elif", "if", "while", "until", "!", "time", "exec",
                       "builtin", "nohup", "setsid", "sudo") or (t == "command" and toks[i + 1:i + 2] != ["-v"]):
                i += 1
            elif t in OPT_ARG or t == "flock":
                yield no, t
                i += 1
                while i < len(toks) and toks[i].startswith("-"):
                    i += 2 if toks[i] in OPT_ARG.get(t, ()) else 1
                if t in ("timeout", "flock", "taskset", "chrt") and i < len(toks):
                    i += 1  # the duration / lock file / cpu list / priority
            else:
                break
        if i >= len(toks):
            return
        w = toks[i]
        if w == "command" and i + 2 < len(toks) and toks[i + 1] == "-v":
            w = toks[i + 2]  # command -v X: a check for X, so X is needed
        elif w in checkers:
            # skt_need CHECK TOOL...: every known tool named is needed
            for t in toks[i + 1:]:
                if WORD.match(t) and known(t):
                    yield no, t
            return
        elif w in wrappers:
            # in_l ping ... / phase NAME make ...: a function that runs
            # (some of) its arguments.  How many come first is not known,
            # so the command starts at the first argument that names a
            # declared or installed executable; a $variable or path ends
            # the search.  That command may be a wrapper itself (in_l
            # timeout 10 arping ...): go round again from there.
            for j in range(i + 1, len(toks)):
                if not WORD.match(toks[j]):
                    return
                if known(toks[j]):
                    i = j
                    break
            else:
                return
            continue
        if w in SHELL_WORDS or w in funcs or not WORD.match(w) or w in ("MAKEVAR", "VALUE") \
                or (make and w in MAKE_FUNCS):
            return
        yield no, w
        return


def py_needs(text):
    for no, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*(?:import|from)\s+([A-Za-z_][\w]*)", line)
        if m:
            yield no, "py", m.group(1)
        # The first element of an argv list: ["tcpdump", ...] / ('ip', ...)
        for m in re.finditer(r"\[\s*['\"]([a-z][\w.+-]*)['\"]\s*,", line):
            yield no, "argv", m.group(1)


def c_needs(text):
    for no, line in enumerate(text.splitlines(), 1):
        m = re.match(r"\s*#\s*include\s*<([^>]+)>", line)
        if m:
            yield no, "inc", m.group(1)
        m = re.search(r'"(qemu-system-[\w]+|ip|tcpdump|nginx)"', line)
        if m and "exec" in text:
            yield no, "argv", m.group(1)


_owners = {}


@functools.lru_cache(maxsize=None)
def alternatives(path):
    """path, its /usr-merged twin, and where its symlinks lead."""
    alts = [path]
    if os.path.realpath(path) != path:
        alts.append(os.path.realpath(path))
    for p in list(alts):
        for a, b in (("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"), ("/usr/lib/", "/lib/")):
            if p.startswith(a):
                alts.append(b + p[len(a):])
            elif p.startswith(b):
                alts.append(a + p[len(b):])
    return tuple(alts)


def prefetch_owners(paths):
    """One dpkg-query for every path at once (one call per path is slow)."""
    want = [a for p in paths if p for a in alternatives(p) if a not in _owners]
    if not want:
        return
    for a in want:
        _owners[a] = None
    for line in run(["dpkg-query", "-S"] + want).splitlines():
        if line.startswith("diversion "):
            continue
        pkg, _, q = line.partition(": ")
        for one in q.split(", "):
            one = one.strip()
            if one in _owners and _owners[one] is None:
                _owners[one] = pkg.split(":")[0].split(",")[0]


def owner(path):
    """The Debian package that holds path."""
    prefetch_owners([path])
    for a in alternatives(path):
        if _owners.get(a):
            return _owners[a]
    return None


@functools.lru_cache(maxsize=None)
def which(cmd):  # PATH does not change while we run: ask once per name
    for d in os.environ.get("PATH", "").split(":") + ["/usr/sbin", "/sbin"]:
        p = os.path.join(d, cmd)
        if os.path.isfile(p) and os.access(p, os.X_OK) and "/.pyenv/" not in p:
            return p
    return None


INC_DIRS = ["/usr/include", "/usr/include/x86_64-linux-gnu", "/usr/local/include"]


_gcc_inc = []


def header_path(h):
    if not _gcc_inc:
        _gcc_inc.append(os.path.dirname(run(["gcc", "-print-file-name=include/stddef.h"]).strip()))
    for d in INC_DIRS + _gcc_inc:
        p = os.path.join(d, h)
        if d and os.path.isfile(p):
            return os.path.realpath(p)
    return None


_stdlib = {}  # module name -> True when it comes from python3's standard library


def lib_path(name):
    """The file that -lNAME links against here, or None."""
    return next((q for q in (f"/usr/lib/x86_64-linux-gnu/lib{name}.so", f"/usr/lib/x86_64-linux-gnu/lib{name}.a",
                             f"/usr/lib/lib{name}.so") if os.path.exists(q)), None)


def stdlib_modules(names):
    """The names among `names` that Debian's python3 imports from its own
    standard library (/usr/lib/python3*); the ones not asked before are
    tried in one interpreter."""
    new = sorted(n for n in names if n not in _stdlib)
    if new:
        found = set()
        if os.path.exists("/usr/bin/python3"):
            prog = ("import importlib,sys\n"
                    "for n in sys.argv[1:]:\n"
                    "    try: m = importlib.import_module(n)\n"
                    "    except Exception: continue\n"
                    "    f = getattr(m, '__file__', None) or ''\n"
                    "    if not f or (f.startswith('/usr/lib/python3')\n"
                    "                 and '/dist-packages/' not in f): print(n)\n")
            found = set(run(["/usr/bin/python3", "-c", prog] + new).split())
        for n in new:
            _stdlib[n] = n in found
    return {n for n in names if _stdlib[n]}


def scan(decl):
    """Read the tree once: ({(kind, name): [where]}, the shell functions).

    decl is consulted in two places only, both as `("cmd", w) in decl or
    which(w)`: a wrapper's command is the first argument that is a known
    command, and an argv literal counts as a command when it is one.  So
    the result depends on decl only through the declared commands that
    `which` does not find here (decl_only_cmds); main() relies on that."""
    needs = {}  # (kind, name) -> [where]

    def need(kind, name, where):
        needs.setdefault((kind, name), []).append(where)

    # tools/deps.sh is the list itself (and needs only apt and dpkg).
    shells = [f for f in files([r"tests/.*\.sh", r"tools/.*\.sh", r"bench/.*\.sh", r"\.ci/run"])
              if f != "tools/deps.sh"]
    funcs = set()
    for f in shells:
        funcs |= set(re.findall(r"^\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)", open(os.path.join(TOP, f)).read(), re.M))
    # Functions that run their arguments as a command (in_l() { ip netns exec "$NS_L" "$@"; }).
    wrappers, checkers = set(), set()
    runs_args = re.compile(r"(^|[;{]|\bif\s+!?|&&|\|\|)\s*(ip netns exec \S+ |timeout \S+ |exec |env \S+ )?\"\$@\"")
    for f in shells:
        fn = None
        for line in open(os.path.join(TOP, f)):
            m = re.match(r"\s*(?:function\s+)?([A-Za-z_][\w-]*)\s*\(\)\s*\{?(.*)", line)
            if m:
                fn, line = m.group(1), m.group(2)
            if fn and runs_args.search(line):
                wrappers.add(fn)
            if fn and re.search(r'command -v "\$', line):
                checkers.add(fn)  # skt_need(): checks that its arguments are commands
            if re.match(r"^\}", line) or (m and line.rstrip().endswith("}")):
                fn = None
    for f in shells:
        for no, w in shell_commands(open(os.path.join(TOP, f)).read(), funcs, wrappers=wrappers, checkers=checkers,
                                    known=lambda w: ("cmd", w) in decl or which(w) is not None):
            need("cmd", w, f"{f}:{no}")
    for f in ["Makefile"] + files([r"mk/.*\.mk"]):
        text = open(os.path.join(TOP, f)).read()
        for no, w in shell_commands(text, funcs, make=True):
            need("cmd", w, f"{f}:{no}")
        for no, line in enumerate(text.splitlines(), 1):
            if line.lstrip().startswith("#"):
                continue
            for m in re.finditer(r"(?<![\w-])-l([A-Za-z][\w+-]*)", line):
                if m.group(1) not in LIBC_LIBS:
                    need("lib", m.group(1), f"{f}:{no}")
            for m in re.finditer(r"(?<![\w./-])(/usr/(?:include|lib)/[\w./+-]+)", line):
                need("path", m.group(1), f"{f}:{no}")
            for m in re.finditer(r"-fsanitize=([\w,]+)", line):
                for san in m.group(1).split(","):
                    # gcc brings its own sanitizer runtimes; clang's live in libclang-rt
                    need("san", san, f"{f}:{no}")
    local_py = {os.path.splitext(os.path.basename(p))[0] for p in files([r".*\.py"])}
    for f in files([r"(tests|tools|bench)/.*\.py"]):
        for no, kind, name in py_needs(open(os.path.join(TOP, f)).read()):
            if kind == "py" and name in local_py:
                continue
            need(kind, name, f"{f}:{no}")
    for f in files([r"(src|bench|fuzz|tests)/.*\.[ch]"]):
        if f.startswith("src/plat/kvm/") or f.startswith("bench/vm/init"):
            pass  # freestanding/guest code still includes compiler headers only
        for no, kind, name in c_needs(open(os.path.join(TOP, f), errors="replace").read()):
            need(kind, name, f"{f}:{no}")

    # An argv literal is a weaker sign than a shell command word (a list of
    # strings may be data): it counts as a command only when it is declared
    # or this machine has an executable of that name.
    for (kind, name), where in list(needs.items()):
        if kind == "argv":
            del needs[(kind, name)]
            if ("cmd", name) in decl or which(name):
                needs.setdefault(("cmd", name), []).extend(where)
    return needs, funcs


def decl_only_cmds(decl):
    """The declared commands that this machine's PATH does not hold: the only
    ones for which scan()'s result can depend on whether they are declared."""
    return {name for kind, name in decl if kind == "cmd" and which(name) is None}


def evaluate(needs, funcs, decl, show=False):
    """The gaps [(kind, name, [where], package here)] of needs against the
    list decl, in (kind, name) order.  With show, print every need met."""
    prefetch_owners([which(n) for k, n in needs if k == "cmd" and ("cmd", n) not in decl] +
                    [header_path(n) for k, n in needs if k == "inc" and ("inc", n) not in decl] +
                    [lib_path(n) for k, n in needs if k == "lib" and ("lib", n) not in decl])
    stdlib = stdlib_modules({n for k, n in needs if k == "py" and ("py", n) not in decl})
    gaps = []
    for (kind, name), where in sorted(needs.items()):
        pkg = None
        if (kind, name) in decl:
            if show:
                print(f"{kind}:{name}  [{decl[(kind, name)]}]  {where[0]}")
            continue
        if kind == "cmd":
            if name in funcs or os.path.exists(os.path.join(TOP, name)):
                continue
            p = which(name)
            pkg = owner(p) if p else None
            if pkg in ESSENTIAL_PKGS:
                if show:
                    print(f"cmd:{name}  [essential {pkg}]  {where[0]}")
                continue
        elif kind == "inc":
            p = header_path(name)
            pkg = owner(p) if p else None
            if pkg in TOOLCHAIN_PKGS or (p and "/gcc/" in p):
                continue
        elif kind == "lib":
            p = lib_path(name)
            pkg = owner(p) if p else None
            if pkg in TOOLCHAIN_PKGS:
                continue
        elif kind == "path":
            pkg = owner(name) if os.path.exists(name) else None
        elif kind == "san":
            if name in ("address", "undefined"):
                continue  # gcc's own runtimes (libgcc-12-dev, from build-essential)
        elif kind == "py":
            # The standard library comes with python3 (declared).
            if name in stdlib:
                continue
        gaps.append((kind, name, where, pkg))
    return gaps


def gap_lines(gaps):
    """The lines that report gaps (on stderr), the first one first."""
    for kind, name, where, pkg in gaps:
        more = f" (and {len(where) - 1} more)" if len(where) > 1 else ""
        src = f"; on this machine it comes from package {pkg}" if pkg else "; it is not installed here"
        yield (f"depscan: {where[0]}{more} needs {kind} '{name}', which no package in "
               f"tools/deps.sh provides{src}")


def without(decl, gone):
    """decl with every entry of package gone taken off."""
    return {key: pkg for key, pkg in decl.items() if pkg != gone}


def without_each(decl):
    """For every package on the list, what `--without PACKAGE` would report,
    with the tree scanned once: one line "PACKAGE RC FIRST-LINE" on stdout,
    where RC is the exit status --without PACKAGE would have and FIRST-LINE
    its first line that names a need (or, when there is none, a sentence
    saying so).  Exit 1 if some package is needed by nothing.

    The scan is made once, with the full list.  Without a package its
    commands would be known to scan() only if `which` finds them, and they
    are known with the full list anyway; so the needs differ only for a
    declared command `which` does not find (decl_only_cmds).  That cannot
    happen after `tools/deps.sh --check` has passed (every declared command
    installed), as it has when tests/deps_test.sh runs; if it does, the
    package that declares such a command is scanned again with its own
    reduced list, so the answer is always exactly --without's."""
    needs, funcs = scan(decl)
    # Warm the caches for every list at once: one dpkg-query and one python3
    # for all of them instead of one per package.
    prefetch_owners([which(n) for k, n in needs if k == "cmd"] +
                    [header_path(n) for k, n in needs if k == "inc"] +
                    [lib_path(n) for k, n in needs if k == "lib"])
    stdlib_modules({n for k, n in needs if k == "py"})
    unseen = decl_only_cmds(decl)
    idle = 0
    for gone in dict.fromkeys(decl.values()):  # the list's order
        rest = without(decl, gone)
        if not rest:
            rc, first = 1, "depscan: tools/deps.sh --list printed nothing"
        else:
            n, f = (needs, funcs)
            if any(decl.get(("cmd", c)) == gone for c in unseen):
                n, f = scan(rest)
            line = next(gap_lines(evaluate(n, f, rest)), None)
            rc, first = (1, line) if line else (0, f"nothing needs it: the check passes without {gone}")
        if rc != 1 or " needs " not in first:
            idle += 1
        print(f"{gone} {rc} {first}")
    if idle:
        print(f"depscan: {idle} package(s) needed by nothing: take them off tools/deps.sh's list, "
              "or say what uses them", file=sys.stderr)
        return 1
    return 0


def main():
    show = "--show" in sys.argv
    if "-h" in sys.argv or "--help" in sys.argv:
        print(__doc__)
        return 0
    decl = declared()
    if "--without-each" in sys.argv:
        if show or "--without" in sys.argv:
            print("depscan: --without-each takes neither --show nor --without", file=sys.stderr)
            return 2
        if not decl:
            print("depscan: tools/deps.sh --list printed nothing", file=sys.stderr)
            return 1
        return without_each(decl)
    if "--without" in sys.argv:
        k = sys.argv.index("--without")
        if k + 1 >= len(sys.argv):
            print("depscan: --without needs a package name", file=sys.stderr)
            return 2
        gone = sys.argv[k + 1]
        if gone not in decl.values():
            print(f"depscan: {gone} is not on tools/deps.sh's list", file=sys.stderr)
            return 2
        decl = without(decl, gone)
    if not decl:
        print("depscan: tools/deps.sh --list printed nothing", file=sys.stderr)
        return 1
    needs, funcs = scan(decl)
    gaps = evaluate(needs, funcs, decl, show)
    for line in gap_lines(gaps):
        print(line, file=sys.stderr)
    if gaps:
        print(f"depscan: {len(gaps)} need(s) missing from tools/deps.sh: add the package "
              "(and the KIND:NAME it provides) to its list", file=sys.stderr)
        return 1
    if show:
        print(f"depscan: {len(needs)} needs, all met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
