"""Build data/seed/problems.jsonl and benchmark.jsonl from the specs in this folder."""
# ruff: noqa: I001  (import order registers the records: it decides the file order)
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import bench  # noqa: E402,F401
import p_func  # noqa: E402,F401
import p_multitest  # noqa: E402,F401
import p_neardup  # noqa: E402,F401
import p_special  # noqa: E402,F401
import p_stdio  # noqa: E402,F401
import p_stdio_hard  # noqa: E402,F401
from common import RECORDS  # noqa: E402

from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase  # noqa: E402

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "data" / "seed")


def plant_wrong(p):
    i = p.meta["test_index"]
    t = p.tests[i]
    assert t.kind == "private", p.id
    value = json.loads(t.output) if p.style == "functional" else int(t.output)
    t.output = json.dumps(value + 1) if p.style == "functional" else f"{value + 1}\n"


def malformed():
    common = dict(source="seed", license="Apache-2.0", platform="codeforces", difficulty="easy",
                  time_limit_s=1.0, memory_limit_mb=256, contest_date="2024-02-17", meta={"planted": "malformed"})
    a = Problem(
        id="seed/malformed-missing-tests", source_id="malformed-missing-tests", title="Sum of Two Numbers",
        statement="# Sum of Two Numbers\n\nRead two integers a and b (|a|, |b| <= 10^9) from one line and "
                  "print a + b.\n\n## Example\n\nInput:\n\n```\n2 3\n```\n\nOutput:\n\n```\n5\n```\n",
        style="stdio", reference_solutions=[ReferenceSolution("python", "a, b = map(int, input().split())\nprint(a + b)\n")],
        tags=["implementation"], **common,
    ).to_dict()
    del a["tests"]  # planted: the whole field is absent
    b = Problem(
        id="seed/malformed-bad-style", source_id="malformed-bad-style", title="Reverse the Line",
        statement="# Reverse the Line\n\nRead one line of at most 100 lowercase letters and print it reversed."
                  "\n\n## Example\n\nInput:\n\n```\nabc\n```\n\nOutput:\n\n```\ncba\n```\n",
        style="interactive-ish", tests=[TestCase("abc\n", "cba\n", "public"), TestCase("x\n", "x\n", "private")],
        reference_solutions=[ReferenceSolution("python", "print(input().strip()[::-1])\n")],
        tags=["strings"], **common,
    ).to_dict()
    return a, b


def main():
    seed = [p for p in RECORDS if p.source == "seed"]
    bench_ = [p for p in RECORDS if p.source == "seed-bench"]
    for p in seed:
        if p.meta.get("planted") == "wrong_output":
            plant_wrong(p)
    rows = [p.to_dict() for p in seed]
    a, b = malformed()
    rows.insert(len(rows) // 3, a)
    rows.insert(2 * len(rows) // 3, b)
    OUT.mkdir(parents=True, exist_ok=True)
    for name, rs in (("problems.jsonl", rows), ("benchmark.jsonl", [p.to_dict() for p in bench_])):
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rs)
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"{name}: {len(rs)} records, {len(text.encode())} bytes")


main()
