"""Stdin/stdout problems: a generator program per problem, written by a model through the rollout
backends (or authored, from a jsonl of `{id, generator, validator?}`), run in the sandbox once per
(tier, seed). The generator reads one line `<tier> <seed>` (tier: small | large | edge) and prints
one test input; the optional validator reads a test input and exits 0 when it is valid. Nothing
the model writes runs outside the evaluator's sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.inputs import InputError, require_input
from pipeline.io import read_jsonl
from pipeline.schema import Problem

TIERS = ("small", "large", "edge")

PROMPT = """You write test-data generators for competitive programming problems.

Problem statement:
{statement}

Write a Python 3 program that reads one line from standard input, `<tier> <seed>`, where tier is
`small`, `large` or `edge` and seed is an integer, and prints ONE valid test input for this problem
to standard output, in exactly the input format of the statement. Seed `random` with the seed so the
output is deterministic. `small`: tiny sizes; `large`: sizes near the stated maxima; `edge`: boundary
cases (minimum sizes, extreme values, all-equal values). Every input must satisfy all constraints.

Then write a second program, the validator, that reads a test input from standard input and exits
with status 0 if it satisfies every constraint of the statement, 1 otherwise.

Answer with two fenced ```python blocks: the generator first, then the validator."""


@dataclass
class Generator:
    code: str
    validator: str | None
    source: str  # "authored:<path>" | "model:<backend>/<model>"


def tier_plan(n: int) -> list[tuple[str, int]]:
    """(tier, seed) pairs for `n` tests: edge first, then small, then large, round robin."""
    out: list[tuple[str, int]] = []
    i = 0
    while len(out) < n:
        out.append((TIERS[(i + 2) % 3], i // 3))
        i += 1
    return out


def authored_generators(path: str | Path | None) -> dict[str, Generator]:
    """{problem id: Generator} from a jsonl of `{id, generator, validator?}` records."""
    if not path:
        return {}
    out = {}
    for _n, d, err in read_jsonl(require_input(path, "stdio_generators")):
        if err is not None or not isinstance(d.get("id"), str) or not isinstance(d.get("generator"), str):
            raise InputError(f"stdio_generators {path}: {err or 'each record needs string id and generator'}")
        out[d["id"]] = Generator(d["generator"], d.get("validator"), f"authored:{Path(path).name}")
    return out


def model_generators(problems: list[Problem], backend: str, model: str, options: dict[str, Any],
                     max_tokens: int, temperature: float, seed: int) -> dict[str, Generator]:
    """Ask the model (rollout backends) for a generator and a validator per problem."""
    from pipeline.rollout.backends import SamplingParams, get_backend
    from pipeline.rollout.extract import answer_part, fenced_blocks

    if not problems:
        return {}
    engine = get_backend(backend, model=model, **options)
    prompts = [[{"role": "user", "content": PROMPT.format(statement=p.statement)}] for p in problems]
    samples = engine.generate(prompts, 1, SamplingParams(temperature=temperature, max_tokens=max_tokens, seed=seed))
    out = {}
    for p, group in zip(problems, samples, strict=True):
        text = answer_part(group[0].text) if group else None
        blocks = [b.code for b in fenced_blocks(text or "") if b.closed and b.info in ("", "python", "py", "python3")]
        if blocks and blocks[0].strip():
            out[p.id] = Generator(blocks[0], blocks[1] if len(blocks) > 1 and blocks[1].strip() else None,
                                  f"model:{backend}/{model}")
    return out
