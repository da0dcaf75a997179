"""The measurement pool of held-out strength (issue 36, item 4): the Kattis adapter keeps every
accepted and known-wrong submission unless a cap is asked for."""

from __future__ import annotations

from microcoder.pipeline.sources import kattis
from microcoder.pipeline.sources.base import SourceContext


def package(tmp_path, n_wrong: int):
    pkg = tmp_path / "pkg"
    (pkg / "data" / "secret").mkdir(parents=True)
    (pkg / "problem.yaml").write_text("name: Sum\n")
    (pkg / "problem_statement").mkdir()
    (pkg / "problem_statement" / "problem.en.md").write_text("Print a + b.\n")
    (pkg / "data" / "secret" / "1.in").write_text("1 2\n")
    (pkg / "data" / "secret" / "1.ans").write_text("3\n")
    for label, count in (("accepted", 6), ("wrong_answer", n_wrong)):
        (pkg / "submissions" / label).mkdir(parents=True)
        for i in range(count):
            (pkg / "submissions" / label / f"s{i}.py").write_text(f"print({i})\n")
    return pkg


def test_every_submission_is_kept_by_default_and_a_cap_still_applies(tmp_path):
    pkg = package(tmp_path, 9)
    (p,) = list(kattis.read(kattis.Options(path=str(pkg)), SourceContext("kattis")))
    assert len(p.reference_solutions) == 6 and len(p.wrong_solutions) == 9
    (q,) = list(kattis.read(kattis.Options(path=str(pkg), max_solutions=2, max_wrong_solutions=3), SourceContext("kattis")))
    assert len(q.reference_solutions) == 2 and len(q.wrong_solutions) == 3
