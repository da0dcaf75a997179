"""Rollout generation throughput on a GPU: the vLLM offline engine vs transformers `generate`.

Same prompts (real Codeforces statements from ../shared/bench-data when present, else synthetic),
same sampling, k samples per prompt; prints tokens/s and samples/s side by side with ratios.
No model can be downloaded on the bench machines, so by default a random-weight Qwen3 of a
realistic shape is built locally (--hidden/--layers); pass --model for a real checkpoint.

Also checked on the way, for the first GPU run: prompts over the budget (max_model_len -
max_tokens, counted with the model's tokenizer) are left out and counted, as the stages reject
them; each backend is closed before the next starts, and the free GPU memory after each close
is printed (vLLM's engine must be gone before transformers loads); `--data-parallel N` runs N
vLLM engine processes (on one GPU: `--gpus 0,0`), each the parent of its EngineCore;
`--batch-invariant` sets VLLM_BATCH_INVARIANT=1.

    python bench/rollout_gpu.py --backends vllm,hf --problems 64 --k 8 --max-tokens 512
    python bench/rollout_gpu.py --backends vllm --data-parallel 2 --gpus 0,0 --gpu-memory-utilization 0.4
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DATA = ROOT.parent / "shared" / "bench-data" / "stdio" / "codeforces_test.json"


def load_problems(count: int):
    from microcoder.pipeline.schema import Problem

    statements: list[str] = []
    if BENCH_DATA.exists():
        statements = [row["problem"] for row in json.loads(BENCH_DATA.read_text())[:count]]
    while len(statements) < count:  # synthetic fill-in: varied lengths
        i = len(statements)
        statements.append(f"Given n = {i} integers, print the sum of the largest {i % 7 + 1} of them. " * (1 + i % 5))
    return [Problem(id=f"b{i}", source="bench", statement=s, style="stdio") for i, s in enumerate(statements)]


def build_random_model(out: Path, hidden: int, layers: int) -> Path:
    """A random-weight Qwen3 with the local tokenizer (head_dim 64, GQA 4:1)."""
    import torch
    from transformers import Qwen3Config, Qwen3ForCausalLM

    from microcoder.pipeline.models import build_tokenizer

    tok = build_tokenizer()
    heads = max(hidden // 64, 1)
    cfg = Qwen3Config(vocab_size=len(tok), hidden_size=hidden, intermediate_size=hidden * 3, num_hidden_layers=layers,
                      num_attention_heads=heads, num_key_value_heads=max(heads // 4, 1), head_dim=64,
                      max_position_embeddings=32768, tie_word_embeddings=True, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id, torch_dtype="bfloat16")
    torch.manual_seed(0)
    Qwen3ForCausalLM(cfg).to(torch.bfloat16).save_pretrained(out)
    tok.save_pretrained(out)
    return out


def run_backend(name: str, model: str, prompts, k: int, max_tokens: int, options: dict) -> dict:
    import torch

    from microcoder.pipeline.generation.backends import SamplingParams, get_backend

    backend = get_backend(name, model=model, progress=False, **options)
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=max_tokens, seed=0)
    try:
        backend.generate(prompts[:2], 1, SamplingParams(max_tokens=8))  # warm-up: load, compile, allocate
        t0 = time.perf_counter()
        out = backend.generate(prompts, k, sampling)
        seconds = time.perf_counter() - t0
    finally:
        backend.close()
    free, total = torch.cuda.mem_get_info()
    samples = sum(len(g) for g in out)
    tokens = sum(s.token_count for g in out for s in g)
    return {"backend": name, "prompts": len(prompts), "samples": samples, "tokens": tokens,
            "seconds": round(seconds, 2), "tokens_per_s": round(tokens / seconds, 1),
            "samples_per_s": round(samples / seconds, 2),
            "truncated": sum(s.truncated for g in out for s in g),
            "free_gib_after_close": round(free / 2**30, 1), "total_gib": round(total / 2**30, 1)}


def within_budget(model: str, prompts: list, max_tokens: int, max_model_len: int) -> tuple[list, int]:
    """The prompts the stages would keep (prompt tokens + max_tokens <= max_model_len)."""
    from microcoder.pipeline.generation.budget import budget_rejects

    over = budget_rejects([(str(i), m) for i, m in enumerate(prompts)], models=[model], max_tokens=max_tokens,
                          max_model_len=max_model_len, what="bench")
    return [m for i, m in enumerate(prompts) if str(i) not in over], len(over)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="model path or Hub id (default: build a random-weight Qwen3)")
    ap.add_argument("--hidden", type=int, default=1024)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--backends", default="vllm,hf")
    ap.add_argument("--problems", type=int, default=64)
    ap.add_argument("--k", type=int, default=8)
    ap.add_argument("--max-tokens", type=int, default=512)
    ap.add_argument("--hf-batch-size", type=int, default=16)
    ap.add_argument("--max-model-len", type=int, help="vLLM context (default: max_tokens + 4096)")
    ap.add_argument("--gpu-memory-utilization", type=float, default=0.9)
    ap.add_argument("--data-parallel", type=int, default=1, help="vLLM engine processes")
    ap.add_argument("--gpus", help="device ids for the vLLM engines, e.g. 0,1 or 0,0 (two engines on GPU 0)")
    ap.add_argument("--batch-invariant", action="store_true", help="VLLM_BATCH_INVARIANT=1 (slower, batch-independent)")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()
    if args.batch_invariant:
        os.environ["VLLM_BATCH_INVARIANT"] = "1"  # before vLLM is imported (and inherited by its processes)

    import torch

    if not torch.cuda.is_available():
        sys.exit("rollout_gpu.py needs a CUDA GPU")
    from microcoder.pipeline.generation.prompts import build_messages

    max_model_len = args.max_model_len or args.max_tokens + 4096
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(build_random_model(Path(tmp) / "model", args.hidden, args.layers))
        prompts, rejected = within_budget(model, [build_messages(p) for p in load_problems(args.problems)],
                                          args.max_tokens, max_model_len)
        results = []
        for name in args.backends.split(","):
            if name == "hf":
                options = {"batch_size": args.hf_batch_size}
            else:
                options = {"max_model_len": max_model_len, "gpu_memory_utilization": args.gpu_memory_utilization,
                           "data_parallel_size": args.data_parallel, "gpus": args.gpus}
            try:
                results.append(run_backend(name, model, prompts, args.k, args.max_tokens, options))
            except ImportError as e:
                print(f"{name}: skipped ({e})")
    if not results:
        sys.exit("no backend ran")
    base = next((r for r in results if r["backend"] == "hf"), results[0])
    print(f"\nmodel {args.model or f'random Qwen3 hidden={args.hidden} layers={args.layers}'}, "
          f"{len(prompts)} prompts x k={args.k} ({rejected} of {args.problems} over the prompt budget "
          f"{max_model_len} - {args.max_tokens}), max_tokens={args.max_tokens}, vLLM data parallel "
          f"{args.data_parallel}{', batch-invariant' if args.batch_invariant else ''}, GPU {torch.cuda.get_device_name()}")
    header = (f"{'backend':<8}{'samples':>9}{'tokens':>10}{'seconds':>9}{'tokens/s':>11}{'samples/s':>11}"
              f"{'x ' + base['backend']:>8}{'free GiB after close':>22}")
    print(header + "\n" + "-" * len(header))
    for r in results:
        ratio = r["tokens_per_s"] / base["tokens_per_s"]
        print(f"{r['backend']:<8}{r['samples']:>9}{r['tokens']:>10}{r['seconds']:>9}{r['tokens_per_s']:>11}"
              f"{r['samples_per_s']:>11}{ratio:>8.2f}{r['free_gib_after_close']:>15} / {r['total_gib']}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
