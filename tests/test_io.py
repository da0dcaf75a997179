from __future__ import annotations

import json
import os
import stat
import threading

import pyarrow.parquet as pq
import pytest

from microcoder.pipeline import io
from microcoder.pipeline.schema import PROBLEM_SCHEMA, Checker, Problem, ReferenceSolution, TestCase


def make_problem(i: int, **extra) -> Problem:
    return Problem(
        id=f"t/{i}", source="t", statement=f"Problem {i}: print the sum.", style="stdio",
        tests=[TestCase("1 2\n", "3\n"), TestCase("5 5\n", "10\n", "private")],
        checker=Checker(kind="tokens") if i % 2 else None,
        reference_solutions=[ReferenceSolution("python", "print(sum(map(int, input().split())))")],
        tags=["math"], meta={"i": i}, extra=extra,
    )


def test_parquet_round_trip_is_lossless(tmp_path):
    probs = [make_problem(i) for i in range(5)]
    path = tmp_path / "p.parquet"
    assert io.write_problems(path, probs) == 5
    assert io.read_problems(path) == probs
    table = pq.read_table(path)
    assert table.schema.names == PROBLEM_SCHEMA.names
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).compression == "ZSTD"


def test_extra_columns_survive(tmp_path):
    probs = [make_problem(i, cluster_id=f"c{i}", pass_rate=0.5) for i in range(3)]
    path = tmp_path / "p.parquet"
    io.write_problems(path, probs)
    back = io.read_problems(path)
    assert back[1].extra == {"cluster_id": "c1", "pass_rate": 0.5}
    assert io.read_table(path).column_names[-2:] == ["cluster_id", "pass_rate"]


def test_jsonl_round_trip(tmp_path):
    probs = [make_problem(i) for i in range(3)]
    path = tmp_path / "p.jsonl"
    io.write_problems(path, probs)
    assert io.read_problems(path) == probs


def test_read_jsonl_reports_bad_lines(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\nnot json\n[1]\n')
    got = list(io.read_jsonl(path))
    assert got[0] == (1, {"a": 1}, None)
    assert got[1][2].startswith("line 3: invalid JSON") and got[1][2].endswith("'not json'")  # the text is kept
    assert got[2][2] == "line 4: expected a JSON object, got list"


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    path = tmp_path / "out.json"
    io.write_json(path, {"v": 1})
    with pytest.raises(RuntimeError):
        with io.atomic_path(path) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("killed")
    assert json.loads(path.read_text()) == {"v": 1}
    assert os.listdir(tmp_path) == ["out.json"]


def test_rejects_writer(tmp_path):
    path = tmp_path / "rejects.jsonl"
    with io.RejectsWriter(path, "scrape") as rw:
        rw.add("a", "tests: missing", {"id": "a"})
        rw.add(None, "line 3: invalid JSON", None)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert rows == [
        {"id": "a", "stage": "scrape", "reason": "tests: missing", "record": {"id": "a"}},
        {"id": None, "stage": "scrape", "reason": "line 3: invalid JSON", "record": None},
    ]


def test_shard_directory_and_batches(tmp_path):
    io.write_problems(tmp_path / "d" / "a.parquet", [make_problem(i) for i in range(3)])
    io.write_problems(tmp_path / "d" / "b.parquet", [make_problem(i) for i in range(3, 5)])
    assert [p.id for p in io.read_problems(tmp_path / "d")] == [f"t/{i}" for i in range(5)]
    batches = list(io.iter_problem_batches(tmp_path / "d", batch_size=2))
    assert [len(b) for b in batches] == [2, 1, 2]


def test_known_extra_columns_keep_their_type_when_values_cannot_tell(tmp_path):
    from microcoder.pipeline.schema import ALIAS_TYPE

    path = tmp_path / "p.parquet"
    io.write_problems(path, [make_problem(0, cluster_id=None, aliases=[])])
    schema = pq.read_schema(path)
    assert schema.field("aliases").type == ALIAS_TYPE
    assert schema.field("cluster_id").type == "string"


def test_shard_folders_skip_hidden_leftovers_of_killed_writes(tmp_path):
    io.write_problems(tmp_path / "d" / "a.parquet", [make_problem(0)])
    io.write_problems(tmp_path / "d" / ".a.parquet.x1y2.parquet", [make_problem(1)])
    io.write_problems(tmp_path / "d" / ".staging" / "b.parquet", [make_problem(2)])
    assert [p.id for p in io.read_problems(tmp_path / "d")] == ["t/0"]
    assert [p.id for b in io.iter_problem_batches(tmp_path / "d") for p in b] == ["t/0"]


def test_writes_never_replace_a_device_or_fifo(tmp_path):
    # A link to /dev/null stands in for the device itself: were the writer to rename over the
    # target, only the link would be lost, never the machine's /dev/null.
    null_link = tmp_path / "null"
    null_link.symlink_to("/dev/null")
    io.write_problems(null_link, [make_problem(1)])
    io.write_json(null_link, {"a": 1})
    assert null_link.is_symlink() and os.path.realpath(null_link) == "/dev/null"
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert not list(tmp_path.glob(".null*")), "no temp file left beside the target"

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    io.write_jsonl(fifo, [{"x": 1}, {"x": 2}])
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is still a FIFO"
    assert got == [b'{"x": 1}\n{"x": 2}\n']


def test_writes_refuse_a_directory_target(tmp_path):
    target = tmp_path / "out.parquet"
    target.mkdir()
    with pytest.raises(FileExistsError, match="is a directory"):
        io.write_problems(target, [make_problem(1)])
    assert target.is_dir() and not list(tmp_path.glob(".out*"))
