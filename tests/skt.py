"""skt.py — what skiff's python test scripts share (no third-party module).

  Checks(phase, prefix="", pass_detail=True)
      .check(name, ok, detail="")  prints "PASS PREFIXname detail" or
                                   "FAIL PREFIXname detail" (flushed, so a
                                   phase's log interleaves with its servers');
                                   returns ok
      .summary()                   prints "PHASE: N passed, M failed" (the
                                   line tests/run-all.sh's TOTALS picks up)
                                   and returns the exit status: 1 on a
                                   failure, else 0
  free_port(host="127.0.0.1")      a TCP port nobody listens on now (the
                                   kernel's pick; another program may take it
                                   before the caller binds: start servers
                                   with a retry or a readiness wait)

Scripts under tests/ import it directly; tools/ scripts put tests/ on
sys.path first (tools/doc_examples.py), so there is one copy.
"""
import socket
import sys


class Checks:
    """PASS/FAIL lines and their count for one phase."""

    def __init__(self, phase, prefix="", pass_detail=True):
        self.phase = phase
        self.prefix = prefix
        self.pass_detail = pass_detail
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        ok = bool(ok)
        if ok:
            self.passed += 1
        else:
            self.failed += 1
        shown = detail if (not ok or self.pass_detail) else ""
        print(f"{'PASS' if ok else 'FAIL'} {self.prefix}{name} {shown}".rstrip())
        sys.stdout.flush()
        return ok

    def summary(self):
        print(f"{self.phase}: {self.passed} passed, {self.failed} failed")
        sys.stdout.flush()
        return 1 if self.failed else 0


def free_port(host="127.0.0.1"):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    try:
        s.bind((host, 0))
        return s.getsockname()[1]
    finally:
        s.close()
