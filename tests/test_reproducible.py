"""A dataset version does not move with the machine's speed (issue 37): testgen and validate on a
few seed problems, once here and once on a machine twice as slow by construction
(`evaluator.slowdown: 2`; contention would not do: CPU time is the same beside busy neighbours),
the second with the limits the first derived pinned. Every content file is the same; only the
files of measurements (pipeline/content_digest.METADATA) differ. Without the pins the derived
limits move, so the check can fail. The whole default run: bench/reproducible.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from microcoder.pipeline.content_digest import content_digest, differences
from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.inputs import load_problems
from microcoder.pipeline.io import write_problems
from microcoder.pipeline.pinned_limits import pin
from microcoder.pipeline.testgen.config import TestgenConfig
from microcoder.pipeline.testgen.stage import Testgen
from microcoder.pipeline.validate import Validate, ValidateConfig

SEED = Path(__file__).resolve().parents[1] / "data" / "seed" / "problems.jsonl"
IDS = ("seed/almost-palindrome", "seed/rotate-left", "seed/count-vowels", "seed/longest-rising-run")
# Prepended to a stdio reference: ~0.25 s a run, so its derived limit (5x, rounded) moves on a
# machine 4x slower.
SLOW_REFERENCE = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.25:\n    pass\n"


def seed_subset(tmp_path: Path) -> Path:
    problems = {p.id: p for p in load_problems(SEED).problems}
    chosen = []
    for i, pid in enumerate(IDS):
        p = problems[pid]
        if i % 2 == 0:  # the source states no limit: validate derives it from the references' times
            p = replace(p, meta={**p.meta, "time_limit_stated": False})
        if i == 0:
            refs = [replace(r, code=SLOW_REFERENCE + r.code) for r in p.reference_solutions if r.language == "python"]
            p = replace(p, reference_solutions=refs)
        chosen.append(p)
    path = tmp_path / "problems.parquet"
    write_problems(path, chosen)
    return path


def run(tmp_path: Path, name: str, slowdown: float, pins: Path | None) -> tuple[dict, dict]:
    evaluator = EvaluatorConfig(workers=2, slowdown=slowdown, wall_factor=4.0, wall_slack_s=10.0)
    out = tmp_path / name
    testgen = TestgenConfig(target_tests=8, mutants=2, search_rounds=0, cache_path=str(tmp_path / f"{name}-tg.sqlite"))
    Testgen().run(testgen, seed_subset(tmp_path), out / "testgen", evaluator=evaluator, progress=False)
    validate = ValidateConfig(min_tests=1, cache_path=str(tmp_path / f"{name}-v.sqlite"),
                              pinned_limits=None if pins is None else str(pins))
    Validate().run(validate, out / "testgen" / "problems.parquet", out / "validated", evaluator=evaluator, progress=False)
    return content_digest(out / "testgen"), content_digest(out / "validated")


def test_content_is_the_same_on_a_machine_twice_as_slow_with_pinned_limits(tmp_path):
    testgen_here, validated_here = run(tmp_path, "here", 1.0, None)
    assert "problems.parquet" in validated_here and "report.parquet" not in validated_here
    pins = tmp_path / "time_limits.jsonl"
    assert pin(tmp_path / "here" / "validated" / "time_limits.jsonl", pins)[0] == 2

    testgen_slow, validated_slow = run(tmp_path, "slower", 2.0, pins)
    assert differences(testgen_here, testgen_slow) == []
    assert differences(validated_here, validated_slow) == []

    _, validated_unpinned = run(tmp_path, "unpinned", 4.0, None)
    assert differences(validated_here, validated_unpinned) == ["problems.parquet"]  # the check can fail
