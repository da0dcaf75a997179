"""open-r1/codeforces `generated_checker` as a checker program the evaluator can run.

open-r1 grades with the checker as `python checker.py input.txt correct_output.txt
solution_output.txt`, the three files in the working directory, and counts a test as passed only
when the checker exits cleanly and prints `1` (open-r1 `cf_scoring.py`:
`result['run']['code'] == 0 and result['run']['stdout'].strip() == "1"`).

The evaluator speaks the testlib protocol (`checker input output answer`; exit 0 accepted, 1 wrong
answer, 3 checker failure), so the checker is wrapped: the wrapper copies the files under open-r1's
names, runs the checker's source as `__main__` with open-r1's argv, and maps its verdict: `1` ->
accepted, `0` -> wrong answer, an exception or a non-zero exit -> wrong answer (as open-r1 scores
it), any other output -> checker failure (SE). All of it runs inside the evaluator's check box,
like any checker program.
"""

from __future__ import annotations

from microcoder.pipeline.schema import Checker

_WRAPPER = '''\
# open-r1/codeforces generated_checker, wrapped for the testlib protocol (see pipeline/sources/openr1_checker.py)
import contextlib, io, shutil, sys, traceback

CHECKER = {source!r}


def _stage(argv):
    """open-r1's file names in the working directory (some checkers open them by name)."""
    names = ["input.txt", "correct_output.txt", "solution_output.txt"]
    try:
        for src, dst in zip(argv, names):
            shutil.copyfile(src, dst)
        return names
    except OSError:
        return list(argv)


def main():
    inp, out, ans = sys.argv[1:4]  # testlib order: input, contestant output, answer
    args = _stage([inp, ans, out])
    sys.argv = ["checker.py", *args]
    captured = io.StringIO()
    code = 0
    try:
        with contextlib.redirect_stdout(captured):
            exec(compile(CHECKER, "checker.py", "exec"), {{"__name__": "__main__", "__file__": "checker.py"}})
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:
        sys.stderr.write("the checker raised on this output: " + traceback.format_exc(limit=2)[-300:])
        sys.exit(1)
    words = captured.getvalue().split()
    verdict = words[-1] if words else ""
    if code == 0 and verdict == "1":
        sys.exit(0)
    if verdict in ("0", "1") or code != 0:
        sys.stderr.write("rejected by the generated checker (printed %r, exit %s)" % (verdict, code))
        sys.exit(1)
    sys.stderr.write("the generated checker printed %r, neither 1 nor 0" % captured.getvalue()[:200])
    sys.exit(3)


main()
'''


def generated_checker(source: str) -> Checker:
    """A Python testlib-protocol checker program that runs open-r1's `generated_checker` source."""
    return Checker(kind="program", language="python", protocol="testlib", program=_WRAPPER.format(source=source))
