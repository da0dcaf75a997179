"""Conditional truncation masking (METHOD.md section 3).

`A_i = (r_i - mean(r)) / std(r) * (1 - M_i)`, where `M_i = 1` only when all four conditions hold:
1. `|o_i| == L_max`: the sample was cut at the maximum completion length (a sample that ends
   with an EOS token exactly at `L_max` finished, so it is not truncated);
2. the sample is non-incorrect: status `pass` or `no_code` (unfinished is not wrong);
3. the sample is not repetitive: its last `2m` tokens are not periodic with any period
   `p` in 1..m (a loop of any length up to m repeated over the tail; the paper's literal test
   "last m == previous m" is the case p = m and misses loops whose period does not divide m).
   A sample shorter than `2m` counts as non-repetitive;
4. a fresh uniform draw `U(0, 1) < rho`, drawn only for samples meeting 1-3.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass

# Per-sample reward statuses (training/rewards.py reports them). `error` and `deadline` are the
# judge's failures (reward None, advantage 0), never counted as non-incorrect.
STATUSES = ("pass", "fail", "no_code", "error", "deadline")
NON_INCORRECT = frozenset({"pass", "no_code"})


@dataclass(frozen=True)
class TruncationMask:
    """Per-sample flags for each condition and the resulting mask (True = advantage zeroed)."""

    mask: list[bool]
    truncated: list[bool]
    non_incorrect: list[bool]
    non_repetitive: list[bool]
    drawn: list[bool]  # condition 4 held (False for samples that were not candidates: never drawn)

    @property
    def candidates(self) -> list[bool]:
        """Samples meeting conditions 1-3 (the ones a random draw was made for)."""
        return [t and n and r for t, n, r in zip(self.truncated, self.non_incorrect, self.non_repetitive, strict=True)]

    def counts(self) -> dict[str, int]:
        return {
            "total": len(self.mask),
            "truncated": sum(self.truncated),
            "truncated_non_incorrect": sum(t and n for t, n in zip(self.truncated, self.non_incorrect, strict=True)),
            "candidates": sum(self.candidates),
            "masked": sum(self.mask),
        }


def is_truncated(ids: Sequence[int], max_completion_length: int, eos_token_ids: Collection[int] = ()) -> bool:
    """Condition 1: the sample reached `max_completion_length` without ending on an EOS token."""
    return len(ids) >= max_completion_length and not (len(ids) and ids[-1] in eos_token_ids)


def is_repetitive(ids: Sequence[int], window: int) -> bool:
    """The last `2 * window` tokens are periodic with some period p <= window, i.e. a loop of p
    tokens fills the tail (never for len < 2 * window).

    The smallest period of a sequence s of length n is n - b, where b is the length of its longest
    proper border (prefix that is also a suffix: the KMP failure function); any period p <= window
    implies the smallest one is <= window too. O(window) per sample."""
    if len(ids) < 2 * window:
        return False
    tail = list(ids[-2 * window:])
    return smallest_period(tail) <= window


def smallest_period(seq: Sequence[int]) -> int:
    """The smallest p >= 1 with seq[i] == seq[i + p] for every i (len(seq) when there is none shorter)."""
    n = len(seq)
    border = [0] * n
    k = 0
    for i in range(1, n):
        while k and seq[i] != seq[k]:
            k = border[k - 1]
        if seq[i] == seq[k]:
            k += 1
        border[i] = k
    return n - border[-1] if n else 0


def conditional_truncation_mask(
    completion_ids: Sequence[Sequence[int]],
    statuses: Sequence[str],
    max_completion_length: int,
    rho: float,
    window: int = 128,
    rng: random.Random | None = None,
    eos_token_ids: Collection[int] = (),
) -> TruncationMask:
    """The mask for one batch of samples; `rng` is required when `rho > 0` (one draw per candidate)."""
    if len(completion_ids) != len(statuses):
        raise ValueError(f"{len(completion_ids)} completions but {len(statuses)} statuses")
    unknown = sorted({s for s in statuses if s not in STATUSES})
    if unknown:
        raise ValueError(f"unknown reward statuses {unknown}; valid: {list(STATUSES)}")
    if not 0.0 <= rho <= 1.0:
        raise ValueError(f"rho must be in [0, 1], got {rho}")
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    if rho > 0 and rng is None:
        raise ValueError("rho > 0 needs an explicit random.Random (seeded) for the draws")
    eos = frozenset(eos_token_ids)
    truncated = [is_truncated(ids, max_completion_length, eos) for ids in completion_ids]
    non_incorrect = [s in NON_INCORRECT for s in statuses]
    non_repetitive = [not is_repetitive(ids, window) for ids in completion_ids]
    drawn = []
    for t, n, r in zip(truncated, non_incorrect, non_repetitive, strict=True):
        # Draw only for candidates, so the random stream depends on nothing but the candidates.
        drawn.append(bool(rho > 0 and t and n and r and rng.random() < rho))
    return TruncationMask(mask=list(drawn), truncated=truncated, non_incorrect=non_incorrect,
                          non_repetitive=non_repetitive, drawn=drawn)
