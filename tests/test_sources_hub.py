"""Hub adapters: tiny local files in the real column layouts, read through `datasets.load_dataset`."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.schema import Problem, decode_functional_input, validate_problem
from microcoder.pipeline.sources import build_options, read_source
from microcoder.pipeline.sources.base import Reject, SourceContext, SourceError


def run(name: str, **options) -> tuple[list[Problem], list[Reject]]:
    items = list(read_source("hub", build_options("hub", options), SourceContext(name)))
    problems = [i for i in items if isinstance(i, Problem)]
    for p in problems:
        assert validate_problem(p) == [], p.id
    return problems, [i for i in items if isinstance(i, Reject)]


def cc_tests(pairs):
    return {"input": [p[0] for p in pairs], "output": [p[1] for p in pairs]}


CC_TESTS = pa.struct([("input", pa.list_(pa.string())), ("output", pa.list_(pa.string()))])
CC_SOLUTIONS = pa.struct([("language", pa.list_(pa.int64())), ("solution", pa.list_(pa.string()))])
CC_SCHEMA = pa.schema([
    ("name", pa.string()), ("description", pa.string()), ("public_tests", CC_TESTS), ("private_tests", CC_TESTS),
    ("generated_tests", CC_TESTS), ("source", pa.int64()), ("difficulty", pa.int64()), ("solutions", CC_SOLUTIONS),
    ("incorrect_solutions", CC_SOLUTIONS), ("cf_contest_id", pa.int64()), ("cf_index", pa.string()),
    ("cf_points", pa.float64()), ("cf_rating", pa.int64()), ("cf_tags", pa.list_(pa.string())),
    ("is_description_translated", pa.bool_()), ("untranslated_description", pa.string()),
    ("time_limit", pa.struct([("seconds", pa.int64()), ("nanos", pa.int64())])), ("memory_limit_bytes", pa.int64()),
    ("input_file", pa.string()), ("output_file", pa.string()),
])


def cc_row(**kw):
    row = {"name": "1548_E. Gregor and the Two Painters", "description": "Two painters paint a grid...",
           "public_tests": cc_tests([("2 2\n", "1\n")]), "private_tests": cc_tests([("3 3\n", "2\n")]),
           "generated_tests": cc_tests([("4 4\n", "3\n"), ("5 5\n", "4\n")]), "source": 2, "difficulty": 11,
           "solutions": {"language": [2, 3, 1, 3], "solution": ["int main(){}", "print(1)", "print 1", "print(2)"]},
           "incorrect_solutions": {"language": [3], "solution": ["print(0)"]}, "cf_contest_id": 1548, "cf_index": "E",
           "cf_points": 2500.0, "cf_rating": 3400, "cf_tags": ["data structures", "divide and conquer"],
           "is_description_translated": False, "untranslated_description": "",
           "time_limit": {"seconds": 1, "nanos": 500000000}, "memory_limit_bytes": 256 * 2**20,
           "input_file": "", "output_file": ""}
    row.update(kw)
    return row


def test_code_contests_parquet(tmp_path):
    rows = [cc_row(), cc_row(name="brcktsrm", source=1, cf_contest_id=0, cf_index="", cf_rating=0, difficulty=1,
                             time_limit=None, memory_limit_bytes=0),
            cc_row(name="fileio", source=6, input_file="input.txt"),
            cc_row(name="uneven", source=6, public_tests={"input": ["1\n"], "output": []})]
    path = tmp_path / "test-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=CC_SCHEMA), path)
    problems, rejects = run("codecontests", adapter="codecontests", path=str(path), max_solutions=1)
    cf, cc = problems
    assert cf.id == "codecontests/1548E" and cf.platform == "codeforces" and cf.rating == 3400
    assert [t.kind for t in cf.tests] == ["public", "private", "generated", "generated"]
    assert [(r.language, r.code) for r in cf.reference_solutions] == [("cpp", "int main(){}"), ("python", "print(1)")]
    assert cf.time_limit_s == 1.5 and cf.memory_limit_mb == 256 and cf.url.endswith("/1548/E")
    assert cc.id == "codecontests/brcktsrm" and cc.platform == "codechef" and cc.difficulty == "easy"
    assert cc.rating is None and cc.time_limit_s == 2.0
    assert {r.code for r in rejects} == {"file_io", "bad_tests"}


def test_code_contests_without_generated(tmp_path):
    path = tmp_path / "cc.parquet"
    pq.write_table(pa.Table.from_pylist([cc_row()], schema=CC_SCHEMA), path)
    problems, _ = run("cc", adapter="codecontests", path=str(path), include_generated=False)
    assert [t.kind for t in problems[0].tests] == ["public", "private"]


def test_taco_and_apps_jsonl(tmp_path):
    stdio = {"question": "Read n and print n*2.", "solutions": json.dumps(["print(int(input())*2)"]),
             "starter_code": "", "input_output": json.dumps({"inputs": ["1\n", ["2", "3"]], "outputs": ["2\n", ["4"]]}),
             "difficulty": "EASY", "raw_tags": "['Math']", "name": "Doubler", "source": "codeforces",
             "tags": "['Mathematics']", "skill_types": "[]", "url": "https://codeforces.com/problemset/problem/1/A",
             "Expected Auxiliary Space": None, "time_limit": "1.5 seconds", "date": "2021-03-01", "picture_num": "0",
             "memory_limit": "512 megabytes", "Expected Time Complexity": None}
    func = dict(stdio, question="Return the sum of a list.", name="total",
                starter_code="def total(xs):\n\t", solutions=json.dumps(["def total(xs):\n\treturn sum(xs)"]),
                input_output=json.dumps({"fn_name": "total", "inputs": [[[1, 2]], [[]]], "outputs": [[3], [0]]}))
    broken = dict(stdio, question="Broken tests", input_output="{not json")
    empty = dict(stdio, question="No tests", input_output="")
    path = tmp_path / "train.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [stdio, func, broken, empty]))
    problems, rejects = run("taco", adapter="taco", path=str(path))
    s, f = problems
    assert s.style == "stdio" and [t.input for t in s.tests] == ["1\n", "2\n3"] and s.tests[1].output == "4"
    assert s.time_limit_s == 1.5 and s.memory_limit_mb == 512 and s.tags == ["Math"] and s.platform == "codeforces"
    assert s.contest_date == "2021-03-01" and s.id.startswith("taco/") and s.license == "Apache-2.0"
    assert f.style == "functional" and f.entry_point == "total" and f.meta["output_wrapper_removed"] is True
    assert [(decode_functional_input(t.input), t.output) for t in f.tests] == [([[1, 2]], "3"), ([[]], "0")]
    assert sorted(r.code for r in rejects) == ["bad_tests", "no_tests"]

    apps_row = {"problem_id": 7, "question": stdio["question"], "solutions": stdio["solutions"],
                "input_output": stdio["input_output"], "difficulty": "interview", "url": stdio["url"], "starter_code": ""}
    path = tmp_path / "apps.jsonl"
    path.write_text(json.dumps(apps_row) + "\n")
    problems, _ = run("apps", adapter="apps", path=str(path), split="test")
    assert problems[0].id == "apps/test-0007" and problems[0].difficulty == "interview"


def test_open_r1_codeforces_parquet(tmp_path):
    base = {"id": "2000A", "aliases": None, "contest_id": "2000", "contest_name": "Codeforces Round 966 (Div. 3)",
            "contest_type": "ICPC", "contest_start": 1723732500, "contest_start_year": 2024, "index": "A",
            "time_limit": 1.0, "memory_limit": 256.0, "title": "Primary Task",
            "description": "Dmitry wrote down $$$t$$$ integers.", "input_format": "The first line contains $$$t$$$.",
            "output_format": "Print YES or NO.", "interaction_format": None, "note": "Note text.",
            "examples": [{"input": "1\n100\n", "output": "NO\n"}], "editorial": None, "rating": 800.0,
            "tags": ["implementation"], "testset_size": 2, "official_tests": [{"input": "1\n1010\n", "output": "YES\n"}],
            "official_tests_complete": True, "input_mode": "stdio", "generated_checker": None, "executable": True,
            "generated_tests": 0}
    interactive = dict(base, id="1999G2", interaction_format="Ask queries ? a b.")
    path = tmp_path / "train-00000-of-00001.parquet"
    pq.write_table(pa.Table.from_pylist([base, interactive]), path)
    problems, rejects = run("open-r1-codeforces", adapter="open-r1-codeforces", path=str(path))
    p = problems[0]
    assert p.id == "open-r1-codeforces/2000A" and p.contest_date == "2024-08-15" and p.rating == 800
    assert "$t$" in p.statement and "## Examples" in p.statement and p.statement.rstrip().endswith("Note text.")
    assert [t.kind for t in p.tests] == ["public", "private"]
    assert [r.code for r in rejects] == ["interactive"]


def test_deepcoder_layouts(tmp_path):
    rows = [
        {"problem": "stdin problem", "tests": json.dumps([{"type": "stdin_stdout", "input": "1\n", "output": "1\n"}]),
         "metadata": json.dumps({"source": "primeintellect"})},
        {"problem": "call problem", "tests": json.dumps([{"type": "function_call", "fn_name": "f", "input": [1, 2],
                                                          "output": [3]}]), "metadata": "{}"},
        {"problem": "lcb problem", "tests": json.dumps([{"input": "[1]\n2", "output": "3", "testtype": "functional",
                                                         "metadata": {"func_name": "add"}}]), "metadata": "{}"},
        {"problem": "taco problem", "tests": json.dumps({"inputs": ["2\n"], "outputs": ["4\n"]}), "metadata": "{}"},
        {"problem": "bad", "tests": json.dumps([]), "metadata": "{}"},
    ]
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    problems, rejects = run("deepcoder", adapter="deepcoder", path=str(path))
    styles = [(p.statement, p.style, p.entry_point) for p in problems]
    assert styles == [("stdin problem", "stdio", None), ("call problem", "functional", "f"),
                      ("lcb problem", "functional", "add"), ("taco problem", "stdio", None)]
    assert decode_functional_input(problems[1].tests[0].input) == [1, 2] and problems[1].tests[0].output == "3"
    assert [r.code for r in rejects] == ["bad_tests"]


def test_livecodebench_through_hub(tmp_path):
    from pathlib import Path

    src = Path(__file__).parent / "fixtures" / "sources" / "livecodebench.jsonl"
    problems, rejects = run("lcb", adapter="livecodebench", path=str(src))
    assert {p.id for p in problems} == {"lcb/3001", "lcb/abc337_a"} and len(rejects) == 2


def test_corrupt_file_is_one_unreadable_reject(tmp_path):
    path = tmp_path / "broken.parquet"
    path.write_bytes(b"PAR1 this is not parquet")
    problems, rejects = run("cc", adapter="codecontests", path=str(path))
    assert not problems and [r.code for r in rejects] == ["unreadable"]


def test_bad_jsonl_line_is_reported(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"problem": "p", "tests": "[]"}\n{"problem": \n')
    problems, rejects = run("dc", adapter="deepcoder", path=str(path))
    assert not problems and [r.code for r in rejects] == ["bad_tests", "bad_json"]  # each line its own reason


def test_a_folder_mixing_subsets_reads_every_row_of_every_file(tmp_path):
    """DeepCoder's subsets have different columns: loaded as one dataset, the stream broke after
    the first file's rows and the rest vanished behind one `unreadable` reject. File by file,
    every row is a problem or a reject with its reason, and a bad file costs only itself."""
    stdin = [{"problem": f"stdin problem {i}", "tests": json.dumps([{"type": "stdin_stdout", "input": "1\n",
                                                                      "output": "1\n"}]),
              "metadata": json.dumps({"source": "primeintellect"})} for i in range(3)]
    lcb = [{"problem": f"lcb problem {i}", "tests": json.dumps([{"input": "[1]\n2", "output": "3", "testtype": "functional",
                                                                  "metadata": {"func_name": "add"}}]),
            "starter_code": "def add(a, b):", "difficulty": "easy", "contest_date": "2024-08-01"} for i in range(4)]
    folder = tmp_path / "deepcoder"
    folder.mkdir()
    pq.write_table(pa.Table.from_pylist(stdin), folder / "primeintellect.parquet")
    pq.write_table(pa.Table.from_pylist(lcb), folder / "lcbv5.parquet")
    (folder / "taco.jsonl").write_text(json.dumps({"problem": "taco problem", "tests": json.dumps(
        {"inputs": ["2\n"], "outputs": ["4\n"]}), "metadata": "{}"}) + "\n{broken\n")
    (folder / "zz-broken.parquet").write_bytes(b"PAR1 not parquet at all")
    problems, rejects = run("dc", adapter="deepcoder", path=str(folder))
    assert len(problems) == 3 + 4 + 1
    assert sorted(r.code for r in rejects) == ["bad_json", "unreadable"]
    assert "zz-broken.parquet" in next(r.detail for r in rejects if r.code == "unreadable")


def test_unknown_adapter():
    with pytest.raises(SourceError, match="unknown hub adapter"):
        run("x", adapter="nope", path="whatever")


def test_a_remote_source_records_the_revision_it_read(monkeypatch, tmp_path):
    """A rerun must be able to say what it read: the dataset, the revision asked for and the commit
    it pointed at (asked of the Hub's API; where the Hub cannot be asked, why not)."""
    import datasets
    import huggingface_hub

    from microcoder.pipeline.io import RejectsWriter
    from microcoder.pipeline.scrape import ScrapeConfig, run_sources

    class Info:
        sha = "0123abcd" * 5

    rows = [{"problem": "stdin problem", "tests": json.dumps([{"type": "stdin_stdout", "input": "1\n", "output": "1\n"}]),
             "metadata": "{}"}]
    monkeypatch.setattr(datasets, "load_dataset", lambda *a, **k: iter(rows))
    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", lambda self, repo, revision=None, timeout=None: Info())
    cfg = ScrapeConfig(sources=[{"name": "dc", "kind": "hub", "adapter": "deepcoder", "config": "lcbv5"}])
    _problems, stats = run_sources(cfg, RejectsWriter(tmp_path / "r1.jsonl", "scrape"), progress=False)
    origin = stats.figures["sources"]["dc"]["origin"]
    assert origin["dataset"] == "agentica-org/DeepCoder-Preview-Dataset" and origin["config"] == "lcbv5"
    assert origin["resolved_revision"] == Info.sha and origin["revision"] is None

    def offline(self, repo, revision=None, timeout=None):
        raise OSError("Hub unreachable")

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", offline)
    _problems, stats = run_sources(cfg, RejectsWriter(tmp_path / "r2.jsonl", "scrape"), progress=False)
    origin = stats.figures["sources"]["dc"]["origin"]
    assert origin["resolved_revision"] is None and "Hub unreachable" in origin["resolve_error"]


def test_a_local_source_records_its_files_and_bytes(tmp_path):
    from microcoder.pipeline.io import RejectsWriter
    from microcoder.pipeline.scrape import ScrapeConfig, run_sources

    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps({"problem": "p", "tests": "[]"}) + "\n")
    cfg = ScrapeConfig(sources=[{"name": "dc", "kind": "hub", "adapter": "deepcoder", "path": str(path)}])
    _problems, stats = run_sources(cfg, RejectsWriter(tmp_path / "r.jsonl", "scrape"), progress=False)
    assert stats.figures["sources"]["dc"]["origin"] == {"path": str(path), "files": 1, "bytes": path.stat().st_size}
