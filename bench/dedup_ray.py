"""Dedup wall time with executor=local vs executor=ray on one input, and a check that both give
the same outputs (problems.parquet, clusters.parquet, rejects.jsonl, stats.json).

Input: the synthetic corpus of bench/dedup_vs_datatrove.py (Zipf vocabulary, competitive-programming
boilerplate, 10% planted variants), N statements, one test each. The seed benchmark is the
decontamination set (so the actors build a benchmark index as in the default run).

The Ray cluster (`ray.init(num_cpus=...)`, a local one) is started before any clock; each
executor runs `--repeat` times alternately and the fastest run counts (load from other processes
on a shared machine hits both alike). The first Ray run also starts the Ray Data workers and
actors; its time is printed separately.

    .venv/bin/python bench/dedup_ray.py --n 20000 --cpus 2
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def run(inp: Path, out: Path, executor: str, block: int) -> float:
    from microcoder.pipeline.dedup import Dedup, DedupConfig

    cfg = DedupConfig(executor=executor, ray_block_size=block, benchmarks=[
        {"name": "seed-benchmark", "path": str(ROOT / "data" / "seed" / "benchmark.jsonl")}])
    t0 = time.perf_counter()
    Dedup().run(cfg, inp, out, progress=False)
    return time.perf_counter() - t0


def same_outputs(a: Path, b: Path) -> bool:
    from microcoder.pipeline.io import read_table

    tables = all(read_table(a / n).equals(read_table(b / n)) for n in ("problems.parquet", "clusters.parquet"))
    return tables and all((a / n).read_text() == (b / n).read_text() for n in ("rejects.jsonl", "stats.json"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=20000, help="statements in the synthetic corpus")
    ap.add_argument("--cpus", type=int, default=os.cpu_count() or 1, help="CPUs of the local Ray cluster")
    ap.add_argument("--block", type=int, default=2000, help="ray_block_size (problems per signature task)")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()

    import logging

    import ray
    from dedup_vs_datatrove import synthetic, write_corpus

    # the stage's own log lines (executor, phase times); Ray's stay quiet
    handler = logging.StreamHandler(sys.stdout)
    handler.addFilter(logging.Filter("microcoder.pipeline.dedup"))
    logging.basicConfig(level=logging.INFO, format="  %(message)s", handlers=[handler])
    t0 = time.perf_counter()
    rows = synthetic(args.n, args.seed)
    with tempfile.TemporaryDirectory(prefix="dedup-ray-") as tmp:
        work = Path(tmp)
        write_corpus(rows, work)
        inp = work / "corpus.parquet"
        print(f"corpus: {len(rows)} statements ({time.perf_counter() - t0:.1f}s to build); "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        t0 = time.perf_counter()
        ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, logging_level="error")
        print(f"ray.init (local cluster, {args.cpus} CPUs): {time.perf_counter() - t0:.1f}s")
        ray.data.DataContext.get_current().enable_progress_bars = False
        times: dict[str, list[float]] = {"local": [], "ray": []}
        for i in range(args.repeat):
            for executor in ("local", "ray"):
                times[executor].append(run(inp, work / f"{executor}-{i}", executor, args.block))
        same = same_outputs(work / "local-0", work / "ray-0")
        ray.shutdown()
    best = {k: min(v) for k, v in times.items()}
    print(f"local (1 process):             best {best['local']:.1f}s  runs {[round(t, 1) for t in times['local']]}")
    print(f"ray ({args.cpus} CPUs, block {args.block}):  best {best['ray']:.1f}s  runs "
          f"{[round(t, 1) for t in times['ray']]} (first run starts the workers)")
    print(f"ray / local: {best['ray'] / best['local']:.2f}x; identical outputs: {same}")
    if not same:
        sys.exit("executor=ray and executor=local disagree")


if __name__ == "__main__":
    main()
