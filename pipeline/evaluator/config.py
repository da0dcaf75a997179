"""Evaluator settings (the `evaluator:` section of params.yaml) and the Submission record."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Submission:
    problem_id: str
    submission_id: str
    language: str  # python | cpp
    code: str

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Submission:
        """From a jsonl record; raises ValueError naming every missing or mistyped field."""
        names = [f.name for f in dataclasses.fields(cls)]
        bad = [n for n in names if not isinstance(d.get(n), str)]
        if bad:
            raise ValueError(f"submission fields must be strings: {', '.join(bad)}")
        return cls(**{n: d[n] for n in names})


@dataclass
class EvaluatorConfig:
    workers: int | None = field(default=None, metadata={"help": "Parallel judges (default: os.cpu_count())."})
    timeout_scale: float = field(default=1.0, metadata={"help": "Multiplies every problem's time limit."})
    slowdown: float = field(default=1.0, metadata={
        "help": "Judge as if on a machine this many times slower, by construction: every time a box measures "
                "(CPU, wall) is multiplied by it and every time limit sent to a box divided by it. For "
                "reproducibility checks (a dataset version must not change with the machine's speed: "
                "bench/reproducible.py); 1 in real runs."})
    sandbox: str = field(default="auto", metadata={"help": "auto | bwrap | unshare | none (tests only)."})
    wall_factor: float = field(default=2.0, metadata={
        "help": "Wall-clock limit = time limit x wall_factor + wall_slack_s (CPU time is judged against "
                "the time limit itself; the wall limit catches sleeping or blocked programs)."})
    wall_slack_s: float = field(default=1.0, metadata={"help": "See wall_factor."})
    output_limit_mb: float = field(default=64, metadata={
        "help": "Output limit per test (OLE beyond; at least 2x the expected output)."})
    checker_output_mb: float = field(default=16, metadata={
        "help": "Output limit per test where a checker program reads the output (OLE beyond; at least 2x the "
                "expected output); a problem's meta output_limit_mb overrides both limits."})
    memory_slack_mb: int = field(default=32, metadata={
        "help": "Address space added to the memory limit for native programs (libc, loader, stack)."})
    tmpfs_mb: int = field(default=256, metadata={"help": "Size of the sandbox's private /tmp (disk-fill bound)."})
    shm_mb: int = field(default=64, metadata={"help": "Size of the sandbox's private /dev/shm."})
    nproc: int = field(default=64, metadata={"help": "Processes + threads per sandbox (fork-bomb bound)."})
    syscall_filter: bool = field(default=True, metadata={
        "help": "Seccomp filter on every sandboxed program (no reaching the judge process, keyrings, "
                "namespaces, ptrace). Turn off only to debug the sandbox."})
    nofile: int = field(default=256, metadata={"help": "Open files per program."})
    file_size_mb: int = field(default=64, metadata={"help": "Largest file a program may write."})
    cpp_compiler: str = field(default="g++", metadata={"help": "C++ compiler (on PATH)."})
    cpp_flags: list[str] = field(default_factory=lambda: ["-O2", "-std=gnu++20", "-DONLINE_JUDGE", "-pipe"],
                                 metadata={"help": "C++ compile flags (ONLINE_JUDGE as on Codeforces; gnu++20: recent jury code uses std::ssize and the like)."})
    testlib_dir: str | None = field(default=None, metadata={
        "help": "Directory holding testlib.h for C++ checker programs (default: <venv>/include/testlib, "
                "installed by `make setup`); it must be readable by other users (the sandbox runs as its own uid)."})
    compile_time_limit_s: float = field(default=30.0, metadata={"help": "CPU limit of one compilation."})
    compile_memory_mb: int = field(default=2048, metadata={"help": "Memory limit of one compilation."})
    max_binary_mb: int = field(default=64, metadata={
        "help": "Largest C++ binary a compilation may produce (CE beyond); every file the compiler writes "
                "is limited to about this size."})
    compile_cache_mb: int = field(default=512, metadata={
        "help": "Compiled binaries (and compile errors) kept between submissions, in total (LRU)."})
    checker_time_limit_s: float = field(default=10.0, metadata={"help": "CPU limit of one checker run."})
    checker_memory_mb: int = field(default=1024, metadata={"help": "Memory limit of one checker run."})
    keep_output_bytes: int = field(default=4096, metadata={
        "help": "How much of an actual output is kept in TestResult.output when keep_outputs=True."})
    input_cache_problems: int = field(default=512, metadata={
        "help": "Problems whose test inputs stay on disk between submissions (LRU)."})
