"""Stdin/stdout problems: a generator program per problem, written by a model through the rollout
backends (or authored, from a jsonl of `{id, generator, validator?}`), run in the sandbox once per
(tier, seed). The generator reads one line `<tier> <seed>` (tier: small | large | edge) and prints
one test input; the optional validator reads a test input and exits 0 when it is valid.

Every generated input must pass every input validator the problem ships (Kattis
`input_validators/`, see `microcoder.pipeline.testgen.validators`) and the generator's own validator; an input
one of them rejects, or that no usable validator could judge, is dropped and counted. Nothing the
model writes runs outside the evaluator's sandbox.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from microcoder.pipeline.inputs import InputError, require_input
from microcoder.pipeline.io import read_jsonl
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.testgen.functional import Candidate
from microcoder.pipeline.testgen.runner import Job, collect

TIERS = ("small", "large", "edge")
TIER_OF = {"small": "random", "large": "max", "edge": "edge"}  # the generator's tiers in testgen's terms
# why a validated input is dropped, by category (the validators' own reasons name the validator)
REJECTED = "input validator rejected the input"
UNUSABLE = "input validator unusable"
CRASHED = "input validator crashed on the input"

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
    from microcoder.pipeline.generation.backends import SamplingParams, get_backend
    from microcoder.pipeline.generation.extract import answer_part, fenced_blocks

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


@dataclass
class Plan:
    """One problem's generator runs: a `(tier, seed)` per input wanted."""

    key: Any  # the caller's handle
    problem: Problem
    generator: Generator
    runs: list[tuple[str, int]]
    existing: set[str]  # inputs the problem has already (a repeat is dropped)


def run_generators(evaluator, plans: list[Plan], max_input_bytes: int) -> dict[Any, tuple[list[Candidate], Counter]]:
    """{key: (candidates, dropped by reason)}: each generator once per (tier, seed), in the sandbox;
    a run that fails, prints nothing or repeats an input gives no candidate (counted)."""
    jobs = []
    for plan in plans:
        gen_problem = replace(plan.problem, checker=None, time_limit_s=max(plan.problem.time_limit_s, 5.0))
        jobs.append(Job(plan.key, gen_problem, "python", plan.generator.code,
                        [f"{tier} {seed}\n" for tier, seed in plan.runs]))
    out = collect(evaluator, jobs, max_input_bytes)
    result = {}
    for plan in plans:
        candidates, dropped = [], Counter()
        seen = set(plan.existing)
        for (tier, seed), run in zip(plan.runs, out[plan.key], strict=True):
            if not run.ok or not run.output or not run.output.strip():
                dropped[f"generator {run.status if not run.ok else 'empty output'}"] += 1
                continue
            text = run.output if run.output.endswith("\n") else run.output + "\n"
            if text in seen:
                dropped["duplicate input"] += 1
                continue
            seen.add(text)
            candidates.append(Candidate(text, "generator", f"{plan.generator.source}:{tier}", seed,
                                        tier=TIER_OF.get(tier, "random")))
        result[plan.key] = (candidates, dropped)
    return result


def input_validators(p: Problem, generator: Generator | None) -> list:
    """The validators every generated input of `p` must pass: the problem's own (Kattis
    `input_validators/`) and the generator's, where it has one."""
    from microcoder.pipeline.testgen.validators import InputValidator, validators_of

    own = list(validators_of(p))
    if generator is not None and generator.validator:
        own.append(InputValidator("authored", "python", generator.validator, 0))
    return own


def keep_valid(evaluator, items: list[tuple[Problem, list, list[Candidate]]]) -> list[tuple[list[Candidate], Counter]]:
    """Per (problem, validators, candidates): the candidates every validator accepts, and the rest
    counted by why (`REJECTED`, `UNUSABLE`, `CRASHED`)."""
    from microcoder.pipeline.testgen.validators import check_inputs, is_unusable

    todo = [(p, vs, [c.input for c in cands]) for p, vs, cands in items if vs and cands]
    verdicts = iter(check_inputs(evaluator, todo) if todo else [])
    out = []
    for _p, vs, cands in items:
        if not (vs and cands):
            out.append((cands, Counter()))
            continue
        kept, dropped = [], Counter()
        for c, why in zip(cands, next(verdicts), strict=True):
            if why is None:
                kept.append(c)
            else:
                dropped[UNUSABLE if is_unusable(why) else REJECTED if why.startswith("rejected by") else CRASHED] += 1
        out.append((kept, dropped))
    return out
