"""Code Jam judges through the Kattis protocol (pipeline/sources/codejam_judge.py).

Unit tests of the Python 2 -> 3 conversion on snippets, of which judges count as Python 2 (a Python 3
one is run as it is: converting it once let a contestant's line run as code), and of the wrapper's
verdicts (a judge crashing on an attempt is a wrong answer); then the archive's 7 judges (skipped
without ../shared/bench-data): each is adapted or refused with its specific reason; each adapted
custom judge, run as a plain subprocess, accepts the archive's answers (42) and rejects corrupted
ones (43); the interactive one plays a correct and two wrong solutions over pipes. Where Python 2.7
is installed the original judges run beside the adapted ones and must agree (verdict, message, and
for the seeded interactive judge every word it sends).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from microcoder.pipeline.sources.codejam_judge import (
    RUNTIME,
    Unsupported,
    adapt,
    follows_google_protocol,
    interactive_tests,
    is_python2,
    judge_kind,
    looks_like_google_judge,
    to_python3,
)

ARCHIVE_PARTS = ("codejam-archive",)
CUSTOM = {  # problem folder -> judge file
    "password_security": "dirty_as_abc.py",
    "word_search": "word_search.py",
    "grid_escape": "grid_escape.py",
    "imbalance_obviation": "custom_judge.py",
}
WAR = "war_of_the_words"
UNSUPPORTED = {"game_sort_part_1": "custom_judge.cc", "ring-preserving_networks": "judge.cc"}


def run_py2(source: str, argv: list[str] | None = None, stdin: str = "") -> tuple[int, dict]:
    """Converts `source`, runs it in-process under the runtime: (exit status, its globals)."""
    namespace: dict = {}
    exec(RUNTIME, namespace)
    converted = to_python3(source)
    captured: dict = {}
    code = converted + "\nimport sys as _s\n_s.modules['__captured__'] = globals()\n"
    old_stdin = sys.stdin
    sys.stdin = __import__("io").StringIO(stdin)
    try:
        status = namespace["run_judge"](compile(code, "judge.py", "exec"), argv or ["judge.py"], True)
    finally:
        sys.stdin = old_stdin
        captured = sys.modules.pop("__captured__", {})
    return status, captured


# --- conversion ---------------------------------------------------------------------------------

def test_integer_division_floors_on_ints_only():
    status, g = run_py2("a = 7 / 2\nb = -7 / 2\nc = 7.0 / 2\nd = 1 + 9 / 2 * 2\ne = 10\ne /= 4\nf = 7 // 2\n")
    assert status == 0
    assert (g["a"], g["b"], g["c"], g["d"], g["e"], g["f"]) == (3, -4, 3.5, 9, 2, 3)


def test_future_division_keeps_true_division():
    src = "from __future__ import division\na = 7 / 2\n"
    assert "_py2_div" not in to_python3(src)
    assert run_py2(src)[1]["a"] == 3.5


def test_print_to_stderr_and_exit_status(capsys):
    status, _ = run_py2("import sys\nprint >> sys.stderr, 'bad', 3\nprint 'out'\nsys.exit(1)\n")
    captured = capsys.readouterr()
    assert status == 1 and captured.err == "bad 3\n" and captured.out == "out\n"


def test_xrange_range_filter_map_dict_methods_give_python2_values():
    src = ("r = range(3)\nx = [i for i in xrange(3)]\nf = filter(None, ['a', '', 'b'])\n"
           "empty = filter(None, ['', ''])\nm = map(int, ['1', '2'])\nd = {'k': 1}\n"
           "items = sorted(d.iteritems())\nkeys = d.keys()\nhas = d.has_key('k')\n"
           "z = zip([1], [2])\n")
    _, g = run_py2(src)
    assert g["r"] == [0, 1, 2] and g["x"] == [0, 1, 2]
    assert g["f"] == ["a", "b"] and g["empty"] == [] and not g["empty"]  # a list: falsy when empty
    assert g["m"] == [1, 2] and g["items"] == [("k", 1)] and g["keys"] == ["k"] and g["has"] is True
    assert g["z"] == [(1, 2)]


def test_file_reads_bytes_as_latin1_without_newline_translation(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"a\r\nb\xff\n")
    _, g = run_py2(f"with file({str(path)!r}) as f:\n  text = f.read()\n")
    assert g["text"] == "a\r\nb\xff\n"


def test_raw_input_and_python2_round_and_except_syntax():
    src = ("try:\n  raise ValueError('x')\nexcept ValueError, e:\n  msg = str(e)\n"
           "line = raw_input()\nr1 = round(2.5)\nr2 = round(-0.5)\nr3 = round(0.125, 2)\nr4 = round(2.675, 2)\nn = 10L\n")
    _, g = run_py2(src, stdin="hello\n")
    assert g["msg"] == "x" and g["line"] == "hello"
    assert (g["r1"], g["r2"], g["r3"], g["r4"], g["n"]) == (3.0, -1.0, 0.13, 2.67, 10)


def test_seeded_random_replays_python2_sequences():
    # Values printed by Python 2.7.18 for the same calls.
    src = ("import random\nrandom.seed(314159)\nl = range(10)\nrandom.shuffle(l)\n"
           "a = [random.randrange(0, 1000) for _ in xrange(3)]\nb = random.randint(1, 6)\n"
           "c = random.choice('abcdef')\n")
    _, g = run_py2(src)
    assert (g["l"], g["a"], g["b"], g["c"]) == PY2_RANDOM_VALUES


PY2_RANDOM_VALUES = ([5, 4, 3, 6, 7, 9, 8, 0, 2, 1], [509, 154, 975], 2, "d")


def test_is_python2():
    assert is_python2("print 'x'\n")
    assert is_python2("for i in xrange(3):\n  pass\n")
    assert not is_python2("print('x', file=__import__('sys').stderr)\nobj.file(1)\n")


def test_python2_builtins_and_statements_that_compile_as_python3_are_python2():
    assert is_python2("import sys\nprint >> sys.stderr, 'bad'\n")  # a tuple in Python 3
    assert is_python2("data = file('x').read()\n")
    assert is_python2("t = reduce(lambda a, b: a + b, [1, 2])\n")
    assert is_python2("def f(d):\n  return d.has_key(1) or list(d.iteritems())\n")


def test_python3_that_mentions_python2_names_is_not_python2():
    """Only code counts, and only a name the source does not define or import: comments, strings,
    `from functools import reduce`, a parameter called `file`, `six.iteritems(d)` are Python 3."""
    assert not is_python2(REDUCE_JUDGE)
    assert not is_python2("def cmp(a, b):\n  return a < b\nprint(cmp(1, 2), 'xrange(3) long(1)')\n")
    assert not is_python2("def f(file):\n  return file.read()\n")
    assert not is_python2("import six\nfor k, v in six.iteritems({}):\n  pass\n")
    assert not is_python2("from functools import *\nprint(reduce(max, [1, 2]))\n")  # may be defined


# The reviewer's judge: Python 3, using reduce and saying "file (" in a comment; it reads the
# contestant's guess with input(). Converted, input() became eval(input()): the contestant's line ran.
REDUCE_JUDGE = """import sys
from functools import reduce
# Reads the output file (attempt) of the contestant.
total = reduce(lambda a, b: a + b, [1, 2, 3])
print(total, flush=True)
try:
    guess = int(input())
except ValueError:
    sys.exit(1)
sys.exit(0 if guess == 42 else 1)
"""
ESCAPE = '__import__("sys").exit(0)\n'


def test_python2_input_reads_a_literal_and_never_runs_the_line():
    assert "eval" not in to_python3("x = input()\ny = raw_input()\n")
    _, g = run_py2("x = input()\ny = raw_input()\n", stdin="[1, 'a']\n__import__('os')\n")
    assert g["x"] == [1, "a"] and g["y"] == "__import__('os')"
    with pytest.raises(ValueError):
        run_py2("x = input()\nimport sys\nsys.exit(0)\n", stdin=ESCAPE)


def test_a_python3_judge_is_not_converted_and_the_contestant_cannot_run_code(tmp_path):
    judge = tmp_path / "judge.py"
    judge.write_text(REDUCE_JUDGE)
    language, program = adapt(judge, interactive=True)
    assert "PYTHON2 = False" in program and " eval(input" not in program
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    cmd = kattis_war(prog, 0, tmp_path)
    for line, expected in ((ESCAPE, 43), ("7\n", 43), ("42\n", 42)):
        r = subprocess.run(cmd, input=line, capture_output=True, text=True)
        assert (r.returncode, r.stdout) == (expected, "6\n"), r.stderr


def test_a_python3_judge_gets_python3_builtins(tmp_path):
    """round, / and open keep their Python 3 meaning: the Python 2 stand-ins are for converted judges."""
    judge = tmp_path / "judge.py"
    judge.write_text("import builtins, random, sys\n"
                     "ok = round(2.5) == 2 and 7 / 2 == 3.5 and not hasattr(random, '_py2_randbelow')\n"
                     "ok = ok and open is builtins.open and open(sys.argv[2]).read() == '5\\n'\n"
                     "sys.exit(0 if ok else 1)\n")
    prog = tmp_path / "prog.py"
    prog.write_text(adapt(judge, interactive=False)[1])
    (tmp_path / "f").write_text("")
    assert kattis_custom(prog, tmp_path / "f", tmp_path / "f", "5\n", tmp_path / "fb") == (42, "")


def test_judge_kind_and_protocol_note():
    assert judge_kind({"validation": "custom interactive"}) == "interactive"
    assert judge_kind({"validation": "custom score"}) == "custom"
    assert judge_kind({"validation": "default"}) is None and judge_kind({}) is None
    assert follows_google_protocol("# Note that the custom judge does not follow problemtools specifications.\n")
    assert not follows_google_protocol("validation: custom\n")


def test_google_judges_by_the_shape_of_their_code():
    assert looks_like_google_judge("def FindError(unused_self, input_file, output_file, attempt):\n  pass\n")
    assert looks_like_google_judge('#include "recruiting/arena/problem_dev/cocolib/cc/reader.h"\n')
    assert not looks_like_google_judge("import sys\n# Code Jam's FindError(self, a, b, c) protocol\n")
    assert not looks_like_google_judge('#include "testlib.h"\nint main(int argc, char** argv) {}\n')


def test_interactive_tests_one_per_test_set():
    tests = interactive_tests("<h3>Test set 1 (Visible)</h3> ... <h3>Test Set 2 (Hidden Verdict)</h3>")
    assert [(t.input, t.output, t.group) for t in tests] == [
        ("0\n", "", "secret/test_set_1"), ("1\n", "", "secret/test_set_2")]
    with pytest.raises(Unsupported):
        interactive_tests("no test sets here")


def test_adapted_custom_judge_protocol(tmp_path):
    judge = tmp_path / "judge.py"
    judge.write_text("import sys\nif __name__ == '__main__':\n"
                     "  if file(sys.argv[2]).read() != file(sys.argv[3]).read():\n"
                     "    print >> sys.stderr, 'differs from', sys.argv[3].split('/')[-1]\n    sys.exit(1)\n")
    language, program = adapt(judge, interactive=False)
    assert language == "python"
    prog = tmp_path / "prog.py"
    prog.write_text(program)
    (tmp_path / "in").write_text("")
    (tmp_path / "ans").write_text("42\n")
    assert kattis_custom(prog, tmp_path / "in", tmp_path / "ans", "42\n", tmp_path / "fb")[0] == 42
    code, message = kattis_custom(prog, tmp_path / "in", tmp_path / "ans", "41\n", tmp_path / "fb2")
    assert (code, message) == (43, "differs from ans\n")


def test_a_judge_that_crashes_on_an_attempt_gives_a_wrong_answer(tmp_path):
    """Google's rule: a judge failing on an attempt is a wrong answer (43, the traceback's end in the
    feedback), not a judge failure a submission could aim for."""
    judge = tmp_path / "judge.py"
    judge.write_text("import sys\nif __name__ == '__main__':\n  print 1 / int(file(sys.argv[2]).read())\n")
    prog = tmp_path / "prog.py"
    prog.write_text(adapt(judge, interactive=False)[1])
    (tmp_path / "f").write_text("")
    code, message = kattis_custom(prog, tmp_path / "f", tmp_path / "f", "0\n", tmp_path / "fb")
    assert code == 43 and "ZeroDivisionError" in message and 'File "judge.py", line 3' in message
    assert kattis_custom(prog, tmp_path / "f", tmp_path / "f", "x\n", tmp_path / "fb2")[0] == 43


def test_the_wrapper_failing_before_the_judge_runs_is_a_judge_failure(tmp_path):
    judge = tmp_path / "judge.py"
    judge.write_text("import sys\nsys.exit(0)\n")
    prog = tmp_path / "prog.py"
    prog.write_text(adapt(judge, interactive=False)[1])
    (tmp_path / "f").write_text("")
    (tmp_path / "fb").mkdir()
    for argv in ([str(tmp_path / "f")], [str(tmp_path / "f"), str(tmp_path / "missing"), f"{tmp_path}/fb/"]):
        r = subprocess.run([sys.executable, str(prog), *argv], input="", capture_output=True, text=True)
        assert r.returncode == 1, r.stderr


def test_cpp_and_unparsable_judges_are_unsupported(tmp_path):
    cc = tmp_path / "judge.cc"
    cc.write_text('#include "recruiting/arena/problem_dev/cocolib/cc/reader.h"\nint main() {}\n')
    with pytest.raises(Unsupported, match="cocolib headers .*reader.h.*does not ship"):
        adapt(cc, interactive=False)
    bad = tmp_path / "judge.py"
    bad.write_text("def f(:\n")
    with pytest.raises(Unsupported, match="Python 2"):
        adapt(bad, interactive=False)


# --- the archive's judges -----------------------------------------------------------------------

def kattis_custom(prog: Path, inp: Path, ans: Path, attempt: str, feedback: Path) -> tuple[int, str]:
    feedback.mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, str(prog), str(inp), str(ans), f"{feedback}/"],
                       input=attempt.encode("latin-1"), capture_output=True)
    message = feedback / "judgemessage.txt"
    assert r.returncode in (42, 43), r.stderr.decode(errors="replace")
    return r.returncode, message.read_text() if message.exists() else ""


@pytest.fixture(scope="module")
def archive(bench_data) -> Path:
    root = bench_data.joinpath(*ARCHIVE_PARTS)
    if not root.is_dir():
        pytest.skip("codejam-archive is not in bench-data")
    return root


def package(archive: Path, name: str) -> Path:
    found = [p for p in archive.glob(f"**/{name}") if (p / "problem.yaml").is_file()]
    assert len(found) == 1, found
    return found[0]


def kind_of(pkg: Path) -> str | None:
    """judge_kind from the `validation:` line (some archive problem.yaml are not YAML:
    `name: Game Sort: Part 1`; kattis.py repairs those)."""
    line = re.search(r"^validation:(.*)$", (pkg / "problem.yaml").read_text(), re.MULTILINE)
    return judge_kind({"validation": line.group(1).strip()} if line else {})


def judge_file(pkg: Path) -> Path:
    (judge,) = [f for f in (pkg / "output_validators").glob("*/*") if f.is_file()]
    return judge


def adapted(archive: Path, name: str, tmp_path: Path) -> Path:
    pkg = package(archive, name)
    yaml_text = (pkg / "problem.yaml").read_text()
    assert follows_google_protocol(yaml_text)
    language, program = adapt(judge_file(pkg), interactive=kind_of(pkg) == "interactive")
    assert language == "python"
    prog = tmp_path / f"{name}.py"
    prog.write_text(program)
    return prog


def cases(answer: str) -> list[str]:
    """The answer file split before each "Case #n:"."""
    return re.split(r"(?=^Case #\d+:)", answer, flags=re.MULTILINE)[1:]


def change_one_token(answer: str) -> str:
    """The first answer token after "Case #1:" (on its line or the next) becomes "X"."""
    return re.sub(r"\A(Case #1:\s+)\S+", r"\1X", answer)


def _first(blocks: list[str], pred) -> int:
    return next(i for i, b in enumerate(blocks) if pred(b))


def semantic_corruption(name: str, inp: str, answer: str) -> str:
    """One case's answer replaced by a well-formed but wrong one."""
    blocks = cases(answer)
    tokens = inp.split()
    if name == "grid_escape":  # a grid exists: claiming IMPOSSIBLE is wrong
        i = _first(blocks, lambda b: b.split()[2] == "POSSIBLE")
        blocks[i] = f"Case #{i + 1}: IMPOSSIBLE\n"
    elif name == "password_security":  # an alphabet exists: claiming IMPOSSIBLE is wrong
        i = _first(blocks, lambda b: b.split()[2] != "IMPOSSIBLE")
        blocks[i] = f"Case #{i + 1}: IMPOSSIBLE\n"
    elif name == "imbalance_obviation":  # n >= 2 balls all on the left break the scale
        i = _first(blocks, lambda b: len(b.split()[2]) >= 2)
        blocks[i] = f"Case #{i + 1}: {'L' * len(blocks[i].split()[2])}\n"
    elif name == "word_search":  # a 1x1 grid holds no "I/O", the case asks for N >= 1
        ns = [int(n) for n in tokens[2::2]]
        i = _first(range(len(ns)), lambda k: ns[k] >= 1)
        blocks[i] = f"Case #{i + 1}:\nI\n"
    return "".join(blocks)


def data_pairs(pkg: Path) -> list[tuple[Path, Path]]:
    return [(i, i.with_suffix(".ans")) for i in sorted(pkg.glob("data/**/*.in"))]


@pytest.mark.parametrize("name", sorted(CUSTOM))
def test_archive_custom_judge_accepts_answers_and_rejects_corruptions(archive, tmp_path, name):
    prog = adapted(archive, name, tmp_path)
    pairs = data_pairs(package(archive, name))
    assert pairs
    for n, (inp, ans) in enumerate(pairs):
        answer = ans.read_text()
        assert kattis_custom(prog, inp, ans, answer, tmp_path / f"ok{n}") == (42, ""), inp
        for label, bad in (("token", change_one_token(answer)),
                           ("semantic", semantic_corruption(name, inp.read_text(), answer))):
            assert bad != answer
            code, message = kattis_custom(prog, inp, ans, bad, tmp_path / f"{label}{n}")
            assert code == 43 and message.startswith("Case #"), (inp, label, message)
        if len(cases(answer)) > 1:  # one case dropped
            code, message = kattis_custom(prog, inp, ans, "".join(cases(answer)[:-1]), tmp_path / f"d{n}")
            assert (code, message) == (43, "Invalid attempt file: Too few cases.\n")


@pytest.mark.parametrize("name", sorted(UNSUPPORTED))
def test_archive_cocolib_judges_are_unsupported(archive, name):
    judge = judge_file(package(archive, name))
    assert judge.name == UNSUPPORTED[name]
    with pytest.raises(Unsupported, match=r"includes Google's internal cocolib headers \(recruiting/arena/"):
        adapt(judge, interactive=name == "ring-preserving_networks")


def test_archive_usable_judges(archive):
    """5 of the 7 Code Jam judges are usable (the 4 Python custom ones and war_of_the_words)."""
    usable = []
    for judge in sorted(archive.glob("**/output_validators/*/*")):
        pkg = judge.parents[2]
        try:
            adapt(judge, interactive=kind_of(pkg) == "interactive")
            usable.append(pkg.name)
        except Unsupported:
            pass
    assert sorted(usable) == sorted([*CUSTOM, WAR])


# --- war_of_the_words, interactive --------------------------------------------------------------

# Our solutions of War of the Words (bench/codejam_solutions/, also judged by bench/codejam_archive.py):
# the right one logs every robot word it sees to stderr, which `play` compares between judges.
SOLUTIONS = Path(__file__).resolve().parents[1] / "bench" / "codejam_solutions"
WAR_SOLUTION = (SOLUTIONS / "war_of_the_words.py").read_text()
WAR_ALWAYS_SAME = (SOLUTIONS / "war_of_the_words_wrong.py").read_text()

WAR_BAD_WORD = 'input()\nprint("HELLO", flush=True)\nprint(input())\n'


def play(judge_cmd: list[str], solution: str, tmp_path: Path) -> tuple[int, str]:
    """Runs the judge and a solution connected by pipes: (judge exit, robot words the solution saw)."""
    log = tmp_path / "seen.txt"
    judge = subprocess.Popen(judge_cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL)
    with log.open("w") as seen:
        sol = subprocess.Popen([sys.executable, "-c", solution], stdin=judge.stdout, stdout=judge.stdin,
                               stderr=seen)
        judge.stdin.close()
        judge.stdout.close()
        sol.wait()
        code = judge.wait()
    return code, log.read_text()


def kattis_war(prog: Path, index: int, tmp_path: Path) -> list[str]:
    inp = tmp_path / f"{index}.in"
    inp.write_text(f"{index}\n")
    ans = tmp_path / "empty.ans"
    ans.write_text("")
    feedback = tmp_path / f"fb{index}"
    feedback.mkdir(exist_ok=True)
    return [sys.executable, str(prog), str(inp), str(ans), f"{feedback}/"]


def test_war_of_the_words_correct_and_wrong_solutions(archive, tmp_path):
    prog = adapted(archive, WAR, tmp_path)
    cmd = kattis_war(prog, 0, tmp_path)
    code, seen = play(cmd, WAR_SOLUTION, tmp_path)
    assert code == 42, (tmp_path / "fb0" / "judgemessage.txt").read_text()
    assert len(seen.split()) == 50 * 100
    code, _ = play(cmd, WAR_ALWAYS_SAME, tmp_path)
    assert code == 43
    assert "failed with too few points" in (tmp_path / "fb0" / "judgemessage.txt").read_text()
    code, _ = play(cmd, WAR_BAD_WORD, tmp_path)
    assert code == 43
    assert "Input has invalid character in word." in (tmp_path / "fb0" / "judgemessage.txt").read_text()


def test_war_of_the_words_test_set_index_is_checked(archive, tmp_path):
    prog = adapted(archive, WAR, tmp_path)
    (tmp_path / "bad.in").write_text("zero\n")
    r = subprocess.run([sys.executable, str(prog), str(tmp_path / "bad.in"), str(tmp_path / "bad.in"),
                        f"{tmp_path}/"], input="", capture_output=True, text=True)
    assert r.returncode == 1 and "test set index" in r.stderr


# --- against the original judges under Python 2.7, where installed -----------------------------

def python2() -> str:
    candidates = [os.environ.get("PYTHON2", ""), shutil.which("python2.7") or "",
                  *sorted(str(p) for p in Path.home().glob(".pyenv/versions/2.7*/bin/python2.7"))]
    for c in candidates:
        if c and subprocess.run([c, "-c", "print 1"], capture_output=True).returncode == 0:
            return c
    pytest.skip("no working Python 2.7")


def test_python2_random_values_match():
    py2 = python2()
    script = ("import random\nrandom.seed(314159)\nl = range(10)\nrandom.shuffle(l)\n"
              "print repr((l, [random.randrange(0, 1000) for _ in xrange(3)], random.randint(1, 6), "
              "random.choice('abcdef')))\n")
    out = subprocess.run([py2, "-c", script], capture_output=True, text=True, check=True).stdout
    assert eval(out) == PY2_RANDOM_VALUES


@pytest.mark.parametrize("name", sorted(CUSTOM))
def test_custom_judges_agree_with_python2_originals(archive, tmp_path, name):
    py2 = python2()
    prog = adapted(archive, name, tmp_path)
    judge = judge_file(package(archive, name))
    for n, (inp, ans) in enumerate(data_pairs(package(archive, name))):
        answer = ans.read_text()
        for k, attempt in enumerate((answer, change_one_token(answer),
                                     semantic_corruption(name, inp.read_text(), answer))):
            path = tmp_path / f"attempt{n}_{k}"
            path.write_text(attempt)
            original = subprocess.run([py2, str(judge), str(inp), str(path), str(ans)],
                                      capture_output=True, text=True)
            code, message = kattis_custom(prog, inp, ans, attempt, tmp_path / f"fb{n}_{k}")
            assert (code, message) == ({0: 42, 1: 43}[original.returncode], original.stderr)


def test_war_of_the_words_replays_the_python2_judge(archive, tmp_path):
    py2 = python2()
    prog = adapted(archive, WAR, tmp_path)
    judge = judge_file(package(archive, WAR))
    original = play([py2, str(judge), "0"], WAR_SOLUTION, tmp_path)
    assert original[0] == 0
    assert play(kattis_war(prog, 0, tmp_path), WAR_SOLUTION, tmp_path) == (42, original[1])


# --- attacks on the adapted judges (issue 35) ---------------------------------------------------------
def adapted_program(tmp_path: Path, judge_source: str, interactive: bool, name: str = "judge.py") -> Path:
    judge = tmp_path / name
    judge.write_text(judge_source)
    prog = tmp_path / f"prog_{name}"
    prog.write_text(adapt(judge, interactive=interactive)[1])
    return prog


def talk(prog: Path, tmp_path: Path, contestant_output: bytes, index: int = 0) -> tuple[int, str]:
    """Runs an adapted interactive judge on test set `index`, the contestant's whole output given at once
    (stdin then closed): (exit code, what the judge sent)."""
    inp = tmp_path / "set.in"
    inp.write_text(f"{index}\n")
    (tmp_path / "fb").mkdir(exist_ok=True)
    r = subprocess.run([sys.executable, str(prog), str(inp), str(inp), f"{tmp_path}/fb/"], input=contestant_output,
                       capture_output=True, timeout=60)
    return r.returncode, r.stdout.decode("latin-1")


@pytest.mark.parametrize("py2", [True, False])
def test_an_unseeded_judge_draws_anew_each_run(tmp_path, py2):
    """A judge that does not seed gets a fresh seed from the OS per run (the Python 2 stand-in too), so
    a program cannot replay what an earlier run was sent. A judge seeding a constant (Google's
    `random.seed(314159 + test_number)`) replays by design, from the test set index alone."""
    body = "import random, sys\nprint(random.randint(1, 10**18))\nsys.stdout.flush()\n"
    prog = adapted_program(tmp_path, ("import sys\nx = xrange(1)\n" if py2 else "") + body, interactive=True)
    draws = {talk(prog, tmp_path, b"")[1] for _ in range(3)}
    assert len(draws) == 3, draws


@pytest.mark.parametrize("line", [b"[" * 200000, b"9" * 100000, b"(" * 5000 + b")" * 5000, b"__import__('os')",
                                  b"1e999", b"", b"5 junk"])
def test_a_python2_judges_input_on_hostile_lines_is_a_wrong_answer(tmp_path, line):
    """Python 2's `input()` read a literal: on a line that is none, too deep or too long, the judge fails
    on the attempt: 43 (a wrong answer), never 1 (the wrapper failing, a judge error) and never 42."""
    prog = adapted_program(tmp_path, "import sys\nx = input()\nprint 'got', x\nsys.exit(0 if x == 5 else 1)\n",
                           interactive=True)
    assert talk(prog, tmp_path, line + b"\n")[0] == 43
    assert talk(prog, tmp_path, b"5")[0] == 42  # a last line without its newline is still read


def test_an_interactive_judge_left_without_an_answer_gives_a_wrong_answer(tmp_path):
    """The contestant closes its output (or exits) before the judge is done: EOFError in the judge, 43."""
    prog = adapted_program(tmp_path, "import sys\nfor i in range(3):\n  print(i)\n  sys.stdout.flush()\n"
                           "  if int(input()) != i:\n    sys.exit(1)\n", interactive=True)
    assert talk(prog, tmp_path, b"0\n1\n2\n")[0] == 42
    assert talk(prog, tmp_path, b"0\n1\n")[0] == 43
    assert talk(prog, tmp_path, b"0\n1\n2")[0] == 42  # the last line without its newline


def test_case_lines_reordered_renumbered_split_or_added_do_not_pass_googles_template(tmp_path):
    """A Google-style custom judge parsing `Case #i: y` lines, converted from Python 2: only the
    expected case lines in order pass; extra, reordered, renumbered or huge-numbered cases are 43."""
    judge = (
        "import re, sys\n"
        "def Lines(name):\n"
        "  return [l for l in file(name).read().split('\\n') if l.strip()]\n"
        "out, exp = Lines(sys.argv[2]), Lines(sys.argv[3])\n"
        "if len(out) != len(exp):\n"
        "  print >> sys.stderr, 'wrong number of cases'\n  sys.exit(1)\n"
        "for i, (o, e) in enumerate(zip(out, exp)):\n"
        "  m = re.match(r'^Case #(\\d+): (.*)$', o)\n"
        "  if not m or int(m.group(1)) != i + 1 or m.group(2).split() != e.split(': ', 1)[1].split():\n"
        "    print >> sys.stderr, 'case %d wrong' % (i + 1)\n    sys.exit(1)\n")
    prog = adapted_program(tmp_path, judge, interactive=False)
    (tmp_path / "in").write_text("2\n")
    (tmp_path / "ans").write_text("Case #1: 3\nCase #2: 7\n")
    right = "Case #1: 3\nCase #2: 7\n"
    assert kattis_custom(prog, tmp_path / "in", tmp_path / "ans", right, tmp_path / "fb0")[0] == 42
    for k, attempt in enumerate(["Case #2: 7\nCase #1: 3\n", "Case #1: 3\nCase #2: 7\nCase #3: 7\n",
                                 "Case #1: 3\nCase #1: 7\n", "Case #1: 3\nCase #18446744073709551618: 7\n",
                                 "Case #1:\n3\nCase #2: 7\n", "case #1: 3\ncase #2: 7\n", "Case #1: 3\n",
                                 "Case #1: 3\nCase #\u0662: 7\n".encode().decode("latin-1"),  # a UTF-8 digit: bytes to Python 2
                                 "Case #1: 3\nCase #2: 7\x00\n"]):
        assert kattis_custom(prog, tmp_path / "in", tmp_path / "ans", attempt, tmp_path / f"fb{k + 1}")[0] == 43, attempt
