"""Checker programs (`checker.kind == "program"`), run sandboxed in the worker's check box.

Protocols:
  kattis   `validator input answer feedback_dir < team_output`; exit 42 = accepted, 43 = wrong
           answer; the message is feedback_dir/judgemessage.txt (or teammessage.txt).
  testlib  `checker input output answer`; exit 0 = ok, 1 = wrong answer, 2 = presentation error
           (judged WA), anything else (3 = fail, ...) = the checker failed.
A checker that crashes, times out or exits otherwise is a system error (SE): never the
submission's fault. For functional problems the files hold the argument lines, the expected JSON
and the actual JSON.
"""

from __future__ import annotations

import hashlib

from pipeline.evaluator import testlib
from pipeline.evaluator.box import BoxError
from pipeline.evaluator.compare import Comparison
from pipeline.evaluator.compile import Compiler, install
from pipeline.evaluator.config import EvaluatorConfig
from pipeline.evaluator.workspace import MB, Worker, write_file
from pipeline.schema import Checker

KATTIS_AC, KATTIS_WA = 42, 43


class CheckerFailure(RuntimeError):
    """The checker itself failed (compile error, crash, timeout, unknown exit code)."""


def _key(checker: Checker) -> str:
    text = f"{checker.language}\0{checker.protocol}\0{checker.program}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def prepare(checker: Checker, worker: Worker, compiler: Compiler) -> None:
    """Install the checker program in the worker's check dir (once per distinct checker)."""
    key = _key(checker)
    if worker.prepared.get("checker") == key:
        return
    if checker.language == "cpp":
        source = checker.program or ""
        include = testlib.include_dir(compiler.cfg.testlib_dir)
        if include is None and testlib.uses_testlib(source):
            raise CheckerFailure("the checker includes testlib.h, which is not installed here: `make setup` "
                                 "installs it (or set evaluator.testlib_dir)")
        flags = ("-I", worker.include_inside(include)) if include else ()
        result = compiler.compile(source, worker, flags)
        if result.status != "ok":
            raise CheckerFailure(f"checker does not compile: {result.message}")
        install(result.binary, worker.check / "checker")
    elif checker.language == "python":
        write_file(worker.check / "checker.py", checker.program or "")
    else:
        raise CheckerFailure(f"unsupported checker language {checker.language!r}")
    worker.prepared["checker"] = key


def run_checker(checker: Checker, worker: Worker, cfg: EvaluatorConfig, input_path, expected: str,
                actual: str) -> Comparison:
    """Judge one output with the checker program. Raises CheckerFailure when it misbehaves."""
    protocol = checker.protocol or "kattis"
    box = worker.box("check")
    write_file(worker.check / "answer.txt", expected)
    write_file(worker.check / "output.txt", actual)
    inp, ans, out = box.inside(input_path), box.inside(worker.check / "answer.txt"), box.inside(worker.check / "output.txt")
    python = checker.language == "python"
    prog = box.inside(worker.check / ("checker.py" if python else "checker"))
    req = {"op": "run", "kind": "python" if python else "exec", "code": prog,
           "cpu_s": cfg.checker_time_limit_s, "wall_s": 2 * cfg.checker_time_limit_s + 5,
           "mem_bytes": cfg.checker_memory_mb * MB, "stack_bytes": cfg.checker_memory_mb * MB,
           "fsize_bytes": 16 * MB, "nofile": 64, "out_bytes": 1 * MB}
    if protocol == "kattis":
        req.update(argv=[prog, inp, ans, "{cwd}/feedback/"], stdin=out, mkdirs=["feedback"],
                   collect=["feedback/judgemessage.txt", "feedback/teammessage.txt"])
    elif protocol == "testlib":
        req.update(argv=[prog, inp, out, ans])
    else:
        raise CheckerFailure(f"unknown checker protocol {protocol!r}")
    try:
        reply = box.request(req, 2 * cfg.checker_time_limit_s + 30)
    except BoxError as e:
        raise CheckerFailure(f"checker sandbox failed: {e}") from e
    h = reply.header
    if not h.get("ok") or h.get("harness_error") or h.get("compile_error"):
        raise CheckerFailure(f"checker could not run: {h.get('harness_error') or h.get('compile_error')}")
    stdout, stderr = (b.decode("utf-8", "replace").strip() for b in reply.blobs[:2])
    if h["why"] != "exit":
        raise CheckerFailure(f"checker exceeded its limits ({h['why']})")
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
    raise CheckerFailure(f"checker exit code {code if code is not None else 'signal ' + str(h['signal'])}: "
                         f"{(stderr or stdout)[:300]}")
