from __future__ import annotations

import math

import pyarrow as pa
import pytest

from microcoder.pipeline.difficulty.band import (
    IN_BAND,
    PREDICTED_TOO_EASY,
    TOO_EASY,
    TOO_HARD,
    UNSOLVED,
    Band,
)
from microcoder.pipeline.difficulty.passrate import aggregate, pass_at_k


def brute_pass_at_k(n: int, c: int, k: int) -> float:
    return 1 - math.comb(n - c, k) / math.comb(n, k)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 0, 1), (4, 1, 1), (4, 2, 2), (16, 3, 4), (16, 15, 8), (10, 10, 10)])
def test_pass_at_k_matches_the_combinatorial_formula(n, c, k):
    assert pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))


def test_pass_at_k_edges():
    assert pass_at_k(4, 1, 1) == pytest.approx(0.25)  # pass@1 is the pass rate
    assert pass_at_k(3, 1, 4) is None  # fewer samples than k
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


def test_aggregate_leaves_system_errors_out():
    t = pa.table({"problem_id": ["a", "a", "a", "a", "b", "b", "c"],
                  "status": ["AC", "WA", "no_code", "SE", "SE", "SE", "AC"]})
    s = aggregate(t, k=2)
    assert (s["a"].n_samples, s["a"].n_correct, s["a"].n_system_errors) == (3, 1, 1)
    assert s["a"].pass_rate == pytest.approx(1 / 3)
    assert s["a"].pass_at_k == pytest.approx(brute_pass_at_k(3, 1, 2))
    assert s["b"].pass_rate is None and s["b"].n_samples == 0
    assert s["c"].pass_rate == 1.0 and s["c"].pass_at_k is None


def test_band():
    band = Band(0.0, 0.75)
    assert band.measured(0.0) == (True, UNSOLVED)
    assert band.measured(0.5) == (True, IN_BAND)
    assert band.measured(0.75) == (True, IN_BAND)
    assert band.measured(0.8) == (False, TOO_EASY)
    assert Band(0.1, 0.75).measured(0.0) == (False, TOO_HARD)
    assert band.predicted(0.9) == (False, PREDICTED_TOO_EASY)
    with pytest.raises(ValueError):
        Band(0.8, 0.5)


def test_per_problem_pass_at_k_in_first_seen_order():
    import polars as pl

    from microcoder.pipeline.difficulty.passrate import per_problem

    samples = pl.DataFrame({"problem_id": ["b", "a", "b", "b", "a"], "platform": ["x", "y", "x", "x", "y"],
                            "judged": [True, True, False, True, True], "correct": [True, False, True, False, False]})
    t = per_problem(samples, [1, 2], keys=["problem_id", "platform"])
    assert t["problem_id"].to_list() == ["b", "a"] and t["platform"].to_list() == ["x", "y"]
    assert t["n"].to_list() == [2, 2] and t["c"].to_list() == [1, 0] and t["unjudged"].to_list() == [1, 0]
    assert t["pass@1"].to_list() == [pytest.approx(0.5), 0.0]
    assert t["pass@2"].to_list() == [1.0, 0.0]
    assert per_problem(samples.head(1), [2])["pass@2"].to_list() == [None]  # fewer judged samples than k


def test_aggregate_of_no_rollouts_is_empty():
    assert aggregate(pa.table({"problem_id": pa.array([], pa.string()), "status": pa.array([], pa.string())}), 4) == {}
