"""Pass rate per problem from scored rollouts, and the unbiased pass@k estimator.

System errors (`SE`: the grader failed, not the model) are not samples of the model's skill: they
are counted apart and left out of n.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """Unbiased pass@k = 1 - C(n-c, k) / C(n, k) (Chen et al. 2021), in its stable product form.
    None when fewer than k samples exist (the estimator is undefined)."""
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if n < k:
        return None
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


@dataclass
class PassStats:
    problem_id: str
    n_samples: int  # judged samples (system errors excluded)
    n_correct: int
    n_system_errors: int
    pass_rate: float | None  # None when no sample was judged
    pass_at_k: float | None


def aggregate(rollouts: pa.Table, k: int) -> dict[str, PassStats]:
    """Per-problem pass statistics from rollout rows (`problem_id`, `status`)."""
    counts: dict[str, list[int]] = {}
    ids = rollouts.column("problem_id").to_pylist()
    statuses = rollouts.column("status").to_pylist()
    for pid, status in zip(ids, statuses, strict=True):
        n, c, se = counts.setdefault(pid, [0, 0, 0])
        if status == "SE":
            counts[pid][2] = se + 1
        else:
            counts[pid][0] = n + 1
            counts[pid][1] = c + (status == "AC")
    return {
        pid: PassStats(pid, n, c, se, c / n if n else None, pass_at_k(n, c, k) if n else None)
        for pid, (n, c, se) in counts.items()
    }
