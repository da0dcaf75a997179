"""The shared TPR/TNR record: counts behind every ratio, sums not averages, no ratio from nothing."""

import pytest

from microcoder.pipeline import strength


def test_record_carries_counts_and_ratios():
    r = strength.record(correct=3, correct_passing=2, incorrect=5, incorrect_failing=5)
    assert r == {"correct": 3, "correct_passing": 2, "tpr": 0.6667, "incorrect": 5, "incorrect_failing": 5, "tnr": 1.0}


def test_a_ratio_with_nothing_behind_it_is_none():
    r = strength.record()
    assert r["tpr"] is None and r["tnr"] is None
    assert strength.describe(r) == "TPR n/a (0), TNR n/a (0)"


def test_inconsistent_counts_are_refused():
    with pytest.raises(ValueError):
        strength.record(correct=1, correct_passing=2)


def test_groups_sum_counts_not_ratios():
    a = strength.record(correct=1, correct_passing=1, incorrect=1, incorrect_failing=0)
    b = strength.record(correct=9, correct_passing=0, incorrect=3, incorrect_failing=3)
    groups = strength.by_group([("kattis", a), ("kattis", b), (None, a), ("x", strength.record())])
    assert groups["kattis"]["tpr"] == 0.1 and groups["kattis"]["tnr"] == 0.75
    assert groups["unknown"]["correct"] == 1
    assert "x" not in groups
    assert strength.describe(groups["kattis"]) == "TPR 10.0% (1/10), TNR 75.0% (3/4)"
