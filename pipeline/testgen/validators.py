"""Problem-shipped input validators, run in the evaluator's sandbox on generated stdio inputs.

A validator reads one input on stdin and says by its exit code whether the input is valid: 42 for
the problem package format's input validators (Kattis `input_validators/`; any other exit means the
input is not confirmed valid), 0 for an authored one (a testlib validator exits 0 too). Every
validator of a problem must accept an input for it to be kept; an input one does not accept gets
the reason (`check_inputs`), which the caller counts.

A validator that cannot be trusted makes every input of its problem unconfirmed, never silently
accepted: one that does not compile, one that does not accept the problem's own test inputs (the format requires every
official input to pass; a validator that rejects them is broken here, e.g. by missing arguments or
a Python 2 dialect, and neither its acceptances nor its rejections mean anything), and, where the
problem has no test input of its own, one with no verdict (a crash, a timeout) on any input. Those reasons
start with "validator <name> " and contain "unusable" or "did not compile" (`is_unusable`), so a
broken validator shows in the counts as one, not as a generator producing only invalid inputs.

Kattis validators take arguments (`input_validator_args` / `_flags`); the evaluator runs a program
without any, so `validators_of` wraps the code: a Python validator gets `sys.argv` set before it
runs, a C++ one a `main` that calls its own with the arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from microcoder.pipeline.schema import Problem
from microcoder.pipeline.testgen.runner import RAN, Job, Run, collect

KATTIS_VALID_EXIT = 42
# A validator gets more time and memory than a solution (the format's validation limits are
# separate from the problem's; problemtools' typical defaults are 60 s and 2048 MiB).
VALIDATION_TIME_S = 10.0
VALIDATION_MEMORY_MB = 2048
CONTROLS = 2  # the problem's own test inputs each validator must accept (the smallest ones)
NEVER_CUT = 1 << 62  # keep_output_bytes for collect: a validator's stdout is never its verdict


@dataclass(frozen=True)
class InputValidator:
    name: str  # e.g. "kattis:validate.py" or "authored"
    language: str  # "python" | "cpp" (what the evaluator runs)
    code: str  # ready to run: arguments already applied
    valid_exit: int  # 42 for Kattis input validators (exit 43 = invalid), 0 for an authored validator


def validators_of(problem: Problem) -> list[InputValidator]:
    """The validators recorded in `problem.meta["input_validators"]` ([{name, language, code, flags,
    valid_exit}], as the Kattis source writes them; `valid_exit` defaults to the format's 42)."""
    out = []
    for i, entry in enumerate(problem.meta.get("input_validators") or []):
        missing = [k for k in ("name", "language", "code") if not isinstance(entry.get(k), str)]
        if missing:
            raise ValueError(f"{problem.id}: meta.input_validators[{i}] lacks {missing}")
        flags = [str(f) for f in entry.get("flags") or []]
        code = with_arguments(entry["language"], entry["code"], entry["name"], flags)
        out.append(InputValidator(entry["name"], entry["language"], code, int(entry.get("valid_exit", KATTIS_VALID_EXIT))))
    return out


def check_inputs(ev, jobs: list[tuple[Problem, list[InputValidator], list[str]]], *,
                 time_limit_s: float = VALIDATION_TIME_S, memory_mb: int = VALIDATION_MEMORY_MB,
                 controls: int = CONTROLS) -> list[list[str | None]]:
    """Per job, per input: None when every validator accepts it, else why not (the first reason:
    an unusable validator's before a rejection). One evaluator batch for all jobs; each validator
    also runs on up to `controls` of the problem's own test inputs (see the module docstring)."""
    batch, control_inputs = [], []
    for j, (problem, validators, inputs) in enumerate(jobs):
        own = _control_inputs(problem, controls) if inputs and validators else []
        control_inputs.append(own)
        if inputs:
            target = _validation_problem(problem, time_limit_s, memory_mb)
            batch += [Job((j, v), target, val.language, _runnable(val), own + list(inputs))
                      for v, val in enumerate(validators)]
    runs = collect(ev, batch, NEVER_CUT) if batch else {}
    out = []
    for j, (_, validators, inputs) in enumerate(jobs):
        n_own = len(control_inputs[j])
        per_validator = [_verdicts(val, runs[(j, v)][:n_own], runs[(j, v)][n_own:])
                         for v, val in enumerate(validators)] if inputs else []
        out.append([_first_reason(per_validator, k) for k in range(len(inputs))])
    return out


def is_unusable(reason: str | None) -> bool:
    """Whether a reason says the validator itself failed (not that the input is invalid)."""
    return bool(reason) and reason.startswith("validator ") and (" unusable: " in reason or " did not compile: " in reason)


# --- arguments ------------------------------------------------------------------------------------------
_CPP_NO_ARG_MAIN = re.compile(r"\bmain\s*\(\s*(void)?\s*\)")
# The validator's own main may take `char**` or `const char**`.
_CPP_CALL = """static int microcoder_call(int (*f)(int, char**), int argc, char** argv) { return f(argc, argv); }
static int microcoder_call(int (*f)(int, const char**), int argc, char** argv) {
    return f(argc, const_cast<const char**>(argv));
}
"""


def with_arguments(language: str, code: str, name: str, flags: list[str]) -> str:
    """`code` run as if invoked `program flags...` (the evaluator passes no arguments)."""
    if not flags:
        return code
    program = name.split(":", 1)[-1]
    if language == "python":
        # exec in __main__'s own namespace: `if __name__ == "__main__"` and `from __future__` still work
        return (f"import sys\nsys.argv = {[program, *flags]!r}\n"
                f"exec(compile({code!r}, {program!r}, 'exec', dont_inherit=True), globals())\n")
    if language == "cpp":
        if _CPP_NO_ARG_MAIN.search(code):
            return code  # its main takes no arguments: it cannot read them
        words = [program, *flags]
        arrays = "".join(f"    static char arg{i}[] = {_c_string(w)};\n" for i, w in enumerate(words))
        pointers = ", ".join(f"arg{i}" for i in range(len(words)))
        return (f"#define main microcoder_validator_main\n{code}\n#undef main\n{_CPP_CALL}"
                f"int main() {{\n{arrays}    char* argv[] = {{{pointers}, nullptr}};\n"
                f"    return microcoder_call(microcoder_validator_main, {len(words)}, argv);\n}}\n")
    raise ValueError(f"input validator {name}: cannot pass arguments to a {language!r} program")


def _c_string(text: str) -> str:
    safe = "".join(chr(b) if chr(b).isalnum() or chr(b) in "-_.,:=+/ " else f"\\{b:03o}" for b in text.encode())
    return f'"{safe}"'


_TESTLIB_INCLUDE = re.compile(r'^\s*#\s*include\s*["<]testlib\.h[">]\s*$', re.MULTILINE)


def _runnable(val: InputValidator) -> str:
    """The code as submitted: a C++ validator's `#include "testlib.h"` becomes the installed header
    (the evaluator passes no include path to programs it runs; without testlib installed the
    include stays, and the compile error says what is missing)."""
    if val.language != "cpp" or not _TESTLIB_INCLUDE.search(val.code):
        return val.code
    from microcoder.pipeline.evaluator.verdict import testlib

    folder = testlib.include_dir(None)
    if folder is None:
        return val.code
    header = (folder / testlib.HEADER).read_text(encoding="utf-8")
    return _TESTLIB_INCLUDE.sub(lambda _: header, val.code)  # its include guard allows repeats


# --- runs -------------------------------------------------------------------------------------------------
def _control_inputs(problem: Problem, limit: int) -> list[str]:
    """The smallest official inputs (samples first): every validator must accept them. Generated
    tests are not official (a source's generated tests may break the constraints)."""
    own = [t.input for t in problem.tests if t.kind == "public"] or [t.input for t in problem.tests if t.kind == "private"]
    return sorted(dict.fromkeys(own), key=len)[:limit]


def _validation_problem(problem: Problem, time_limit_s: float, memory_mb: int) -> Problem:
    """The problem as a validator run sees it: stdin input, the validation limits."""
    return replace(problem, style="stdio", checker=None, time_limit_s=max(problem.time_limit_s, time_limit_s),
                   memory_limit_mb=max(problem.memory_limit_mb, memory_mb))


_EXIT = re.compile(r"exit code (\d+)")


def _verdict(val: InputValidator, run: Run) -> tuple[str, str | None]:
    """("accept" | "reject" | "crash" | "broken", reason) of one validator run."""
    if run.status == "CE":
        return "broken", f"validator {val.name} did not compile: {_compile_error(run.message)}"
    if run.status in RAN:  # exit 0
        return ("accept", None) if val.valid_exit == 0 else ("reject", f"rejected by {val.name} (exit 0)")
    m = _EXIT.match(run.message or "") if run.status == "RE" else None
    if m:
        code = int(m.group(1))
        return ("accept", None) if code == val.valid_exit else ("reject", f"rejected by {val.name} (exit {code})")
    return "crash", f"validator {val.name} crashed: {_crash(run)}"


def _compile_error(message: str | None) -> str:
    """The line that says what is wrong (g++'s first `error:`, Python's closing `SyntaxError: ...`)."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors[0] if errors else lines[-1] if lines else "no message")[:200]


def _crash(run: Run) -> str:
    what = {"TLE": "timed out", "MLE": "ran out of memory", "OLE": "printed more than the output limit"}
    if run.status in what:
        return what[run.status]
    head = (run.message or "").split(":", 1)[0].strip()  # "killed by SIGSEGV", not the stderr after it
    return f"{run.status} ({head[:120]})" if head else run.status


def _verdicts(val: InputValidator, own: list[Run], runs: list[Run]) -> list[tuple[str, str | None]]:
    """One (kind, reason) per input, with the whole-validator failures applied to every input."""
    got = [_verdict(val, r) for r in runs]
    for k, run in enumerate(own):
        kind, reason = _verdict(val, run)
        if kind == "broken":
            return [(kind, reason)] * len(runs)
        if kind != "accept":
            why = f"validator {val.name} unusable: it does not accept the problem's own test input {k + 1} ({reason})"
            return [("broken", why)] * len(runs)
    if got and got[0][0] == "broken":  # a compile error shows on every run
        return got
    if not own and got and all(kind == "crash" for kind, _ in got):  # nothing shows it ever works
        why = f"validator {val.name} unusable: no verdict on any of {len(got)} inputs ({got[0][1]})"
        return [("broken", why)] * len(got)
    return got


def _first_reason(verdicts: list[list[tuple[str, Any]]], k: int) -> str | None:
    for kind, reason in (v[k] for v in verdicts):
        if kind == "broken":
            return reason
    return next((reason for kind, reason in (v[k] for v in verdicts) if kind != "accept"), None)
