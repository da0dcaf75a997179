"""MicroCoder-Evaluator vs LiveCodeBench's evaluator on the same (problem, solution) pairs.

    python bench/evaluator_vs_lcb.py                       # defaults: a few minutes on 2 cores
    python bench/evaluator_vs_lcb.py --workers 2 --timeout 3 --lcd-limit 200 --he-problems 20 --he-samples 10

Datasets (from ../shared/bench-data, never copied):
  leetcode   LeetCodeDataset v0.2.0 test: reference completions; input_output keyword literals
             converted to positional JSON with `ast` (microcoder.pipeline.sources.pyliterals, no eval).
             ListNode / TreeNode problems are kept (ours builds them from the JSON lists).
  humaneval  HumanEval + CodeGen-16B samples (first N problems x M samples); tests = the
             `assert candidate(...) == literal` lines (microcoder.pipeline.sources.humaneval).
  codeforces Codeforces stdio tests with small correct and wrong solutions written here.
Ground truth: LeetCode / HumanEval pairs are labelled by their *official* test code
(`check(candidate)`) run in our sandbox; Codeforces solutions are labelled by construction.

Both evaluators get the same pairs, the same worker count and the same per-test timeout; each
stops at a submission's first failing test. LiveCodeBench (`nvidia-livecodebench`, installed with
--no-deps) executes code in-process, so its run is wrapped in bubblewrap (read-only filesystem,
no network). Also measured: a warm pre-forked interpreter vs a fresh sandboxed process per test.

Batch shapes (`--shapes rl,heavy`), timed as whole processes from spawn to exit: `microcoder
evaluate` (CLI imports, judges' start, reading the jsonl inputs, judging, writing verdicts) against
a fresh Python process running LiveCodeBench's codegen_metrics (its imports, its process pool):
  rl     120 LeetCode contest problems x 8 submissions (4 right: the LeetCodeDataset reference
         with a distinct comment; 4 wrong: result off by one / reversed, raises, returns None, a
         syntax error) x the first 5 tests (deepseek-ai's 2023-07..2024-01 contest set, whose
         problems LeetCodeDataset has references for);
  heavy  the same 120 problems x the reference x every test (about 100 each, 12,000).
Alongside wall time, the CPU seconds of each whole process tree (a cpuacct cgroup per run, as
root): a machine shared with other jobs inflates wall time far more than CPU time.

    python bench/evaluator_vs_lcb.py --shapes rl,heavy --repeat 3
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline.evaluator import Evaluator, Submission  # noqa: E402
from microcoder.pipeline.schema import Checker, Problem, TestCase  # noqa: E402

DATA = ROOT.parent / "shared" / "bench-data"
LCB_CODES = {-1: "TLE", -2: "WA", -3: "TLE", -4: "RE", -5: "SE", False: "WA"}


# --- Codeforces solutions written for this benchmark: {problem index: {name: (correct?, code)}} ---------
CF_SOLUTIONS: dict[int, dict[str, tuple[bool, str]]] = {
    0: {  # min and max of two integers
        "input": (True, "t = int(input())\nfor _ in range(t):\n    x, y = map(int, input().split())\n"
                        "    print(min(x, y), max(x, y))\n"),
        "buffer": (True, "import sys\nd = sys.stdin.buffer.read().split()\nout = []\n"
                         "for i in range(int(d[0])):\n    x, y = int(d[1 + 2 * i]), int(d[2 + 2 * i])\n"
                         "    out.append(f'{min(x, y)} {max(x, y)}')\nsys.stdout.write('\\n'.join(out) + '\\n')\n"),
        "swapped": (False, "t = int(input())\nfor _ in range(t):\n    x, y = map(int, input().split())\n"
                           "    print(max(x, y), min(x, y))\n"),
    },
    2: {  # do two chords of a clock intersect? ("YES"/"NO" in any case)
        "upper": (True, "def inside(a, b, x):\n    return min(a, b) < x < max(a, b)\n"
                        "for _ in range(int(input())):\n    a, b, c, d = map(int, input().split())\n"
                        "    print('YES' if inside(a, b, c) != inside(a, b, d) else 'NO')\n"),
        "lower": (True, "def inside(a, b, x):\n    return min(a, b) < x < max(a, b)\n"
                        "for _ in range(int(input())):\n    a, b, c, d = map(int, input().split())\n"
                        "    print('yes' if inside(a, b, c) != inside(a, b, d) else 'no')\n"),
        "always-no": (False, "for _ in range(int(input())):\n    input()\n    print('NO')\n"),
    },
    3: {  # cut a binary string into the fewest pieces that sort
        "thread": (True, "import sys, threading\ndef main():\n    for _ in range(int(sys.stdin.readline())):\n"
                         "        s = sys.stdin.readline().strip()\n"
                         "        k = sum(s[i] != s[i + 1] for i in range(len(s) - 1)) + 1\n"
                         "        print(k - 1 if '01' in s else k)\nthreading.Thread(target=main).start()\n"),
        "plain": (True, "for _ in range(int(input())):\n    s = input().strip()\n"
                        "    k = sum(a != b for a, b in zip(s, s[1:])) + 1\n    print(k - 1 if '01' in s else k)\n"),
        "off-by-one": (False, "for _ in range(int(input())):\n    s = input().strip()\n"
                              "    print(sum(a != b for a, b in zip(s, s[1:])) + 1)\n"),
    },
    9: {  # coin game: Alice wins iff the number of up coins is odd
        "readline": (True, "import sys\ninput = sys.stdin.readline\nfor _ in range(int(input())):\n    input()\n"
                           "    print('YES' if input().count('U') % 2 else 'NO')\n"),
        "parity-of-n": (False, "for _ in range(int(input())):\n    n = int(input())\n    input()\n"
                               "    print('YES' if n % 2 else 'NO')\n"),
    },
    21: {  # phone screens for 1x1 and 2x2 icons
        "open0": (True, "d = open(0).read().split()\nfor i in range(int(d[0])):\n"
                        "    x, y = int(d[1 + 2 * i]), int(d[2 + 2 * i])\n"
                        "    print(max((y + 1) // 2, (x + 4 * y + 14) // 15))\n"),
        "area-only": (False, "d = open(0).read().split()\nfor i in range(int(d[0])):\n"
                             "    x, y = int(d[1 + 2 * i]), int(d[2 + 2 * i])\n    print((x + 4 * y + 14) // 15)\n"),
    },
    22: {  # symmetric decoding
        "main-guard": (True, "def main():\n    for _ in range(int(input())):\n        input()\n        b = input().strip()\n"
                             "        r = sorted(set(b))\n        m = {c: r[-1 - i] for i, c in enumerate(r)}\n"
                             "        print(''.join(m[c] for c in b))\nif __name__ == '__main__':\n    main()\n"),
        "reversed": (False, "for _ in range(int(input())):\n    input()\n    print(input().strip()[::-1])\n"),
        "endless": (False, "while True:\n    pass\n"),
    },
    37: {  # strong password check
        "sorted": (True, "ans = []\nfor _ in range(int(input())):\n    input()\n    s = input().strip()\n"
                         "    ans.append('YES' if list(s) == sorted(s) else 'NO')\nprint(*ans, sep='\\n')\n"
                         "import sys\nsys.exit(0)\n"),
        "letters-only": (False, "for _ in range(int(input())):\n    input()\n    s = input().strip()\n"
                                "    letters = [c for c in s if c.isalpha()]\n"
                                "    print('YES' if letters == sorted(letters) else 'NO')\n"),
    },
}


@dataclass
class Pair:
    dataset: str
    problem: Problem
    sub: Submission
    lcb_sample: dict
    truth: bool | None = None  # does the solution really solve the problem?
    truth_note: str = ""
    official: str | None = None  # official test program (labels LeetCode / HumanEval pairs)
    ours: object = None
    lcb: dict = field(default_factory=dict)


def lcb_sample(problem: Problem) -> dict:
    io = {"inputs": [t.input for t in problem.tests], "outputs": [t.output for t in problem.tests]}
    if problem.style == "functional":
        io["fn_name"] = problem.entry_point.split(".")[-1]
    return {"input_output": json.dumps(io)}


# --- datasets -------------------------------------------------------------------------------------------
def leetcode_pairs(limit: int, timeout: float, split: str = "test") -> tuple[list[Pair], Counter]:
    from microcoder.pipeline.sources.pyliterals import (
        NotLiteral,
        encode_args,
        find_signature,
        parse_call_text,
        parse_literal,
        to_json,
    )

    path = DATA / "leetcodedataset" / f"LeetCodeDataset-v0.2.0-{split}.jsonl.gz"
    skipped: Counter = Counter()
    pairs = []
    for rec in [json.loads(line) for line in gzip.open(path, "rt")][:limit]:
        method = rec["entry_point"].split(".")[-1]
        code = rec["prompt"] + "\n" + rec["completion"]
        sig = find_signature(code, method, "Solution")
        if sig is None:
            skipped["no signature"] += 1
            continue
        tests = []
        for item in rec["input_output"]:
            try:
                args = parse_call_text(item["input"], sig.params)
                tests.append(TestCase(encode_args(args), to_json(parse_literal(item["output"]))))
            except NotLiteral as e:
                skipped[f"test not literal: {str(e)[:50]}"] += 1
        if not tests:
            skipped["no convertible test"] += 1
            continue
        p = Problem(id=rec["task_id"], source="leetcodedataset", statement="", style="functional",
                    entry_point=rec["entry_point"], tests=tests, time_limit_s=timeout)
        official = f"{code}\n{rec['test']}\ncheck({rec['entry_point']})\n"
        pairs.append(Pair("leetcode", p, Submission(p.id, p.id, "python", code), lcb_sample(p), official=official))
    return pairs, skipped


def humaneval_pairs(n_problems: int, n_samples: int, timeout: float) -> tuple[list[Pair], Counter]:
    from microcoder.pipeline.sources import humaneval

    tasks = [json.loads(line) for line in gzip.open(DATA / "humaneval" / "HumanEval.jsonl.gz", "rt")]
    # The sample file is in another order and CodeT stripped the doctest examples from its prompts:
    # match each task to the sample prompt whose last `def` is the task's entry point.
    by_entry = {}
    for line in open(DATA / "humaneval" / "codegen16b_samples.jsonl"):
        smp = json.loads(line)
        by_entry[re.findall(r"^def (\w+)\(", smp["prompt"], re.M)[-1]] = smp
    skipped: Counter = Counter()
    pairs = []
    for task in tasks[:n_problems]:
        smp = by_entry.get(task["entry_point"])
        if smp is None:
            skipped["no samples"] += 1
            continue
        item = humaneval.convert(task, "humaneval")
        if not isinstance(item, Problem):
            skipped[f"rejected: {getattr(item, 'reason', item)}"] += 1
            continue
        p = Problem(id=task["task_id"], source="humaneval", statement="", style="functional",
                    entry_point=task["entry_point"], tests=item.tests, time_limit_s=timeout)
        for k, completion in enumerate(smp["samples"][:n_samples]):
            code = smp["prompt"] + completion
            official = f"{code}\n\n{task['test']}\ncheck({task['entry_point']})\n"
            pairs.append(Pair("humaneval", p, Submission(p.id, f"{p.id}#{k}", "python", code), lcb_sample(p),
                              official=official))
    return pairs, skipped


def codeforces_pairs(timeout: float) -> list[Pair]:
    problems = json.load(open(DATA / "stdio" / "codeforces_test.json"))
    pairs = []
    for index, solutions in CF_SOLUTIONS.items():
        rec = problems[index]
        statement = rec["problem"]
        # A statement that accepts YES/NO "in any case" is a case-insensitive checker (problem metadata).
        any_case = "in any case" in statement or "any case (upper or lower)" in statement
        p = Problem(id=f"cf{index}", source="codeforces", statement=statement, style="stdio",
                    tests=[TestCase(t["input"], t["output"]) for t in rec["tests"]], time_limit_s=timeout,
                    checker=Checker(kind="tokens", case_sensitive=False) if any_case else None)
        for name, (correct, code) in solutions.items():
            pairs.append(Pair("codeforces", p, Submission(p.id, f"{p.id}:{name}", "python", code), lcb_sample(p),
                              truth=correct, truth_note="by construction"))
    return pairs


# --- batch shapes, timed as whole processes ----------------------------------------------------------------
# Submissions an RL step produces for one problem: right ones (the reference, told apart by a comment as
# samples are) and typical wrong ones. A wrong variant subclasses the reference's Solution so both
# evaluators resolve it the same way; `functools.wraps` keeps the signature and annotations.
VARIANT_TAILS = {
    "off-by-one": ("\n\nimport functools as _ft\n_Base = Solution\nclass Solution(_Base):\n"
                   "    @_ft.wraps(_Base.{m})\n    def {m}(self, *a, **k):\n        r = _Base.{m}(self, *a, **k)\n"
                   "        if isinstance(r, bool):\n            return not r\n"
                   "        if isinstance(r, (int, float)):\n            return r + 1\n"
                   "        if isinstance(r, (list, str)):\n            return r[::-1] + r[:1]\n"
                   "        return None\n"),
    "raises": ("\n\n_Base = Solution\nclass Solution(_Base):\n    def {m}(self, *a, **k):\n"
               "        raise IndexError('list index out of range')\n"),
    "returns-none": ("\n\n_Base = Solution\nclass Solution(_Base):\n    def {m}(self, *a, **k):\n"
                     "        return None\n"),
    "syntax-error": "\n\ndef broken(:\n    pass\n",
}
RIGHT_COPIES = 4  # + the 4 wrong variants = 8 submissions per problem


def contest_tests(script: str, params: list[str]) -> list[TestCase]:
    """LeetCode contest test scripts (`test_input = {...}` then `assert my_solution.f(**test_input)
    == value`) as positional JSON tests, with `ast` only; a test that does not convert is skipped."""
    import ast

    from microcoder.pipeline.sources.pyliterals import NotLiteral, encode_args, literal, to_json

    tests, kwargs = [], None
    for node in ast.parse(script).body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
            kwargs = node.value
        elif isinstance(node, ast.Assert) and kwargs is not None and isinstance(node.test, ast.Compare):
            try:
                given = {literal(k): literal(v) for k, v in zip(kwargs.keys, kwargs.values, strict=True)}
                args = [given[name] for name in params]
                tests.append(TestCase(encode_args(args), to_json(literal(node.test.comparators[0]))))
            except (NotLiteral, KeyError, TypeError):
                continue
    return tests


def contest_problems(n: int, timeout: float) -> list[tuple[Problem, str]]:
    """The first `n` LeetCode contest problems (deepseek-ai's 2023-07..2024-01 set, ~100 tests each)
    that LeetCodeDataset ships a reference solution for: (problem with every test, reference code)."""
    from microcoder.pipeline.sources.pyliterals import find_signature

    refs = {}
    for split in ("train", "test"):
        for line in gzip.open(DATA / "leetcodedataset" / f"LeetCodeDataset-v0.2.0-{split}.jsonl.gz", "rt"):
            rec = json.loads(line)
            refs[rec["task_id"]] = rec
    out = []
    for line in open(DATA / "leetcode_contest" / "20240121-Jul.jsonl"):
        rec = json.loads(line)
        ref = refs.get(rec["meta"]["titleSlug"])
        if ref is None:
            continue
        code = ref["prompt"] + "\n" + ref["completion"]
        method = ref["entry_point"].split(".")[-1]
        sig = find_signature(code, method, "Solution")
        tests = contest_tests(rec["test"], sig.params) if sig else []
        if not tests:
            continue
        # the statement is not needed to judge, but a record without one is unusable to the CLI
        out.append((Problem(id=rec["meta"]["titleSlug"], source="leetcode_contest",
                            statement=rec.get("prompt") or rec["meta"]["titleSlug"],
                            style="functional", entry_point=ref["entry_point"], tests=tests,
                            time_limit_s=timeout), code))
        if len(out) == n:
            break
    return out


def shape_batch(shape: str, n_problems: int, timeout: float) -> tuple[list[Problem], list[Submission]]:
    """rl: n problems x 8 submissions (4 right, 4 wrong) x the first 5 tests; heavy: n problems x
    the reference x every test."""
    problems, subs = [], []
    for p, code in contest_problems(n_problems, timeout):
        method = p.entry_point.split(".")[-1]
        if shape == "heavy":
            problems.append(p)
            subs.append(Submission(p.id, f"{p.id}:ref", "python", code))
            continue
        p = dataclasses.replace(p, tests=p.tests[:5])
        problems.append(p)
        for k in range(RIGHT_COPIES):
            subs.append(Submission(p.id, f"{p.id}:right{k}", "python", f"{code}\n# sample {k}\n"))
        for name, tail in VARIANT_TAILS.items():
            subs.append(Submission(p.id, f"{p.id}:{name}", "python", code + tail.replace("{m}", method)))
    return problems, subs


class CpuGroup:
    """A cgroup-v1 cpuacct group for one timed process tree (root only; None elsewhere): its CPU
    seconds, every descendant included (our judges' own groups nest below it), are a companion
    to wall time that a machine shared with other jobs distorts much less."""

    ROOT = Path("/sys/fs/cgroup/cpuacct")
    _n = 0

    def __init__(self):
        own = next((line.split(":", 2)[2].strip() for line in open("/proc/self/cgroup")
                    if line.split(":", 2)[1] in ("cpuacct", "cpu,cpuacct")), "/")
        CpuGroup._n += 1
        self.path = self.ROOT / own.lstrip("/") / f"bench-{os.getpid()}-{CpuGroup._n}"
        self.path.mkdir()

    @classmethod
    def make(cls) -> CpuGroup | None:
        try:
            return cls()
        except OSError:
            return None

    def wrap(self, cmd: list[str]) -> list[str]:
        """`cmd`, started inside the group."""
        return ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', str(self.path / "cgroup.procs"), *cmd]

    def seconds(self) -> float:
        cpu = int((self.path / "cpuacct.usage").read_text()) / 1e9
        try:
            self.path.rmdir()
        except OSError:
            pass
        return cpu


def timed(cmd: list[str], **kw) -> tuple[float, float | None, subprocess.CompletedProcess]:
    """(wall seconds from spawn to exit, CPU seconds of the whole tree or None, the result)."""
    group = CpuGroup.make()
    t0 = time.monotonic()
    proc = subprocess.run(group.wrap(cmd) if group else cmd, **kw)
    return time.monotonic() - t0, group.seconds() if group else None, proc


def run_ours_process(work: Path, workers: int, root: Path = ROOT) -> tuple[float, float | None, list[dict]]:
    """`microcoder evaluate` as a fresh process, timed from spawn to exit (imports, pool start,
    reading the inputs, judging, writing the verdicts). `root`: another checkout of the project
    to time instead (e.g. `git archive` of an earlier commit), run with this interpreter
    (`checkout_command`)."""
    out = work / "ours.jsonl"
    args = ["evaluate", "--problems", str(work / "problems.jsonl"), "--submissions", str(work / "subs.jsonl"),
            "-o", str(out), "--workers", str(workers), "--no-progress"]
    env = None
    if root.resolve() == ROOT:
        cmd = [str(Path(sys.executable).with_name("microcoder")), *args]
    else:
        cmd, env = checkout_command(root, work, args)
    seconds, cpu, proc = timed(cmd, capture_output=True, text=True, cwd=root, env=env)  # its params.yaml
    if proc.returncode != 0:
        raise SystemExit(f"microcoder evaluate failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return seconds, cpu, [json.loads(line) for line in out.read_text().splitlines()]


def checkout_command(root: Path, work: Path, args: list[str]) -> tuple[list[str], dict[str, str]]:
    """The CLI of checkout `root`, not this one: a checkout from before the `microcoder` namespace
    runs as `-m pipeline.cli` from its root; a later one through a folder `microcoder/` of links to
    its layers, first on PYTHONPATH (so it wins over this checkout's editable install)."""
    if "microcoder." not in (root / "pipeline" / "cli.py").read_text():
        return [sys.executable, "-m", "pipeline.cli", *args], {**os.environ, "PYTHONPATH": str(root)}
    shim = work / "checkout-namespace" / "microcoder"
    shim.mkdir(parents=True, exist_ok=True)
    for layer in ("pipeline", "training", "stages"):
        link = shim / layer
        if link.is_symlink():
            link.unlink()
        link.symlink_to(root.resolve() / layer, target_is_directory=True)
    return [sys.executable, "-m", "microcoder.pipeline.cli", *args], {**os.environ, "PYTHONPATH": str(shim.parent)}


def run_lcb_process(problems: list[Problem], subs: list[Submission], workers: int, timeout: float,
                    unsafe: bool) -> tuple[float, float | None, list[str]]:
    """LiveCodeBench's codegen_metrics as a fresh process (inside bwrap), timed from spawn to exit;
    the submissions of one problem go in as that sample's generations, as LiveCodeBench batches them."""
    order = {p.id: i for i, p in enumerate(problems)}
    gens: list[list[str]] = [[] for _ in problems]
    where = []
    for s in subs:
        i = order[s.problem_id]
        where.append((i, len(gens[i])))
        gens[i].append(s.code)
    seconds, cpu, out = lcb_process([lcb_sample(p) for p in problems], gens, workers, timeout, unsafe)
    statuses = []
    for i, j in where:
        statuses.append(lcb_status(out["results"][str(i)][j], len(problems[i].tests)))
    return seconds, cpu, statuses


def shapes_bench(args) -> dict:
    summary = {}
    for shape in args.shapes.split(","):
        problems, subs = shape_batch(shape, args.shape_problems, args.timeout)
        n_tests = sum(len(p.tests) for p in problems)
        print(f"\n== shape {shape}: {len(problems)} problems, {len(subs)} submissions, {n_tests} tests "
              f"(whole processes, workers={args.workers}, first-failure, timeout {args.timeout:g} s) ==")
        work = Path(tempfile.mkdtemp(prefix=f"shape-{shape}-"))
        try:
            with open(work / "problems.jsonl", "w") as f:
                for p in problems:
                    f.write(json.dumps(p.to_dict()) + "\n")
            with open(work / "subs.jsonl", "w") as f:
                for s in subs:
                    f.write(json.dumps(dataclasses.asdict(s)) + "\n")
            ours_t, lcb_t, ours_cpu, lcb_cpu, ours_v, lcb_v = [], [], [], [], None, None
            for rep in range(args.repeat):
                for who in (("ours", "lcb") if rep % 2 == 0 else ("lcb", "ours")):
                    if who == "ours":
                        seconds, cpu, got = run_ours_process(work, args.workers, args.ours_root)
                        ours_t.append(seconds)
                        ours_cpu.append(cpu)
                        ours_v = ours_v or got
                    else:
                        seconds, cpu, got = run_lcb_process(problems, subs, args.workers, args.timeout,
                                                            args.unsafe_lcb)
                        lcb_t.append(seconds)
                        lcb_cpu.append(cpu)
                        lcb_v = lcb_v or got
                    print(f"  run {rep + 1} {who}: {seconds:.2f} s wall, "
                          f"{'-' if cpu is None else f'{cpu:.2f}'} s CPU", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        ours_s, lcb_s = statistics.median(ours_t), statistics.median(lcb_t)
        ran = sum(len(v["tests"]) for v in ours_v)
        agree = sum((v["status"] == "AC") == (s == "AC") for v, s in zip(ours_v, lcb_v, strict=True))
        ratios = [b / a for a, b in zip(ours_t, lcb_t, strict=True)]
        cpu_ratio = (statistics.median(lcb_cpu) / statistics.median(ours_cpu)
                     if None not in ours_cpu + lcb_cpu else None)
        row = {"problems": len(problems), "submissions": len(subs), "tests": n_tests, "tests_run_ours": ran,
               "ours_s": ours_t, "lcb_s": lcb_t, "ratio_median": lcb_s / ours_s, "ratios_per_round": ratios,
               "ours_cpu_s": ours_cpu, "lcb_cpu_s": lcb_cpu, "cpu_ratio": cpu_ratio,
               "agree": agree, "ours_status": dict(Counter(v["status"] for v in ours_v)),
               "lcb_status": dict(Counter(lcb_v))}
        print(f"  ours {ours_s:.2f} s ({len(subs) / ours_s:.1f} subs/s, {ran / ours_s:.0f} tests run/s) | "
              f"LCB {lcb_s:.2f} s | ratio {lcb_s / ours_s:.2f}x (per round: "
              f"{', '.join(f'{r:.2f}' for r in ratios)}) | pass/fail agree {agree}/{len(subs)}")
        if cpu_ratio is not None:
            print(f"  CPU (whole process trees): ours {statistics.median(ours_cpu):.2f} s | "
                  f"LCB {statistics.median(lcb_cpu):.2f} s | ratio {cpu_ratio:.2f}x")
        print(f"  ours: {row['ours_status']} | LCB: {row['lcb_status']}")
        summary[shape] = row
    return summary


# --- ground truth from the official tests ------------------------------------------------------------------
def label_official(pairs: list[Pair], workers: int, timeout: float) -> None:
    todo = [p for p in pairs if p.official is not None]
    problems = {f"official:{i}": Problem(id=f"official:{i}", source="bench", statement="", style="stdio",
                                         tests=[TestCase("", "")], time_limit_s=4 * timeout) for i in range(len(todo))}
    subs = [Submission(f"official:{i}", str(i), "python", p.official) for i, p in enumerate(todo)]
    with Evaluator(workers=workers) as ev:
        verdicts = ev.evaluate_batch(problems, subs)
    for p, v in zip(todo, verdicts, strict=True):
        p.truth = v.status in ("AC", "WA")  # the official script exited 0 (WA = it printed something)
        p.truth_note = "official tests pass" if p.truth else f"official tests: {v.status} {(v.reason or '')[-160:]}"


# --- the two evaluators ----------------------------------------------------------------------------------------
def run_ours(pairs: list[Pair], workers: int) -> tuple[float, list]:
    t0 = time.monotonic()  # includes starting and closing the pool, as LiveCodeBench's time does
    with Evaluator(workers=workers) as ev:
        verdicts = ev.evaluate_batch({p.problem.id: p.problem for p in pairs}, [p.sub for p in pairs])
    return time.monotonic() - t0, verdicts


def lcb_process(samples: list[dict], generations: list[list[str]], workers: int, timeout: float,
                unsafe: bool) -> tuple[float, float | None, dict]:
    """LiveCodeBench's codegen_metrics in a child process (inside bwrap unless --unsafe-lcb):
    (seconds from spawn to exit, CPU seconds of the process tree or None, the child's output)."""
    work = Path(tempfile.mkdtemp(prefix="lcb-bench-"))
    try:
        (work / "in.json").write_text(json.dumps({
            "samples": samples, "generations": generations, "workers": workers, "timeout": int(timeout)}))
        cmd = [sys.executable, "-c", LCB_CHILD, str(work)]
        if not unsafe:
            if shutil.which("bwrap") is None:
                raise SystemExit("bubblewrap is needed to run LiveCodeBench's in-process evaluator safely "
                                 "(or pass --unsafe-lcb)")
            cmd = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
                   "--bind", str(work), str(work), "--unshare-net", "--unshare-pid", "--unshare-ipc",
                   "--die-with-parent", "--new-session", "--"] + cmd
        env = {"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": "/tmp"}
        with open(work / "log.txt", "wb") as log:
            seconds, cpu, proc = timed(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        if proc.returncode != 0:
            raise SystemExit(f"LiveCodeBench run failed (exit {proc.returncode}):\n"
                             f"{(work / 'log.txt').read_text()[-3000:]}")
        return seconds, cpu, json.loads((work / "out.json").read_text())
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_lcb(pairs: list[Pair], workers: int, timeout: float, unsafe: bool) -> tuple[float, list[dict]]:
    """LiveCodeBench on the pairs; the time is codegen_metrics' own (without the process start)."""
    _, _, out = lcb_process([p.lcb_sample for p in pairs], [[p.sub.code] for p in pairs], workers, timeout, unsafe)
    got = []
    for i, p in enumerate(pairs):
        res, meta = out["results"][str(i)][0], json.loads(out["metadata"][i][0])
        got.append({"results": res, "meta": meta, "status": lcb_status(res, len(p.problem.tests))})
    return out["seconds"], got


def measure(pairs: list[Pair], args) -> dict[str, list[float]]:
    """Run both evaluators `--repeat` times in alternating order (the machine may be shared);
    keep the first run's verdicts and note pairs whose verdict changed between runs."""
    times: dict[str, list[float]] = {"ours": [], "lcb": []}
    for rep in range(args.repeat):
        for who in (("ours", "lcb") if rep % 2 == 0 else ("lcb", "ours")):
            if who == "ours":
                seconds, verdicts = run_ours(pairs, args.workers)
                for p, v in zip(pairs, verdicts, strict=True):
                    if p.ours is not None and p.ours.status != v.status:
                        p.truth_note += f" [ours unstable: {p.ours.status}/{v.status}]"
                    p.ours = p.ours or v
            else:
                seconds, verdicts = run_lcb(pairs, args.workers, args.timeout, args.unsafe_lcb)
                for p, v in zip(pairs, verdicts, strict=True):
                    if p.lcb and p.lcb["status"] != v["status"]:
                        p.truth_note += f" [LCB unstable: {p.lcb['status']}/{v['status']}]"
                    p.lcb = p.lcb or v
            times[who].append(seconds)
    return times


# Run as `python -c LCB_CHILD <work dir>`: imports LiveCodeBench only, so its process start is not
# charged with ours (this file imports microcoder.pipeline.evaluator).
LCB_CHILD = """
import contextlib, io, json, sys, time
from pathlib import Path
from livecodebench.evaluation import codegen_metrics
work = Path(sys.argv[1])
spec = json.loads((work / "in.json").read_text())
t0 = time.monotonic()
with contextlib.redirect_stdout(io.StringIO()):
    _, results, metadata = codegen_metrics(spec["samples"], spec["generations"], k_list=[1],
                                           num_process_evaluate=spec["workers"], timeout=spec["timeout"])
seconds = time.monotonic() - t0
(work / "out.json").write_text(json.dumps({"seconds": seconds, "results": {str(k): v for k, v in results.items()},
                                           "metadata": metadata}, default=str))
"""


def lcb_status(results: list, n_tests: int) -> str:
    if len(results) == n_tests and all(r is True or (r == 1 and r is not False) for r in results):
        return "AC"
    first = next((r for r in results if r is not True), -1)
    return LCB_CODES.get(first, "WA" if first is False else "RE")


# --- warm fork vs fresh process ---------------------------------------------------------------------------------
def startup_bench(workers: int, runs: int) -> dict[str, float]:
    """ms per stdio test: our warm pre-forked interpreter vs a fresh sandbox + interpreter per test."""
    from microcoder.pipeline.evaluator.sandbox import launch as sb

    code = "import sys\nn = int(sys.stdin.readline())\nprint(sum(range(n)))\n"
    problem = Problem(id="s", source="bench", statement="", style="stdio", time_limit_s=2,
                      tests=[TestCase(f"{i}\n", f"{sum(range(i))}\n") for i in range(runs)])
    out: dict[str, float] = {}
    with Evaluator(workers=1) as ev:
        ev.evaluate_batch([problem], [Submission("s", "warmup", "python", code)])
        t0 = time.monotonic()
        v = ev.evaluate_batch([problem], [Submission("s", "x", "python", code)])[0]
        out["warm fork (ours)"] = 1000 * (time.monotonic() - t0) / runs
        assert v.status == "AC", v
    work = Path(tempfile.mkdtemp(prefix="startup-"))
    os.chmod(work, 0o755)
    (work / "code.py").write_text(code)
    (work / "in.txt").write_text(f"{runs}\n")
    for p in work.iterdir():
        os.chmod(p, 0o644)
    spec = sb.BoxSpec(kind="bwrap", drop_uid=sb.drop_uid_for("bwrap", 99))
    job = sb.inside_path("job")
    fresh = (sb.bwrap_args(spec, [sb.Bind(work, job)]) + sb.drop_args(spec) + sb.limit_args(spec)
             + [sys.executable, "-s", "-P", f"{job}/code.py"])
    for label, cmd in (("fresh bwrap + python per test", fresh),
                       ("fresh python per test, no sandbox", [sys.executable, "-s", "-P", str(work / "code.py")])):
        t0 = time.monotonic()
        for _ in range(runs):
            with open(work / "in.txt", "rb") as f:
                subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True, env=sb.sandbox_env("/tmp"))
        out[label] = 1000 * (time.monotonic() - t0) / runs
    shutil.rmtree(work, ignore_errors=True)
    return out


# --- report -------------------------------------------------------------------------------------------------------
def explain(p: Pair) -> str:
    lcb_msg = p.lcb["meta"].get("error") or p.lcb["meta"].get("error_message") or ""
    ours = p.ours.reason or ""
    return f"ours {p.ours.status}: {ours[:150]!r} | LCB {p.lcb['status']}: {str(lcb_msg)[:150]!r}"


def throughput_table(title: str, pairs: list[Pair], times: dict[str, dict[str, list[float]]]) -> dict:
    print(f"\n== {title} ==")
    print(f"{'dataset':<11} {'subs':>5} {'tests':>6} | {'ours tests/s':>12} {'LCB tests/s':>11} | "
          f"{'ours subs/s':>11} {'LCB subs/s':>10} | {'ratio':>6}")
    out: dict = {}
    total = {"n": 0, "tests": 0, "ours": 0.0, "lcb": 0.0}
    for ds, t in times.items():
        sel = [p for p in pairs if p.dataset == ds]
        ours_s, lcb_s = statistics.median(t["ours"]), statistics.median(t["lcb"])
        tests = sum(len(p.ours.tests) for p in sel)
        row = {"subs": len(sel), "tests": tests, "ours_tests_s": tests / ours_s, "lcb_tests_s": tests / lcb_s,
               "ours_subs_s": len(sel) / ours_s, "lcb_subs_s": len(sel) / lcb_s, "ratio": lcb_s / ours_s,
               "ours_s": t["ours"], "lcb_s": t["lcb"]}
        out[ds] = row
        for k, v in (("n", len(sel)), ("tests", tests), ("ours", ours_s), ("lcb", lcb_s)):
            total[k] += v
        print(f"{ds:<11} {row['subs']:>5} {tests:>6} | {row['ours_tests_s']:>12.1f} {row['lcb_tests_s']:>11.1f} | "
              f"{row['ours_subs_s']:>11.1f} {row['lcb_subs_s']:>10.1f} | {row['ratio']:>5.2f}x")
    ratio = total["lcb"] / total["ours"]
    print(f"{'all':<11} {total['n']:>5} {total['tests']:>6} | {total['tests'] / total['ours']:>12.1f} "
          f"{total['tests'] / total['lcb']:>11.1f} | {total['n'] / total['ours']:>11.1f} "
          f"{total['n'] / total['lcb']:>10.1f} | {ratio:>5.2f}x")
    out["all"] = {"subs": total["n"], "tests": total["tests"], "ratio": ratio, "ours_s": total["ours"],
                  "lcb_s": total["lcb"]}
    return out


def report(pairs: list[Pair], times: dict, quick: dict, timed_out: set, workers: int, timeout: float,
           repeat: int) -> dict:
    lines = []
    head = f"workers={workers}, per-test timeout {timeout:g} s, first-failure, median of {repeat} runs"
    summary: dict = {"throughput": throughput_table(f"throughput, all pairs ({head})", pairs, times)}
    rest = [p for p in pairs if id(p) not in timed_out]
    summary["throughput_without_timeouts"] = throughput_table(
        f"throughput without the {len(pairs) - len(rest)} pairs that hit the time limit in either evaluator",
        rest, quick)

    print("\n== verdict agreement (pass = AC) ==")
    print(f"{'dataset':<11} {'pairs':>5} {'agree':>6} {'ours right':>10} {'LCB right':>9} {'truth-pass':>10} "
          f"{'ours acc':>8} {'LCB acc':>8}")
    for ds in sorted({p.dataset for p in pairs}):
        sel = [p for p in pairs if p.dataset == ds]
        agree = sum((p.ours.status == "AC") == (p.lcb["status"] == "AC") for p in sel)
        labelled = [p for p in sel if p.truth is not None]
        ours_ok = sum((p.ours.status == "AC") == p.truth for p in labelled)
        lcb_ok = sum((p.lcb["status"] == "AC") == p.truth for p in labelled)
        dis = [p for p in labelled if (p.ours.status == "AC") != (p.lcb["status"] == "AC")]
        ours_right = sum((p.ours.status == "AC") == p.truth for p in dis)
        print(f"{ds:<11} {len(sel):>5} {agree:>6} {ours_right:>10} {len(dis) - ours_right:>9} "
              f"{sum(bool(p.truth) for p in labelled):>10} {ours_ok / max(len(labelled), 1):>8.1%} "
              f"{lcb_ok / max(len(labelled), 1):>8.1%}")
        summary[ds] = {"pairs": len(sel), "agree": agree, "disagree_ours_right": ours_right,
                       "disagree_lcb_right": len(dis) - ours_right, "ours_accuracy": ours_ok / max(len(labelled), 1),
                       "lcb_accuracy": lcb_ok / max(len(labelled), 1)}
    statuses = Counter((p.ours.status, p.lcb["status"]) for p in pairs)
    print("\n== status pairs (ours, LCB): count ==")
    print(", ".join(f"{a}/{b}: {c}" for (a, b), c in sorted(statuses.items())))

    print("\n== every pass/fail disagreement ==")
    for p in pairs:
        if (p.ours.status == "AC") != (p.lcb["status"] == "AC"):
            right = "?" if p.truth is None else ("OURS" if (p.ours.status == "AC") == p.truth else "LCB")
            line = f"[{right} right] {p.dataset} {p.sub.submission_id} (truth: {p.truth_note}) {explain(p)}"
            lines.append(line)
            print(line)
    print("\n== LeetCodeDataset reference completions judged by ours ==")
    refs = [p for p in pairs if p.dataset == "leetcode"]
    if refs:
        ac = [p for p in refs if p.ours.status == "AC"]
        print(f"AC {len(ac)}/{len(refs)} = {len(ac) / len(refs):.1%}")
        for p in refs:
            if p.ours.status != "AC":
                print(f"  {p.sub.submission_id}: {p.ours.status} ({(p.ours.reason or '')[:200]!r}); "
                      f"official tests: {p.truth_note}")
        summary["leetcode_reference_ac"] = len(ac) / len(refs)
    summary["disagreements"] = lines
    return summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=3.0, help="per-test timeout (s) for both evaluators")
    ap.add_argument("--lcd-limit", type=int, default=200, help="LeetCodeDataset problems")
    ap.add_argument("--lcd-split", choices=("test", "train"), default="test", help="LeetCodeDataset v0.2.0 split")
    ap.add_argument("--he-problems", type=int, default=20)
    ap.add_argument("--he-samples", type=int, default=10)
    ap.add_argument("--datasets", default="leetcode,humaneval,codeforces")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per evaluator and dataset (median)")
    ap.add_argument("--startup-runs", type=int, default=100, help="tests for the warm-vs-fresh measurement (0: skip)")
    ap.add_argument("--unsafe-lcb", action="store_true", help="run LiveCodeBench without the bwrap wrapper")
    ap.add_argument("--json", type=Path, help="write the summary here")
    ap.add_argument("--shapes", help="instead of the datasets: time batch shapes as whole processes "
                    "(`microcoder evaluate` vs a LiveCodeBench process), comma-separated: rl,heavy")
    ap.add_argument("--shape-problems", type=int, default=120, help="LeetCode contest problems per shape")
    ap.add_argument("--ours-root", type=Path, default=ROOT,
                    help="with --shapes: time the checkout at this path as ours (e.g. an earlier commit)")
    args = ap.parse_args()
    if not DATA.exists():
        raise SystemExit(f"{DATA} is missing: the benchmark reads ../shared/bench-data")
    if args.shapes:
        summary = shapes_bench(args)
        if args.json:
            args.json.write_text(json.dumps(summary, indent=2, default=str))
        return
    chosen = set(args.datasets.split(","))
    pairs: list[Pair] = []
    if "leetcode" in chosen:
        got, skipped = leetcode_pairs(args.lcd_limit, args.timeout, args.lcd_split)
        print(f"leetcode: {len(got)} problems; skipped: {dict(skipped) or 'none'}")
        pairs += got
    if "humaneval" in chosen:
        got, skipped = humaneval_pairs(args.he_problems, args.he_samples, args.timeout)
        print(f"humaneval: {len(got)} samples; skipped: {dict(skipped) or 'none'}")
        pairs += got
    if "codeforces" in chosen:
        got = codeforces_pairs(args.timeout)
        print(f"codeforces: {len(got)} solutions")
        pairs += got
    print("labelling with the official tests (in our sandbox) ...")
    label_official(pairs, args.workers, args.timeout)
    times: dict[str, dict] = {}
    for ds in sorted({p.dataset for p in pairs}):
        print(f"timing {ds} ({args.repeat} runs each) ...")
        times[ds] = measure([p for p in pairs if p.dataset == ds], args)
    # Time limits cost both sides the same nominal seconds, but ours counts CPU time (no false TLE
    # on a loaded machine) where LiveCodeBench counts wall time: time the rest separately too.
    timed_out = {id(p) for p in pairs if "TLE" in (p.ours.status, p.lcb["status"])}
    quick: dict[str, dict] = {}
    for ds in sorted({p.dataset for p in pairs}):
        sel = [p for p in pairs if p.dataset == ds and id(p) not in timed_out]
        if sel and len(sel) < sum(p.dataset == ds for p in pairs):
            print(f"timing {ds} without the {sum(p.dataset == ds for p in pairs) - len(sel)} timed-out pairs ...")
            quick[ds] = measure(sel, args)
        else:
            quick[ds] = times[ds]
    summary = report(pairs, times, quick, timed_out, args.workers, args.timeout, args.repeat)
    if args.startup_runs:
        print("\n== Python stdio: ms per test (1 worker) ==")
        summary["startup_ms"] = startup_bench(1, args.startup_runs)
        for k, v in summary["startup_ms"].items():
            print(f"{k:<36} {v:7.2f}")
    if args.json:
        args.json.write_text(json.dumps(summary, indent=2, default=str))


if __name__ == "__main__":
    main()
