"""The one pass@k (the unbiased estimator) and the per-problem aggregation of scored samples.

Samples the judge did not decide (rollout's `SE`: the grader failed, not the model; eval-model's
`error`/`deadline`) are not samples of the model's skill: they are counted apart and left out of n.
Used by the filter stage (rollout pass rates), rollout's stats and eval-model's pass@k tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
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


def per_problem(samples: pl.DataFrame, ks: Sequence[int] = (), keys: Sequence[str] = ("problem_id",)) -> pl.DataFrame:
    """One row per problem (first-seen order) from sample rows with boolean `judged` and `correct`
    columns: `n` (judged samples), `c` (correct judged ones), `unjudged`, and `pass@k` for each k
    (null when fewer than k samples were judged). `keys`: the problem's columns to group by (the id
    first, then attributes such as platform that travel with it)."""
    out = samples.group_by(list(keys), maintain_order=True).agg(
        n=pl.col("judged").sum().cast(pl.Int64),
        c=(pl.col("correct") & pl.col("judged")).sum().cast(pl.Int64),
        unjudged=(~pl.col("judged")).sum().cast(pl.Int64),
    )
    n, c = out["n"].to_list(), out["c"].to_list()
    return out.with_columns(
        pl.Series(f"pass@{k}", [pass_at_k(a, b, k) for a, b in zip(n, c, strict=True)], dtype=pl.Float64)
        for k in ks
    )


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
    status = pl.DataFrame(rollouts.select(["problem_id", "status"]))
    table = per_problem(status.with_columns(judged=pl.col("status") != "SE", correct=pl.col("status") == "AC"), [k])
    return {
        row["problem_id"]: PassStats(row["problem_id"], row["n"], row["c"], row["unjudged"],
                                     row["c"] / row["n"] if row["n"] else None, row[f"pass@{k}"])
        for row in table.iter_rows(named=True)
    }
