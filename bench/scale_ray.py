"""Judging on Ray (executor=ray) against the local pool, on the same work, and what Ray adds per task.

    .venv/bin/python bench/scale_ray.py                  # seed problems, about 5 minutes on 2 cores
    .venv/bin/python bench/scale_ray.py --k 8 --reps 3   # bigger RL batch, best of 3
    .venv/bin/python bench/scale_ray.py --address auto   # on a running cluster (ray start --head ...)

Work (the problems of data/seed/problems.jsonl, or --problems FILE):
  validate  every reference solution judged on all of its problem's tests (mode all, outputs kept),
            one submission per call from 2 x judges threads, as pipeline/evaluator/programs.py's Runner does for validate;
  rl        one batch of k samples per problem (mode first-failure), as the training reward and
            rollout judging send it: references (AC), a copy that does not compile (CE) and, for
            stdio problems, a copy printing an extra line (WA).
Executors: the local Evaluator with 1 and 2 judges; RayEvaluator with 1 and 2 workers (actors of
one judge each) on a local Ray cluster of this machine's cores (or --address). Times are wall clock
around the judging only (judges started and warmed first; their start is printed apart); each
cell runs --reps times, in a rotated order, and the fastest run counts (the machine is shared).
The driver's CPU time is printed for the Ray cells (on Ray the judging happens elsewhere), and
once more for the rl batch with actors of 2 judges (bigger chunks: what a chunk costs). Then the
per-task overhead of Ray: an actor call that does nothing, and one trivial submission judged per
call through each executor (the latency a small call pays).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from microcoder.pipeline.evaluator import EvaluatorConfig, Submission  # noqa: E402
from microcoder.pipeline.io import read_problems  # noqa: E402
from microcoder.pipeline.schema import Problem, TestCase  # noqa: E402

CE = "def broken(:\n"


def validate_work(problems: list[Problem]) -> list[tuple[Problem, Submission]]:
    return [(p, Submission(p.id, f"{p.id}#ref{i}", r.language, r.code))
            for p in problems for i, r in enumerate(p.reference_solutions)]


def rl_work(problems: list[Problem], k: int) -> list[Submission]:
    subs = []
    for p in problems:
        ref = p.reference_solutions[0]
        for j in range(k):
            kind = ("ac", "ce", "wa", "ac")[j % 4]
            code = {"ac": ref.code, "ce": CE, "wa": ref.code + "\nprint('extra')\n"}[kind]
            if kind == "wa" and (p.style != "stdio" or ref.language != "python"):
                code = ref.code
            subs.append(Submission(p.id, f"{p.id}#s{j}", ref.language if kind != "ce" else "python", code))
    return subs


def run_validate(ev, work) -> tuple[float, float]:
    """One call per reference from 2 x judges threads (programs.Runner, as validate drives it). (wall s, this process's CPU s)"""
    start, cpu = time.perf_counter(), time.process_time()
    with ThreadPoolExecutor(2 * ev.workers) as pool:
        list(pool.map(lambda ps: ev.evaluate_batch({ps[0].id: ps[0]}, [ps[1]], mode="all", keep_outputs=True), work))
    return time.perf_counter() - start, time.process_time() - cpu


def run_rl(ev, problems, subs) -> tuple[float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    ev.evaluate_batch(problems, subs, mode="first-failure")
    return time.perf_counter() - start, time.process_time() - cpu


def make(executor: str, judges: int, cfg: EvaluatorConfig, address: str | None, actor_cpus: int = 1):
    from microcoder.pipeline.evaluator.factory import make_evaluator

    start = time.perf_counter()
    ev = make_evaluator(cfg, executor=executor, ray_address=address, workers=judges,
                        **({"ray_actor_cpus": actor_cpus} if executor == "ray" else {}))
    warm = Problem(id="warm", source="bench", statement="", style="stdio", tests=[TestCase("1\n", "1\n")])
    ev.evaluate_batch([warm], [Submission("warm", f"w{i}", "python", "print(input())") for i in range(2 * judges)])
    return ev, time.perf_counter() - start


def overhead(cfg: EvaluatorConfig, address: str | None, calls: int) -> list[tuple[str, float]]:
    """Median latency (ms) of a no-op actor call and of one trivial submission per call."""
    import ray

    from microcoder.pipeline.evaluator.ray_pool import JudgeActor

    rows = []
    actor = ray.remote(JudgeActor).options(num_cpus=1).remote(replace(cfg, workers=1), 8)
    ray.get(actor.ready.remote())
    lat = []
    for _ in range(calls):
        t = time.perf_counter()
        ray.get(actor.ready.remote())
        lat.append(time.perf_counter() - t)
    rows.append(("ray actor call, no work", statistics.median(lat) * 1e3))
    ray.get(actor.close.remote())
    ray.kill(actor)
    p = Problem(id="echo", source="bench", statement="", style="stdio", tests=[TestCase("1\n", "1\n")])
    for executor in ("local", "ray"):
        ev, _ = make(executor, 1, cfg, address)
        lat = []
        for i in range(calls):
            t = time.perf_counter()
            ev.evaluate_batch([p], [Submission("echo", f"e{i}", "python", "print(input())")])
            lat.append(time.perf_counter() - t)
        ev.close()
        rows.append((f"1 trivial submission per call, {executor}", statistics.median(lat) * 1e3))
    rows.append(("  Ray's share of such a call", rows[2][1] - rows[1][1]))
    return rows


def chunk_cost(cfg: EvaluatorConfig, address: str | None, problems, subs) -> list[tuple[int, int, float]]:
    """The driver's CPU per submission of the rl batch on 2 judges, as actors of 1 or 2 judges
    (chunks of 2 or 4): (judges per actor, chunk size, ms per submission)."""
    rows = []
    for actor_cpus in (1, 2):
        ev, _ = make("ray", 2, cfg, address, actor_cpus)
        _, cpu = run_rl(ev, problems, subs)
        rows.append((actor_cpus, ev._chunk_size(len(subs)), 1e3 * cpu / len(subs)))
        ev.close()
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", default=str(ROOT / "data" / "seed" / "problems.jsonl"))
    ap.add_argument("--k", type=int, default=4, help="RL samples per problem")
    ap.add_argument("--reps", type=int, default=2, help="runs per cell (the fastest is reported)")
    ap.add_argument("--address", default=None, help="ray_address (default: a local cluster of this machine)")
    ap.add_argument("--calls", type=int, default=40, help="calls timed for the per-task overhead")
    args = ap.parse_args()

    import ray

    from microcoder.pipeline.executor import ray_init

    if args.address is None:
        ray.init(address="local", num_cpus=os.cpu_count() or 2, include_dashboard=False, logging_level="warning")
    else:
        ray_init(args.address)
    problems = [p for p in read_problems(args.problems) if p.reference_solutions and p.style in ("stdio", "functional")]
    cfg = EvaluatorConfig()
    vwork, rsubs = validate_work(problems), rl_work(problems, args.k)
    tests_v = sum(len(p.tests) for p, _ in vwork)
    print(f"{len(problems)} problems; validate: {len(vwork)} references, {tests_v} test runs; "
          f"rl: {len(rsubs)} samples; {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}", flush=True)

    results: dict[tuple[str, str, int], float] = {}
    driver_cpu: dict[tuple[str, str, int], float] = {}  # the calling process's CPU s (ray: the driver alone)
    starts: dict[tuple[str, int], float] = {}
    cells = [(e, j) for j in (1, 2) for e in ("local", "ray")]
    for rep in range(args.reps):  # each rep in a rotated order: a burst of load hits different cells
        for executor, judges in cells[rep % len(cells):] + cells[:rep % len(cells)]:
            ev, started = make(executor, judges, cfg, args.address)
            starts[executor, judges] = min(started, starts.get((executor, judges), started))
            for work in ("validate", "rl"):
                took, cpu = run_validate(ev, vwork) if work == "validate" else run_rl(ev, problems, rsubs)
                if took < results.get((work, executor, judges), float("inf")):
                    results[work, executor, judges], driver_cpu[work, executor, judges] = took, cpu
                print(f"  rep {rep} {work:8s} {executor:5s} {judges} judges: {took:7.2f} s "
                      f"(load {os.getloadavg()[0]:.1f})", flush=True)
            ev.close()

    print("\n| work | judges | local s | ray s | ray / local | items/s local | items/s ray | ray driver CPU ms/item |")
    print("|---|---|---|---|---|---|---|---|")
    for work, n in (("validate", len(vwork)), ("rl", len(rsubs))):
        for judges in (1, 2):
            lo, ra = results[work, "local", judges], results[work, "ray", judges]
            print(f"| {work} | {judges} | {lo:.2f} | {ra:.2f} | {ra / lo:.2f} | {n / lo:.1f} | {n / ra:.1f} | "
                  f"{1e3 * driver_cpu[work, 'ray', judges] / n:.2f} |")
    for executor in ("local", "ray"):
        s1, s2 = results["rl", executor, 1], results["rl", executor, 2]
        print(f"{executor}: rl speed-up 1 -> 2 judges x{s1 / s2:.2f}; validate x"
              f"{results['validate', executor, 1] / results['validate', executor, 2]:.2f}")
    print("start (judges up and warm): " + ", ".join(f"{e} {j}: {s:.1f} s" for (e, j), s in starts.items()))
    print("\nthe driver's CPU by chunk size (rl batch, 2 judges)")
    for actor_cpus, chunk, ms in chunk_cost(cfg, args.address, problems, rsubs):
        print(f"  actors of {actor_cpus} judges, chunks of {chunk}: {ms:.2f} ms per submission")
    print("\nper-task overhead (median of", args.calls, "calls)")
    for name, ms in overhead(cfg, args.address, args.calls):
        print(f"  {name:45s} {ms:7.1f} ms")


if __name__ == "__main__":
    main()
