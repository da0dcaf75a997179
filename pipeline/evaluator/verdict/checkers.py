"""Checker programs (`checker.kind == "program"`), run sandboxed in the worker's check box.

Protocols:
  kattis   `validator input answer feedback_dir < team_output`; exit 42 = accepted, 43 = wrong
           answer; the message is feedback_dir/judgemessage.txt (or teammessage.txt).
  testlib  `checker input output answer`; exit 0 = ok, 1 = wrong answer, 2 = presentation error
           (judged WA), anything else (3 = fail, ...) = the checker failed.
The checker's files (the test's input, the expected answer, the contestant's output) are never
written to disk: each is a sealed memory file (`workspace.private_data`) the parent passes to the
check box with the run request (`extra_fds`, see inside/PROTOCOL.md), which the checker gets as
descriptors 4, 5, ... and its argv names as /proc/self/fd/N. (A file in the worker's check dir
would be readable by a submission running meanwhile under the unshare sandbox, which sees the
host's files.) For functional problems they hold the argument lines, the expected JSON and the
actual JSON. A Python checker runs with the
interpreter's default limit on int digits (`sys.int_info.default_max_str_digits`), as it would
anywhere else: the judge lifts that limit for itself, which a checker must not inherit.

A checker (or interactor) is C++, Python, or a program directory as Kattis packages give them
(language "bundle": `build`/`run` scripts, several sources; bundle.py builds it in the build box).
`prepare` installs it in the check dir; `program_command` says how to start it there, for the
checker runs here and the interactive runner alike.

A checker that cannot be built or run (compile error, the sandbox failing) is a system error
(SE): never the submission's fault. One whose source does not compile says so in the test's
`diff` (`NOT_COMPILED` and the compiler's first error line; `not_compiled` reads it back). One
that crashes, runs out of its limits or exits with an unknown code on an output (`CheckerCrash`)
may have been made to: judge.judged then asks it about the expected answer (`accepts_expected`).
Accepted there, the output is what broke it: WA (a wrong answer crafted to crash the checker, e.g.
a 3-million-digit number, must not escape as SE, which is never counted against the model).
Failing or rejecting the expected answer too, the checker or the test data is broken: SE.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
import threading
from collections import OrderedDict
from typing import Any

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.evaluator.sandbox.box import Box, BoxError
from microcoder.pipeline.evaluator.sandbox.workspace import MB, Worker, private_data, write_file
from microcoder.pipeline.evaluator.verdict import bundle, testlib
from microcoder.pipeline.evaluator.verdict.compare import Comparison
from microcoder.pipeline.evaluator.verdict.compile import Compiler, install
from microcoder.pipeline.schema import Checker, Problem, TestCase

KATTIS_AC, KATTIS_WA = 42, 43
EXTRA_FD_BASE = 4  # where a program's extra descriptors start (inside/harness_runs.py)


def passed_file(index: int) -> str:
    """The path by which a program opens the `index`th extra descriptor it was given."""
    return f"/proc/self/fd/{EXTRA_FD_BASE + index}"


def private_files(*texts: str) -> list[int]:
    """A sealed memory file for each text (the caller closes them)."""
    fds: list[int] = []
    try:
        for text in texts:
            fds.append(private_data(text))
    except BaseException:
        for fd in fds:
            os.close(fd)
        raise
    return fds


class CheckerFailure(RuntimeError):
    """The checker itself failed (compile or build error, crash, timeout, unknown exit code)."""


# A checker (or interactor) whose source does not compile: the SE test result's `diff` is this and the
# compiler's first error line (an interactor's after "the interactor failed: "); `not_compiled` reads it.
NOT_COMPILED = "checker does not compile: "
INTERACTOR_FAILED = "the interactor failed: "
_ERROR_LINE = re.compile(r"\berror:|^\w*Error\b")  # g++ and clang; Python (SyntaxError: ...)
_PYTHON_WHERE = re.compile(r'^File "[^"]*", line (\d+)')


def first_error_line(diagnostics: str | None) -> str:
    """The line of a compiler's output that says what is wrong: g++'s first `error:` line (its
    directories dropped: they are the sandbox's), or Python's `SyntaxError: ...` with its line
    number; else the first line."""
    lines = [line.strip() for line in (diagnostics or "").splitlines() if line.strip()]
    found = next((line for line in lines if _ERROR_LINE.search(line)), lines[0] if lines else "no diagnostics")
    where = next((m.group(1) for line in lines if (m := _PYTHON_WHERE.match(line))), None)
    if where is not None and re.match(r"\w*Error\b", found):
        found += f" (line {where})"
    return re.sub(r"^\S*/(?=[^/\s]+:\d+)", "", found)[:300]


def not_compiled(diff: str | None) -> str | None:
    """The compiler's first error line when a test result's `diff` says its checker or interactor
    did not compile (status SE), else None."""
    text = (diff or "").removeprefix(INTERACTOR_FAILED)
    return text[len(NOT_COMPILED):] if text.startswith(NOT_COMPILED) else None


class CheckerCrash(CheckerFailure):
    """The checker ran on an output and crashed, ran out of its CPU or output limit, or exited
    with an unknown code: possibly that output's doing (see the module docstring)."""


_ACCEPTED: OrderedDict[str, None] = OrderedDict()  # (checker, input, answer) keys it accepted
_ACCEPTED_MAX = 4096
_accepted_lock = threading.Lock()


def _key(checker: Checker) -> str:
    text = f"{checker.language}\0{checker.protocol}\0{checker.program}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def prepare(checker: Checker, worker: Worker, compiler: Compiler) -> None:
    """Install the checker program (or interactor) in the worker's check dir, once per distinct
    one; `program_command` then says how to start it in the check box."""
    key = _key(checker)
    if worker.prepared.get("checker") == key:
        return
    worker.prepared.pop("checker", None)
    launch = bundle.Launch("exec", "checker", ("checker",))
    if checker.language == "cpp":
        source = checker.program or ""
        include = testlib.include_dir(compiler.cfg.testlib_dir)
        if include is None and testlib.uses_testlib(source):
            raise CheckerFailure("the checker includes testlib.h, which is not installed here: `make setup` "
                                 "installs it (or set evaluator.testlib_dir)")
        flags = ("-I", worker.include_inside(include)) if include else ()
        result = compiler.compile(source, worker, flags)
        if result.status == "CE":
            raise CheckerFailure(NOT_COMPILED + first_error_line(result.message))
        if result.status != "ok":  # the compiler could not run here: the machine's doing, not the source's
            raise CheckerFailure(f"checker could not be compiled: {result.message}")
        install(result.binary, worker.check / "checker")
    elif checker.language == "python":
        write_file(worker.check / "checker.py", checker.program or "")
        launch = bundle.Launch("python", "checker.py", ("checker.py",))
    elif checker.language == "bundle":  # a program directory (Kattis): built as the format says
        try:
            launch = bundle.install(bundle.build(checker.program or "", worker, compiler), worker.check)
        except bundle.BuildError as e:
            raise CheckerFailure(f"checker does not build: {e}") from None
        except OSError as e:  # unpacking or installing it on this machine
            raise CheckerFailure(f"checker could not be installed: {e}") from e
    else:
        raise CheckerFailure(f"unsupported checker language {checker.language!r}")
    worker.prepared["checker_launch"] = json.dumps([launch.kind, launch.code, list(launch.argv0)])
    worker.prepared["checker"] = key


def program_command(checker: Checker, box: Box, worker: Worker) -> dict[str, Any]:
    """How to start the `prepare`d checker or interactor in `box` (the worker's check box): the
    run request's `kind` (exec | python) and `code`, and `argv0`, the argv before the program's
    own arguments (a shell for a `run` script without `#!`)."""
    if worker.prepared.get("checker") != _key(checker) or "checker_launch" not in worker.prepared:
        raise CheckerFailure("the checker is not prepared in this worker (call checkers.prepare first)")
    kind, code, argv0 = json.loads(worker.prepared["checker_launch"])

    def where(path: str) -> str:
        return path if path.startswith("/") else box.inside(worker.check / path)

    return {"kind": kind, "code": where(code), "argv0": [where(a) for a in argv0]}


def validator_args(problem: Problem, test: TestCase) -> list[str]:
    """The arguments a Kattis output validator gets after its feedback dir, as the package format
    passes them: the flags of the test's group (`output_validator_flags`, 2023-07 on also
    `output_validator_args`, in meta.test_groups), else problem.yaml's (meta.validator_flags)."""
    groups = problem.meta.get("test_groups") if isinstance(problem.meta, dict) else None
    settings = next((g for g in groups or [] if isinstance(g, dict) and g.get("group") == test.group), {})
    for value in (settings.get("output_validator_flags"), settings.get("output_validator_args"),
                  problem.meta.get("validator_flags") if isinstance(problem.meta, dict) else None):
        if isinstance(value, str):
            return value.split()
        if isinstance(value, list):
            return [str(x) for x in value]
    return []


def run_checker(checker: Checker, worker: Worker, cfg: EvaluatorConfig, input_text: str, expected: str,
                actual: str, args: list[str] | tuple[str, ...] = ()) -> Comparison:
    """Judge one output with the checker program (`prepare`d). Raises CheckerCrash when it
    misbehaves on the output, CheckerFailure when it cannot run at all. `args`: the Kattis
    validator's flags (`validator_args`)."""
    protocol = checker.protocol or "kattis"
    if protocol not in ("kattis", "testlib"):
        raise CheckerFailure(f"unknown checker protocol {protocol!r}")
    box = worker.box("check")
    command = program_command(checker, box, worker)
    argv0 = command["argv0"]
    req = {"op": "run", "kind": command["kind"], "code": command["code"],
           "cpu_s": cfg.checker_time_limit_s, "wall_s": 2 * cfg.checker_time_limit_s + 5,
           "mem_bytes": cfg.checker_memory_mb * MB, "stack_bytes": cfg.checker_memory_mb * MB,
           "fsize_bytes": 16 * MB, "nofile": 64, "out_bytes": 1 * MB,
           # the judge runs with no limit on int digits; a checker gets the interpreter's default
           "int_max_str_digits": sys.int_info.default_max_str_digits}
    if protocol == "kattis":  # the output on stdin; input and answer as extra descriptors
        texts = (actual, input_text, expected)
        req.update(argv=[*argv0, passed_file(0), passed_file(1), "{cwd}/feedback/", *args], stdin_fd=True, extra_fds=2,
                   mkdirs=["feedback"], collect=["feedback/judgemessage.txt", "feedback/teammessage.txt"])
    else:
        texts = (input_text, actual, expected)
        req.update(argv=[*argv0, passed_file(0), passed_file(1), passed_file(2)], extra_fds=3)
    fds = private_files(*texts)
    try:
        reply = box.request(req, 2 * cfg.checker_time_limit_s + 30, fds=tuple(fds))
    except BoxError as e:
        raise CheckerFailure(f"checker sandbox failed: {e}") from e
    finally:
        for fd in fds:
            os.close(fd)
    h = reply.header
    if h.get("ok") and h.get("compile_error"):  # a Python checker with a syntax error
        raise CheckerFailure(NOT_COMPILED + first_error_line(h["compile_error"]))
    if not h.get("ok") or h.get("harness_error"):
        raise CheckerFailure(f"checker could not run: {h.get('harness_error') or h.get('compile_error')}")
    stdout, stderr = (b.decode("utf-8", "replace").strip() for b in reply.blobs[:2])
    if h["why"] == "wall":  # blocked or starved, not computing: nothing an output can do
        raise CheckerFailure("checker exceeded its limits (wall)")
    if h["why"] != "exit":
        raise CheckerCrash(f"checker exceeded its limits ({h['why']})")
    code = h["exit"]
    if protocol == "kattis":
        feedback = next((b.decode("utf-8", "replace").strip() for b in reply.blobs[2:] if b.strip()), "")
        message = (feedback or stdout or stderr)[:300] or None
        if code == KATTIS_AC:
            return Comparison(True, "program")
        if code == KATTIS_WA:
            return Comparison(False, None, message or "rejected by the output validator")
    else:
        message = (stderr or stdout)[:300] or None
        if code == 0:
            return Comparison(True, "program")
        if code in (1, 2):
            what = "wrong answer" if code == 1 else "presentation error"
            return Comparison(False, None, f"{what}: {message}" if message else what)
    raise CheckerCrash(f"checker exit code {code if code is not None else 'signal ' + str(h['signal'])}: "
                       f"{(stderr or stdout)[-300:]}")  # the end: a traceback's last line says what failed


def accepts_expected(checker: Checker, worker: Worker, compiler: Compiler, cfg: EvaluatorConfig,
                     input_text: str, expected: str, args: list[str] | tuple[str, ...] = ()) -> str | None:
    """Run the checker with the expected answer as the contestant's output: None when it accepts
    it, else why not (it failed, or rejected it). Acceptance is remembered per (checker, input,
    answer), so a checker that keeps failing on submissions' outputs is asked once per test."""
    h = hashlib.sha256(f"{_key(checker)}\0{cfg.checker_time_limit_s}\0{cfg.checker_memory_mb}\0{args}".encode())
    for text in (input_text, expected):
        data = text.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    key = h.hexdigest()
    with _accepted_lock:
        if key in _ACCEPTED:
            _ACCEPTED.move_to_end(key)
            return None
    try:
        prepare(checker, worker, compiler)
        cmp = run_checker(checker, worker, cfg, input_text, expected, expected, args)
    except CheckerFailure as e:
        return f"it fails on the expected answer too: {e}"
    if not cmp.ok:
        return f"it rejects the expected answer: {cmp.message}"
    with _accepted_lock:
        _ACCEPTED[key] = None
        while len(_ACCEPTED) > _ACCEPTED_MAX:
            _ACCEPTED.popitem(last=False)
    return None
