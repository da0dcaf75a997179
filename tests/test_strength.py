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


def test_folds_are_seeded_by_content_not_order_and_never_take_a_lone_reference():
    progs = [("python", f"print({i})") for i in range(5)]
    folds = strength.folds_of(0, "p/1", progs, 2)
    assert sorted(folds) == [0, 0, 0, 1, 1]  # dealt round-robin: sizes differ by one at most
    shuffled = progs[::-1]
    again = dict(zip(shuffled, strength.folds_of(0, "p/1", shuffled, 2), strict=True))
    assert [again[p] for p in progs] == folds  # the order they came in changes nothing
    assert len({tuple(strength.folds_of(seed, "p/1", progs, 2)) for seed in range(10)}) > 1  # the seed decides
    assert strength.folds_of(0, "p/1", progs[:1], 2, keep_one=True) == [None]  # a lone reference votes
    assert strength.folds_of(0, "p/1", progs[:1], 2) == [0]  # a lone wrong solution can be held out
    assert strength.folds_of(0, "p/1", progs, 0) == [None] * 5 and strength.folds_of(0, "p/1", progs, 1) == [None] * 5


def test_held_out_is_described_first():
    inside = strength.record(correct=2, correct_passing=2, incorrect=4, incorrect_failing=4)
    held = strength.record(correct=1, correct_passing=1, incorrect=4, incorrect_failing=3)
    assert strength.describe_pair(inside, held) == (
        "held out: TPR 100.0% (1/1), TNR 75.0% (3/4); in-sample: TPR 100.0% (2/2), TNR 100.0% (4/4)")
