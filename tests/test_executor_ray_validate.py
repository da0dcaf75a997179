"""validate with executor=ray on the session's real Ray cluster against executor=local, and judges
starting on a cluster whose CPUs other work holds. (Their own module: the judging tests'
evaluator holds the session cluster's 2 CPUs until that module ends.)"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from microcoder.pipeline.evaluator import EvaluatorConfig, Submission
from microcoder.pipeline.io import read_problems
from microcoder.pipeline.schema import Problem, ReferenceSolution, TestCase, WrongSolution
from microcoder.pipeline.validate import ValidateConfig, validate_problems

FAST = EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)
SEED = Path(__file__).resolve().parents[1] / "data" / "seed" / "problems.jsonl"
SUM = "a, b = map(int, input().split())\nprint(a + b)\n"


def kept_record(p: Problem) -> dict:
    return p.to_dict()  # whole: nothing measured is in a record (measured times: time_limits.jsonl)


def test_validate_on_ray_same_report_and_kept_problems(ray_cluster, tmp_path, caplog):
    """validate with executor=ray: the same kept problems, rejects and report as local (times
    aside: measured, they differ from run to run either way)."""
    seed = {p.id: p for p in read_problems(SEED)}
    tests = [TestCase(f"{i} {2 * i + 1}\n", ("999" if i == 2 else str(3 * i + 1)) + "\n") for i in range(5)]
    made = Problem(id="t/sum-one-wrong-test", source="t", style="stdio", statement="Print a + b.", tests=tests,
                   reference_solutions=[ReferenceSolution("python", SUM)],
                   wrong_solutions=[WrongSolution("python", "a, b = map(int, input().split())\nprint(a + b + (a > 3))\n",
                                                  "wrong_answer")])
    problems = [seed["seed/climb-ways"], seed["seed/lis-length"], seed["seed/malformed-missing-tests"], made]

    def run(executor: str):
        cfg = ValidateConfig(min_tests=3, derive_time_limit="never", executor=executor,
                             cache_path=str(tmp_path / f"{executor}.sqlite"))
        res = validate_problems(problems, cfg, evaluator=FAST, progress=False)
        report = [{k: v for k, v in r.items() if k not in ("time_s", "slow")} for r in res.report]
        return ([kept_record(p) for p in res.kept], [(p.id, why) for p, why in res.rejects], report)

    local = run("local")
    with caplog.at_level("INFO", logger="microcoder.pipeline.evaluator.ray_pool"):
        on_ray = run("ray")
    assert "executor: ray (" in caplog.text  # it did judge on Ray
    kept = {d["id"]: d for d in local[0]}
    assert set(kept) == {"seed/climb-ways", "seed/lis-length", "t/sum-one-wrong-test"} and len(local[1]) == 1
    assert len(kept["t/sum-one-wrong-test"]["tests"]) == 4  # its wrong expected output was dropped
    assert any(r["role"] == "wrong" for r in local[2])  # the known-wrong solution ran too
    assert on_ray == local


def test_judging_starts_on_the_actors_that_fit(ray_cluster, caplog):
    """Another actor holds one of the 2 CPUs (a rollout replica, say): the judges start on the one
    that fits instead of waiting for both, and the other joins once the CPU is free."""
    from microcoder.pipeline.evaluator.ray_pool import RayEvaluator

    @ray_cluster.remote(num_cpus=1)
    class Hog:
        def ping(self) -> int:
            return 1

    hog = Hog.remote()
    ray_cluster.get(hog.ping.remote())
    problem = Problem(id="echo", source="t", statement="", style="stdio", tests=[TestCase("1\n", "1\n")])
    subs = [Submission("echo", f"e{i}", "python", "print(input())") for i in range(4)]
    with caplog.at_level("WARNING", logger="microcoder.pipeline.evaluator.ray_pool"):
        ev = RayEvaluator(dataclasses.replace(FAST, workers=2), cpus_per_actor=1, start_grace_s=1.0)
    try:
        assert "1 of 2 ray judge actors still wait for resources" in caplog.text
        assert [v.status for v in ev.evaluate_batch([problem], subs)] == ["AC"] * 4
        ray_cluster.kill(hog)
        assert [v.status for v in ev.evaluate_batch([problem], subs)] == ["AC"] * 4
    finally:
        ev.close()
        ray_cluster.kill(hog)
