"""testgen's params (the `testgen:` section): what every testgen module reads, apart from the stage
that runs them (`stage.py`), so the search and the stage both import it and not each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from microcoder.pipeline.executor import ExecutionFields


@dataclass
class GeneratorModelConfig:
    """The model that writes generator programs for stdio problems without an authored one."""

    backend: str | None = field(default=None, metadata={
        "help": "Rollout backend that writes stdio generators (hf | vllm | openai); null: none."})
    model: str = field(default="models/tiny", metadata={"help": "Model for the stdio generator programs."})
    backend_options: dict[str, Any] = field(default_factory=dict, metadata={
        "help": "The backend's constructor options (as rollout.backend_options)."})
    max_tokens: int = field(default=2048, metadata={"help": "Token budget of a generator answer."})
    temperature: float = field(default=0.0, metadata={"help": "Sampling temperature of the generator answer."})

    def __post_init__(self) -> None:
        from microcoder.pipeline.generation.backends import BACKENDS, check_temperature

        if self.backend is not None and self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {list(BACKENDS)} or null, got {self.backend!r}")
        check_temperature(self.temperature)
        if self.max_tokens < 1:
            raise ValueError(f"max_tokens must be >= 1, got {self.max_tokens}")


@dataclass
class TestgenConfig(ExecutionFields):
    __test__ = False  # not a pytest test class
    target_tests: int = field(default=32, metadata={"help": "Add generated tests until a problem has this many."})
    seed: int = field(default=0, metadata={"help": "Seed of every random draw (same seed, same tests)."})
    max_elements: int = field(default=10_000, metadata={
        "help": "Most numbers / characters in one edge or random input (caps the stated maxima there); the max "
                "and hack tiers reach the stated maxima, capped by max_input_bytes only."})
    max_input_bytes: int = field(default=4_000_000, metadata={
        "help": "Most bytes of one generated input (a 10^5-element array of 10^9 values is ~1.1 MB)."})
    max_problem_bytes: int = field(default=16_000_000, metadata={
        "help": "Most bytes of a problem's generated inputs together (the search's included)."})
    max_output_bytes: int = field(default=1_000_000, metadata={"help": "Drop an input whose reference output is longer."})
    overgenerate: float = field(default=1.5, metadata={"help": "Candidates per missing test (some are dropped)."})
    slow_fraction: float = field(default=0.5, metadata={"help": "A reference taking more than this fraction of the time limit on an input does not vote on its output (none left: the input is dropped)."})
    time_budget_s: float = field(default=20.0, metadata={"help": "Most reference CPU seconds a problem's generated tests may take together (the largest, last, go first)."})
    mutants: int = field(default=8, metadata={"help": "Mutants of the first Python reference per problem, a TNR of their own (0: off)."})
    search_rounds: int = field(default=2, metadata={
        "help": "Rounds of the wrong-solution-guided search for tests that fail surviving known-wrong solutions "
                "and mutants (0: off)."})
    search_inputs: int = field(default=16, metadata={"help": "Candidate inputs per search round and problem."})
    search_budget_s: float = field(default=10.0, metadata={
        "help": "A problem's search starts no further round once its references spent this many CPU seconds on "
                "search candidates."})
    search_max_tests: int = field(default=4, metadata={
        "help": "Most tests the search adds to a problem (beyond target_tests; validate's cover prefers them)."})
    held_out_folds: int = field(default=2, metadata={
        "help": "Held-out strength: a seeded share (the last of k folds: floor(n/k) of n) of each problem's "
                "references (where it has two or more), known-wrong solutions and mutants has no part in the tests "
                "(no vote on outputs, not hunted by the search) and is only measured (0 or 1: none)."})
    held_out_seed: int = field(default=0, metadata={"help": "Seed of the held-out share (with the problem id and each "
                                                            "solution's code: never timing or order)."})
    unmodelled_constraints: str = field(default="skip", metadata={
        "help": "A functional problem whose Constraints section has a line about an input that no rule models "
                "(`arr is guaranteed to be a mountain array`): skip (no generated input: a drawn one may break it, "
                "and a correct solution then fails its test) or draw (more tests, some of them invalid)."})
    batch_size: int = field(default=32, metadata={"help": "Problems per evaluator batch (and per cache commit)."})
    limit: int | None = field(default=None, metadata={"help": "Generate for at most this many problems (the rest pass through, counted)."})
    cache_path: str = field(default=".cache/microcoder/testgen.sqlite", metadata={"help": "Result cache (not a DVC output)."})
    stdio_generators: str | None = field(default=None, metadata={"help": "jsonl of authored {id, generator, validator?} programs for stdio problems."})
    generator_model: GeneratorModelConfig = field(default_factory=GeneratorModelConfig, metadata={
        "help": "The model that writes stdio generator programs (where stdio_generators has none)."})

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.target_tests < 1 or self.overgenerate < 1 or self.max_elements < 1:
            raise ValueError("target_tests and max_elements must be >= 1, overgenerate >= 1")
        if self.max_input_bytes < 1 or self.max_problem_bytes < self.max_input_bytes:
            raise ValueError(f"max_input_bytes must be >= 1 and max_problem_bytes >= max_input_bytes, got "
                             f"{self.max_input_bytes} and {self.max_problem_bytes}")
        if self.unmodelled_constraints not in ("skip", "draw"):
            raise ValueError(f"unmodelled_constraints must be skip or draw, got {self.unmodelled_constraints!r}")
        if self.held_out_folds < 0:
            raise ValueError(f"held_out_folds must be >= 0, got {self.held_out_folds}")
        if self.search_rounds < 0 or self.search_inputs < 1 or self.search_max_tests < 0 or self.search_budget_s < 0:
            raise ValueError("search_rounds, search_max_tests and search_budget_s must be >= 0, search_inputs >= 1")
