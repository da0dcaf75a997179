"""Benchmark loading (our layout, LiveCodeBench layout, date windows) and contamination checks."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from microcoder.pipeline.dedup.decontaminate import (
    BenchmarkItem,
    BenchmarkSpec,
    DecontaminationSettings,
    Decontaminator,
    load_benchmark,
)
from microcoder.pipeline.dedup.minhash import minhashes

BOILERPLATE = "The first line contains a single integer t (1 <= t <= 100), the number of test cases."
BENCH_STATEMENT = (
    "Alice has a garden with n flower beds arranged in a row; the i-th bed holds a_i tulips. Every "
    "morning she may pick any two adjacent beds and move one tulip from the fuller bed to the emptier "
    "one. She wants every bed to hold the same number of tulips as soon as possible. " + BOILERPLATE +
    " Each test case consists of the number n followed by the n counts. For each test case print the "
    "minimum number of mornings she needs, or -1 if the beds can never be balanced."
)
OTHER_STATEMENT = (
    "Bob collects rare stamps and keeps them in m albums. The j-th album has b_j pages and every page "
    "holds up to four stamps. " + BOILERPLATE + " For every test case you are given m and the page "
    "counts; output the largest number of stamps Bob can store if no album may be completely full."
)


def _lcb_rows():
    return [
        {"question_id": "abc300_a", "question_title": "Garden", "question_content": BENCH_STATEMENT,
         "contest_date": "2024-09-01T00:00:00", "platform": "atcoder"},
        {"question_id": "1999A", "question_title": "Old", "question_content": OTHER_STATEMENT,
         "contest_date": "2023-01-01T00:00:00", "platform": "codeforces"},
    ]


def _settings(**kw) -> DecontaminationSettings:
    return DecontaminationSettings(**kw)


def _check(decon: Decontaminator, text: str):
    x = decon.featurize(text)
    return decon.check(x, minhashes([x.shingles], decon.s.num_perm, decon.s.seed)[0] if x.shingles.size else None)


def test_spec_validation():
    with pytest.raises(ValueError, match="unknown keys"):
        BenchmarkSpec.from_params({"name": "x", "path": "p", "colour": "red"})
    with pytest.raises(ValueError, match="format"):
        BenchmarkSpec.from_params({"name": "x", "path": "p", "format": "csv"})
    with pytest.raises(ValueError, match="missing"):
        BenchmarkSpec.from_params({"name": "x"})
    spec = BenchmarkSpec.from_params({"name": "lcb", "path": "p", "format": "livecodebench",
                                      "date_from": dt.date(2024, 8, 1), "date_to": "2025-02-01T00:00:00"})
    assert (spec.date_from, spec.date_to) == ("2024-08-01", "2025-02-01")


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".json"])
def test_livecodebench_layout_with_date_window(tmp_path, suffix):
    path = tmp_path / f"lcb{suffix}"
    rows = _lcb_rows()
    if suffix == ".jsonl":
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    elif suffix == ".json":
        path.write_text(json.dumps(rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    spec = BenchmarkSpec.from_params({"name": "lcb", "path": str(path), "format": "livecodebench",
                                      "date_from": "2024-08-01"})
    items, stats = load_benchmark(spec)
    assert [(i.id, i.contest_date) for i in items] == [("abc300_a", "2024-09-01")]
    assert stats["rows"] == 2 and stats["outside_window"] == 1 and stats["items"] == 1


def test_problems_layout_folder_and_errors(tmp_path):
    folder = tmp_path / "bench"
    folder.mkdir()
    (folder / "a.jsonl").write_text(json.dumps({"id": "b1", "statement": BENCH_STATEMENT}) + "\n")
    (folder / "b.jsonl").write_text(json.dumps({"id": "b2", "statement": OTHER_STATEMENT,
                                                "contest_date": "2020-01-01"}) + "\n")
    items, stats = load_benchmark(BenchmarkSpec("ours", str(folder), date_from="2021-01-01"))
    assert [i.id for i in items] == ["b1"]  # undated items stay in (the safe side)
    assert stats["undated"] == 1
    (folder / "c.jsonl").write_text(json.dumps({"id": "b3", "question_content": "wrong layout"}) + "\n")
    with pytest.raises(ValueError, match="no 'statement' text"):
        load_benchmark(BenchmarkSpec("ours", str(folder)))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_benchmark(BenchmarkSpec("gone", str(tmp_path / "missing.jsonl")))
    empty, stats = load_benchmark(BenchmarkSpec("gone", str(tmp_path / "missing.jsonl"), optional=True))
    assert empty == [] and stats["missing"] is True


def test_hub_ids_go_through_datasets(monkeypatch):
    import datasets

    calls = []

    def fake_load_dataset(path, split, **kwargs):
        calls.append((path, split, kwargs))
        return _lcb_rows()

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    items, _ = load_benchmark(BenchmarkSpec("lcb", "livecodebench/code_generation_lite", "livecodebench"))
    assert calls == [("livecodebench/code_generation_lite", "test", {})]
    load_benchmark(BenchmarkSpec.from_params({"name": "lcb", "path": "livecodebench/code_generation_lite",
                                              "format": "livecodebench", "split": "train",
                                              "data_files": "test6.jsonl"}))
    assert calls[-1] == ("livecodebench/code_generation_lite", "train", {"data_files": "test6.jsonl"})
    assert len(items) == 2


def test_copy_in_other_formatting_is_caught_with_evidence():
    decon = Decontaminator([BenchmarkItem("lcb", "abc300_a", BENCH_STATEMENT)], _settings())
    markdown_copy = ("# Tulips\n\n" + BENCH_STATEMENT.replace("a_i", "$a_{i}$").replace("<=", "\\le")
                     + "\n\n## Notes\nA short note that our scrape added.")
    hit = _check(decon, markdown_copy)
    assert hit is not None and (hit.benchmark, hit.benchmark_id) == ("lcb", "abc300_a")
    assert hit.method == "ngram+minhash" and hit.ngram_overlap > 0.9 and hit.jaccard > 0.8
    ev = hit.evidence(13)
    assert ev["ngram_n"] == 13 and ev["shared_ngrams"] == hit.shared_ngrams


def test_shared_boilerplate_is_not_contamination():
    decon = Decontaminator([BenchmarkItem("lcb", "abc300_a", BENCH_STATEMENT)], _settings())
    assert _check(decon, OTHER_STATEMENT) is None


def test_absolute_ngram_count_is_stricter():
    # One shared 13-gram is enough in count mode: the boilerplate sentence alone then matches.
    strict = Decontaminator([BenchmarkItem("lcb", "abc300_a", BENCH_STATEMENT)],
                            _settings(ngram_min_overlap=1, minhash_threshold=1.0))
    hit = _check(strict, OTHER_STATEMENT)
    assert hit is not None and hit.method == "ngram" and hit.shared_ngrams >= 1


def test_embedded_benchmark_is_caught_by_containment():
    decon = Decontaminator([BenchmarkItem("lcb", "abc300_a", BENCH_STATEMENT)], _settings())
    padded = OTHER_STATEMENT + " " + BENCH_STATEMENT + " " + OTHER_STATEMENT.replace("Bob", "Carol")
    hit = _check(decon, padded)
    assert hit is not None and "ngram" in hit.method and hit.ngram_overlap == 1.0


def test_no_benchmarks_means_no_checks():
    assert _check(Decontaminator([], _settings()), BENCH_STATEMENT) is None
