"""Rollout generation throughput on a GPU: the vLLM offline engine vs transformers `generate`.

Same prompts (real Codeforces statements from ../shared/bench-data when present, else synthetic),
same sampling, k samples per prompt; prints tokens/s and samples/s side by side with ratios.
No model can be downloaded on the bench machines, so by default a random-weight Qwen3 of a
realistic shape is built locally (--hidden/--layers); pass --model for a real checkpoint.

    python bench/rollout_gpu.py --backends vllm,hf --problems 64 --k 8 --max-tokens 512
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BENCH_DATA = ROOT.parent / "shared" / "bench-data" / "stdio" / "codeforces_test.json"


def load_problems(count: int):
    from pipeline.schema import Problem

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

    from pipeline.models import build_tokenizer

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
    from pipeline.rollout.backends import SamplingParams, get_backend

    backend = get_backend(name, model=model, progress=False, **options)
    sampling = SamplingParams(temperature=1.0, top_p=1.0, max_tokens=max_tokens, seed=0)
    backend.generate(prompts[:2], 1, SamplingParams(max_tokens=8))  # warm-up: load, compile, allocate
    t0 = time.perf_counter()
    out = backend.generate(prompts, k, sampling)
    seconds = time.perf_counter() - t0
    if hasattr(backend, "close"):
        backend.close()
    samples = sum(len(g) for g in out)
    tokens = sum(s.token_count for g in out for s in g)
    return {"backend": name, "prompts": len(prompts), "samples": samples, "tokens": tokens,
            "seconds": round(seconds, 2), "tokens_per_s": round(tokens / seconds, 1),
            "samples_per_s": round(samples / seconds, 2),
            "truncated": sum(s.truncated for g in out for s in g)}


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
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit("rollout_gpu.py needs a CUDA GPU")
    from pipeline.rollout.prompts import build_messages

    prompts = [build_messages(p) for p in load_problems(args.problems)]
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(build_random_model(Path(tmp) / "model", args.hidden, args.layers))
        results = []
        for name in args.backends.split(","):
            options = {"batch_size": args.hf_batch_size} if name == "hf" else {}
            try:
                results.append(run_backend(name, model, prompts, args.k, args.max_tokens, options))
            except ImportError as e:
                print(f"{name}: skipped ({e})")
    if not results:
        sys.exit("no backend ran")
    base = next((r for r in results if r["backend"] == "hf"), results[0])
    print(f"\nmodel {args.model or f'random Qwen3 hidden={args.hidden} layers={args.layers}'}, "
          f"{args.problems} prompts x k={args.k}, max_tokens={args.max_tokens}, GPU {torch.cuda.get_device_name()}")
    header = f"{'backend':<8}{'samples':>9}{'tokens':>10}{'seconds':>9}{'tokens/s':>11}{'samples/s':>11}{'x ' + base['backend']:>8}"
    print(header + "\n" + "-" * len(header))
    for r in results:
        ratio = r["tokens_per_s"] / base["tokens_per_s"]
        print(f"{r['backend']:<8}{r['samples']:>9}{r['tokens']:>10}{r['seconds']:>9}{r['tokens_per_s']:>11}"
              f"{r['samples_per_s']:>11}{ratio:>8.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
