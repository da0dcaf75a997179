"""What a compile runs under in the build box (stdlib only; run as a script there, never imported by
the judge): a source can make the compiler open nothing outside its include path, and nothing it
can open blocks.

`python -I -S compile_guard.py CONFIG COMPILER ARGS...`, CONFIG a JSON object with `log`, `tmp`,
`read`, `write` and `landlock` (false: none, for tests); then it execs the compiler, which inherits all of this:

- stdout and stderr are the file `log` (the judge collects it), never a pipe: a pipe the compiler
  holds (the judge's, or the assembler's input under `-pipe`, which the caller leaves out) is one
  `#include "/dev/stdout"` or `"/proc/self/fd/2"` away, and reading it blocks until the wall limit.
  stdin stays the judge's /dev/null. TMPDIR is `tmp`.
- Landlock, where the kernel has it (Linux 5.13+): read and execute only beneath `read`, write only
  beneath `write`. Nothing under /proc or /dev opens (nor `log`, outside both), whatever path a
  source spells or builds with macros, for the preprocessor and the assembler (`.incbin`) alike.
  Pipes and sockets reached through /proc/self/fd are the one thing Landlock lets through: hence
  the files above. Where the kernel has no Landlock the compile goes on without it: the caller's
  check of the compiler's own dependency list (`-MD`) then holds the includes.

Exit status GUARD_FAILED (125) with a line on stderr: the guard itself failed (never the compiler).
"""

import ctypes
import json
import os
import signal
import stat
import struct
import sys

GUARD_FAILED = 125
# syscall numbers, the same on every architecture with the unified table (x86_64, aarch64, ...)
CREATE_RULESET, ADD_RULE, RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
REFER, TRUNCATE = 1 << 13, 1 << 14  # ABI 2, ABI 3
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE  # the only ones a rule on a file may hold
READ = EXECUTE | READ_FILE | READ_DIR


def _syscall(*args):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    r = libc.syscall(*(ctypes.c_long(a) if isinstance(a, int) else a for a in args))
    if r < 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return r


def landlock_abi():
    """The kernel's Landlock ABI version; 0 where it has none (too old, or not enabled)."""
    try:
        return _syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    except OSError:
        return 0


def restrict(read, write):
    """Landlock this process (and what it execs) to `read` and `write`; the ABI used, 0 for none."""
    abi = landlock_abi()
    if abi < 1:
        return 0
    handled = ABI1 | (REFER if abi >= 2 else 0) | (TRUNCATE if abi >= 3 else 0)
    attr = ctypes.create_string_buffer(struct.pack("=Q", handled))
    ruleset = _syscall(CREATE_RULESET, attr, 8, 0)
    try:
        for paths, rights in ((read, READ), (write, handled)):
            for path in paths:
                try:
                    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
                except FileNotFoundError:
                    continue
                try:
                    allowed = rights if stat.S_ISDIR(os.fstat(fd).st_mode) else rights & FILE_RIGHTS
                    rule = ctypes.create_string_buffer(struct.pack("=Qi", allowed & handled, fd))
                    _syscall(ADD_RULE, ruleset, RULE_PATH_BENEATH, rule, 0)
                finally:
                    os.close(fd)
        _no_new_privs()  # Landlock's condition for an unprivileged process
        _syscall(RESTRICT_SELF, ruleset, 0)
    finally:
        os.close(ruleset)
    return abi


def _no_new_privs():
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                  ctypes.c_ulong(0)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"PR_SET_NO_NEW_PRIVS: {os.strerror(err)}")


def main(argv):
    try:
        config, command = json.loads(argv[1]), argv[2:]
        log = os.open(config["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        os.makedirs(config["tmp"], exist_ok=True)
        os.environ["TMPDIR"] = config["tmp"]
        if config.get("landlock", True):
            restrict(config["read"], config["write"])
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these, and exec keeps that
            signal.signal(sig, signal.SIG_DFL)
        os.execv(command[0], command)
    except (OSError, ValueError, KeyError, IndexError) as e:
        os.write(2, f"compile guard: {e}\n".encode("utf-8", "replace"))
        os._exit(GUARD_FAILED)


if __name__ == "__main__":
    main(sys.argv)
