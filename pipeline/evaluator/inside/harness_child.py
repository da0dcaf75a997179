"""What runs in the judge's forked children (stdlib only; imported by harness.py in the sandbox).

A Python stdio child gets fresh `sys.std*` streams on the test's pipes and a fresh `__main__`, and
ends the way interpreter shutdown does (non-daemon threads joined, atexit run, streams flushed). A
functional "session" child loads the submission once (with LeetCode's implicit prelude for
`class Solution` code), then answers one call per test: arguments decoded from JSON lines
(ListNode / TreeNode parameters, also nested in lists and optionals, built from their list form by
their annotations: `harness_types.py`), the return value encoded as JSON (tuples, sets, numpy
values, linked lists and trees mapped; `converted` records that it happened; a missing list or
tree where the annotation puts one is `[]`, as LeetCode prints it). A method annotated `-> None`
is judged by its first argument after the call (LeetCode's "modify in place"), an empty list or
tree included.

Entry point resolution (`resolve_entry`): `Cls().method` names that class's method; a bare name
is the method of the submission's `class Solution` when it has one, otherwise the callable bound
to that name in the submission's module (its own function, which replaces any prelude name it
shares, or else an imported one).
"""

import json
import os
import re
import resource
import signal
import sys
import time

from harness_types import NODE_TYPES, annotation_shape, build_argument, empty_nodes_as_lists

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
HARNESS_FAIL_EXIT = 126
# Compiled here, in the judge process: every forked child inherits it (instead of compiling it
# again through re's cache, which starts empty in each child).
ENTRY_METHOD = re.compile(r"(\w+)\s*(?:\(\s*\))?\s*\.\s*(\w+)")
LEETCODE_PRELUDE = '''
from typing import *
from collections import *
from itertools import *
from functools import *
from heapq import *
from bisect import *
from math import *
from string import *
from operator import *
import collections, itertools, functools, heapq, bisect, math, string, operator, re, random, sys, copy, json
try:
    from sortedcontainers import SortedList, SortedDict, SortedSet
except ImportError:
    pass
inf = float("inf")


class ListNode:
    def __init__(self, val=0, next=None):
        self.val = val
        self.next = next


class TreeNode:
    def __init__(self, val=0, left=None, right=None):
        self.val = val
        self.left = left
        self.right = right
'''


_PRELUDE_NS = None


def leetcode_prelude():
    """LeetCode's implicit imports and ListNode / TreeNode, built once in the judge process (the
    forked children copy the finished namespace instead of re-running the star imports)."""
    global _PRELUDE_NS
    if _PRELUDE_NS is None:
        import builtins

        ns = {}
        exec(compile(LEETCODE_PRELUDE, "<prelude>", "exec", dont_inherit=True), ns)
        # `from math import *` must not replace builtins such as pow (LeetCode keeps them)
        _PRELUDE_NS = {k: v for k, v in ns.items() if not k.startswith("__") and not hasattr(builtins, k)}
    return _PRELUDE_NS


# --- small utilities -----------------------------------------------------------------------
def write_all(fd, data):
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def vm_size_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * PAGE_SIZE


def set_limit(res, value):
    if value is None:
        return
    value = int(value)
    _soft, hard = resource.getrlimit(res)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(res, (value, value))


# --- the forked child -----------------------------------------------------------------------
def child_setup(fds, cwd, limits, python_child, syscall_filter=None, group_fds=()):
    """In the forked child: into the box's run group first (`group_fds`: its cgroup.procs files,
    see cgroups.py; everything the child starts is then counted), own session, fds 0-2 (+ extra
    at 3, 4...), cwd, resource limits, and last the syscall filter (`syscall_filter.Installer`)
    when the judge has one."""
    for fd in group_fds:  # before the fds below are renumbered (and closed) over them
        os.write(fd, b"0")
    os.setsid()
    for target, fd in enumerate(fds):
        if fd != target:
            os.dup2(fd, target)
        os.set_inheritable(target, True)
    os.closerange(len(fds), 1 << 16)
    os.chdir(cwd)
    signal.signal(signal.SIGINT, signal.default_int_handler if python_child else signal.SIG_DFL)
    if not python_child:
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
    if limits.get("sigpipe") == "ignore":  # an interactor, as problemtools runs it: a write after the
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)  # submission ended fails (EPIPE) instead of killing it
    mem = limits.get("mem_bytes")
    if mem is not None and python_child:
        mem += vm_size_bytes()  # the warm interpreter's own mappings are not the program's
    cpu = limits.get("rlimit_cpu_s", limits.get("cpu_s"))
    if cpu is not None:
        soft = int(cpu) + 2
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
    set_limit(resource.RLIMIT_AS, mem)
    set_limit(resource.RLIMIT_STACK, limits.get("stack_bytes"))
    set_limit(resource.RLIMIT_FSIZE, limits.get("fsize_bytes"))
    set_limit(resource.RLIMIT_NOFILE, limits.get("nofile"))
    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_MSGQUEUE, 0)
    if syscall_filter is not None:
        syscall_filter.install()


def python_streams(argv, code_path):
    """Fresh sys.std* on fds 0-2 and a fresh __main__, as a newly started interpreter has."""
    import io
    import random
    import types

    sys.stdin = sys.__stdin__ = io.TextIOWrapper(
        io.BufferedReader(io.FileIO(0, "r", closefd=False)), encoding="utf-8")
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(1, "w", closefd=False), 1 << 16), encoding="utf-8")
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.BufferedWriter(io.FileIO(2, "w", closefd=False)), encoding="utf-8",
        errors="backslashreplace", line_buffering=True)
    sys.argv = list(argv) or [code_path]
    sys.setrecursionlimit(1000)
    random.seed()  # a fresh interpreter seeds from the OS; forked children must not share state
    module = types.ModuleType("__main__")
    module.__file__ = code_path
    module.__builtins__ = __builtins__  # type: ignore[attr-defined]  # set on every module; not in typeshed
    sys.modules["__main__"] = module
    return module


def exit_code_of(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def finish_python(code):
    """What interpreter shutdown does: join non-daemon threads, run atexit, flush; then exit."""
    try:
        if "threading" in sys.modules:
            sys.modules["threading"]._shutdown()
    except BaseException:
        pass
    try:
        import atexit

        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    os._exit(code)


def read_source(req):
    """The program text, from its file ("code"): never inline in a request (the fork server's
    memory, which every program inherits, must hold no program's code)."""
    with open(req["code"], "rb") as f:
        return f.read()


def compile_or_report(req, status_fd, filename="solution.py"):
    try:
        return compile(read_source(req), filename, "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        import traceback

        msg = "".join(traceback.format_exception_only(type(e), e))
        write_all(status_fd, b"C" + msg.encode("utf-8", "replace")[:4000])
        os._exit(1)


def run_python_child(req, status_fd):
    code = compile_or_report(req, status_fd)
    # Started, with the RSS the program starts from (the warm interpreter's pages, which its peak
    # includes). From here on everything is the program's doing, so the judge's pipe is closed:
    # nothing the program writes reaches the judge but its stdout and stderr.
    write_all(status_fd, b"S%d" % rss_kb())
    os.close(status_fd)
    module = python_streams(req.get("argv") or [], req.get("code") or "solution.py")
    rc = 0
    try:
        exec(code, module.__dict__)
    except SystemExit as e:
        rc = exit_code_of(e)
    except BaseException as e:
        import traceback

        try:  # without the harness's own frame, as `python solution.py` would print it
            traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        except BaseException:
            pass
        rc = 1
    finish_python(rc)


def exec_child(req, status_fd, env):
    # The peak RSS of this process so far (the fork server's pages): the kernel keeps it as the
    # exec'd program's starting peak, so the judge must know it to read the program's own.
    write_all(status_fd, b"E%d\n" % hwm_kb())
    os.set_inheritable(status_fd, False)  # closed on exec: nothing more = exec worked
    argv = req["argv"]
    try:
        os.execve(argv[0], argv, env)
    except OSError as e:
        tag = b"M" if e.errno == 12 else b"H"  # ENOMEM: the image does not fit the memory limit
        write_all(status_fd, tag + f"cannot execute {argv[0]}: {e}".encode())
        os._exit(HARNESS_FAIL_EXIT)


# --- functional session child -----------------------------------------------------------------
def send_frame(fd, header, payload=b""):
    header["n"] = len(payload)
    write_all(fd, json.dumps(header).encode() + b"\n" + payload)


def resolve_entry(ns, entry):
    """A factory returning the callable for one call: a fresh Solution() per test (as LeetCode).

    `Cls().method` / `Cls.method` names the method of that class. A bare name resolves, first
    match wins, to:
      1. the method of the submission's `class Solution` (LeetCode's own rule): a module-level
         function of the same name, or a name the LeetCode prelude star-imports (`merge` from
         `heapq`), does not shadow it;
      2. the callable (not a class) bound to that name in the module. The prelude's names are
         bound before the submission runs, so a function the submission defines replaces an
         imported one of the same name; among the submission's own statements the last binding
         wins, as in Python.
    """
    entry = entry.strip()
    m = ENTRY_METHOD.fullmatch(entry)
    if m:
        cls, meth = ns.get(m.group(1)), m.group(2)
        if isinstance(cls, type) and hasattr(cls, meth):
            return lambda: getattr(cls(), meth)
        raise LookupError(f"entry point {entry!r} not found: no class {m.group(1)} with method {meth}")
    sol = ns.get("Solution")
    if isinstance(sol, type) and callable(getattr(sol, entry, None)):
        return lambda: getattr(sol(), entry)
    obj = ns.get(entry)
    if callable(obj) and not isinstance(obj, type):
        return lambda: obj
    raise LookupError(f"entry point {entry!r} not found (no function {entry} and no Solution.{entry})")


def node_classes(ns, prelude):
    """The class to build for each LeetCode node type: the submission's own definition when it
    has one, else the prelude's (None without either: such arguments stay JSON lists)."""
    out = {}
    for name in NODE_TYPES:
        cls = ns.get(name)
        out[name] = cls if isinstance(cls, type) else prelude.get(name)
    return out


def call_shapes(fn):
    """(shape of each parameter, shape of the result, in_place) from the annotations, see
    harness_types. in_place: annotated `-> None` (the method modifies its first argument, which
    LeetCode then judges; the result's shape is None)."""
    import inspect

    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [], None, False
    shapes = [annotation_shape(p.annotation) if p.annotation is not p.empty else None for p in params]
    try:
        returns = getattr(fn, "__annotations__", {}).get("return", inspect.Parameter.empty)
    except Exception:  # noqa: BLE001 - the submission's own annotations object
        returns = inspect.Parameter.empty
    if returns is None or returns is type(None) or (isinstance(returns, str) and returns.strip() == "None"):
        return shapes, None, True
    return shapes, annotation_shape(returns) if returns is not inspect.Parameter.empty else None, False


def exact_number(x):
    """A Decimal or Fraction as JSON can carry it: a whole value as the int it is (a float would
    round 100000000000000000001 to the expected 1e20), any other as the nearest float."""
    import decimal

    if isinstance(x, decimal.Decimal):
        whole = x.is_finite() and x == x.to_integral_value() and x.adjusted() <= 4300
    else:
        whole = x.denominator == 1 and x.numerator.bit_length() <= 14300
    return int(x) if whole else float(x)


class Encoder:
    """Return value -> JSON-able data. `converted` records any non-JSON type that was mapped."""

    def __init__(self):
        self.converted = False

    def enc(self, x, depth=0):
        if depth > 2000:
            raise ValueError("return value nested too deeply")
        if x is None or isinstance(x, (bool, str)):
            return x
        if isinstance(x, int):
            return int(x)
        if isinstance(x, float):
            return float(x)
        if type(x) is list:
            return [self.enc(v, depth + 1) for v in x]
        self.converted = True
        if isinstance(x, tuple):
            return [self.enc(v, depth + 1) for v in x]
        if isinstance(x, (set, frozenset)):
            return {"__set__": [self.enc(v, depth + 1) for v in x]}
        if isinstance(x, dict):
            out = {self.key(k): self.enc(v, depth + 1) for k, v in x.items()}
            if len(out) != len(x):  # {1: 'x', '1': 'b'} must not read as {'1': 'b'}
                raise ValueError("dict keys collide as JSON keys")
            return out
        if hasattr(x, "val") and hasattr(x, "next"):
            return self.linked(x)
        if hasattr(x, "val") and hasattr(x, "left") and hasattr(x, "right"):
            return self.tree(x)
        if hasattr(x, "tolist") and callable(x.tolist):  # numpy scalars and arrays
            return self.enc(x.tolist(), depth + 1)
        import collections
        import decimal
        import fractions

        if isinstance(x, (decimal.Decimal, fractions.Fraction)):
            return exact_number(x)
        if isinstance(x, (list, collections.deque, range)):
            return [self.enc(v, depth + 1) for v in x]
        return {"__repr__": repr(x)[:200], "__type__": type(x).__name__}

    @staticmethod
    def key(k):
        if isinstance(k, str):
            return k
        if k is None or isinstance(k, (bool, int, float)):
            return json.dumps(k)
        return repr(k)

    def linked(self, node):
        out, seen = [], 0
        while node is not None:
            out.append(self.enc(node.val))
            node = node.next
            seen += 1
            if seen > 10**6:
                raise ValueError("linked list too long (cycle?)")
        return out

    def tree(self, root):
        from collections import deque

        out, queue = [], deque([root])
        while queue:
            node = queue.popleft()
            if node is None:
                out.append(None)
                continue
            out.append(self.enc(node.val))
            queue.append(node.left)
            queue.append(node.right)
            if len(out) > 2 * 10**6:
                raise ValueError("tree too large (cycle?)")
        while out and out[-1] is None:
            out.pop()
        return out


_SCALARS = (int, str, bool, float, type(None))


def plain(x):
    """Whether `Encoder().enc(x)` would give back `x` as it is: a scalar of an exact JSON type,
    or a flat list of those (the common LeetCode results), encoded without walking them in
    Python. Anything else (nested, tuples, sets, nodes, subclasses) goes through the Encoder."""
    t = type(x)
    if t is list:
        return all(type(v) in _SCALARS for v in x)
    return t in _SCALARS


def session_child(req, res_fd, cmd_fd):
    """Load the functional submission once, then answer one call per command line."""
    import io
    import traceback
    import types

    def fail(event, exc=None, msg=None):
        tb = exc.__traceback__.tb_next if exc is not None and exc.__traceback__ else None
        text = msg or "".join(traceback.format_exception(type(exc), exc, tb))[-4000:]
        send_frame(res_fd, {"event": event}, text.encode("utf-8", "replace"))
        os._exit(1)

    try:
        code = compile(read_source(req), "solution.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, OverflowError, MemoryError, RecursionError) as e:
        fail("compile_error", msg="".join(traceback.format_exception_only(type(e), e)))
    sys.stdin = sys.__stdin__ = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = sys.__stdout__ = io.TextIOWrapper(io.FileIO(1, "w", closefd=False))
    sys.stderr = sys.__stderr__ = io.TextIOWrapper(
        io.FileIO(2, "w", closefd=False), errors="backslashreplace", line_buffering=True)
    sys.argv = ["solution.py"]
    sys.setrecursionlimit(1000)
    import random

    random.seed()
    module = types.ModuleType("solution")
    module.__builtins__ = __builtins__  # type: ignore[attr-defined]  # set on every module; not in typeshed
    ns = module.__dict__
    prelude = leetcode_prelude() if req.get("prelude") == "leetcode" else {}
    ns.update(prelude)
    sys.modules["solution"] = module
    try:
        exec(code, ns)
    except BaseException as e:  # noqa: BLE001 - the program's own failure, reported as such
        fail("load_error", e)
    try:
        factory = resolve_entry(ns, req["entry"])
    except Exception as e:  # noqa: BLE001 - LookupError, or the submission's class failing a lookup
        fail("entry_error", msg=str(e) if isinstance(e, LookupError) else None, exc=e)
    send_frame(res_fd, {"event": "ready"})
    # Buffered: the commands of a window of calls (harness.run_calls) are read in one syscall,
    # not byte by byte. A command is
    # the input's length in bytes on a line, then the input itself (its JSON lines, one per
    # argument): no JSON wrapper to decode first.
    cmds = os.fdopen(cmd_fd, "rb")
    shapes = {}  # id(function) -> (function, call_shapes): inspect.signature costs more than most calls
    while True:
        line = cmds.readline()
        if not line:
            os._exit(0)
        try:
            size = int(line)
            data = cmds.read(size)
            if len(data) != size:
                os._exit(0)  # the judge is gone mid-command
            args = [json.loads(s) for s in data.decode("utf-8", "surrogatepass").split("\n") if s.strip()]
        except Exception as e:  # noqa: BLE001 - reported as a harness failure
            send_frame(res_fd, {"event": "harness_error"}, repr(e).encode())
            continue
        t0 = time.process_time()
        try:
            fn = factory()
            classes = node_classes(ns, prelude)  # per call: the program may rebind the names
            func = getattr(fn, "__func__", fn)
            known = shapes.get(id(func))
            if known is None or known[0] is not func:  # keyed by identity (the object is kept alive)
                known = shapes[id(func)] = (func, call_shapes(fn))
            params, result_shape, in_place = known[1]
            call_args = [build_argument(a, shape, classes) for a, shape in zip(args, params)]
            call_args += args[len(call_args):]
            result = fn(*call_args)
        except BaseException as e:  # noqa: BLE001
            cpu = time.process_time() - t0
            tb = "".join(traceback.format_exception(type(e), e, e.__traceback__.tb_next))[-4000:]
            send_frame(res_fd, {"event": "result", "ok": False, "error_type": type(e).__name__[:64],
                                "cpu_s": cpu, "maxrss_kb": maxrss_kb()}, tb.encode("utf-8", "replace"))
            if isinstance(e, SystemExit):
                os._exit(0)
            continue
        cpu = time.process_time() - t0
        if result is None and in_place and call_args:
            # "modify in place, return nothing": LeetCode judges the argument (an empty one as [])
            result, result_shape = call_args[0], params[0] if params else None
        enc = Encoder()
        try:
            if result_shape is None and plain(result):  # what Encoder would return unchanged
                payload = json.dumps(result).encode()
            else:
                result = empty_nodes_as_lists(result, result_shape)  # LeetCode prints no list / tree as []
                payload = json.dumps(enc.enc(result)).encode()
        except Exception as e:  # noqa: BLE001 - the program's own methods (__repr__, __int__, tolist, ...) ran here too
            send_frame(res_fd, {"event": "result", "ok": False, "error_type": "Unserialisable", "cpu_s": cpu,
                                "maxrss_kb": maxrss_kb()}, f"return value cannot be serialised: {e}".encode())
            continue
        # The common frame, formatted directly (json.dumps of the header dict costs more)
        write_all(res_fd, b'{"event":"result","ok":true,"converted":%s,"cpu_s":%r,"maxrss_kb":%d,"n":%d}\n%s' % (
            b"true" if enc.converted else b"false", cpu, maxrss_kb(), len(payload), payload))


def hwm_kb():
    with open("/proc/self/status", "rb") as f:
        for line in f:
            if line.startswith(b"VmHWM:"):
                return int(line.split()[1])
    return 0


def rss_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_SIZE // 1024


def maxrss_kb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


