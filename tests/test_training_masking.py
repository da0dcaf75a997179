"""Conditional truncation mask: each of METHOD.md's four conditions pinned on its own."""

from __future__ import annotations

import random

import pytest

from microcoder.training.masking import conditional_truncation_mask, is_repetitive, is_truncated

L = 8  # max completion length
W = 2  # repetition window
EOS = 99


def full(start: int = 0) -> list[int]:
    """A non-repetitive completion of exactly L tokens."""
    return list(range(start, start + L))


def mask(ids, statuses, rho=1.0, rng=None, window=W):
    return conditional_truncation_mask(ids, statuses, L, rho, window, rng or random.Random(0), eos_token_ids={EOS})


def test_all_four_conditions_hold_masks():
    assert mask([full()], ["pass"]).mask == [True]


def test_condition_1_length_must_equal_max():
    short = full()[:-1]
    result = mask([short, full()], ["pass", "pass"])
    assert result.truncated == [False, True]
    assert result.mask == [False, True]


def test_condition_1_eos_at_max_length_is_finished_not_truncated():
    ended = full()[:-1] + [EOS]
    assert not is_truncated(ended, L, {EOS})
    assert mask([ended], ["pass"]).mask == [False]


@pytest.mark.parametrize(("status", "masked"), [("pass", True), ("no_code", True), ("fail", False), ("error", False)])
def test_condition_2_only_non_incorrect_statuses(status, masked):
    result = mask([full()], [status])
    assert result.non_incorrect == [masked]
    assert result.mask == [masked]


def test_condition_3_repetitive_tail_is_not_masked():
    repetitive = [0, 1, 2, 3, 4, 5, 4, 5]  # last W tokens == the W before them
    assert is_repetitive(repetitive, W)
    result = mask([repetitive, full()], ["no_code", "no_code"])
    assert result.non_repetitive == [False, True]
    assert result.mask == [False, True]


def test_condition_3_window_boundaries():
    assert not is_repetitive([7, 7, 7], 2)  # shorter than 2 * window: non-repetitive
    assert is_repetitive([7, 7, 7, 7], 2)
    assert not is_repetitive([1, 2, 1, 3], 2)
    # a window wider than half the completion: every L-token sample counts as non-repetitive
    assert mask([[5] * L], ["pass"], window=L // 2 + 1).mask == [True]


def test_condition_4_seeded_draw_only_for_candidates():
    ids = [full(), full()[:-1], full(10), full(20), full(30), [1] * L]
    statuses = ["pass", "pass", "fail", "no_code", "pass", "pass"]
    candidates = [True, False, False, True, True, False]  # truncated & non-incorrect & non-repetitive
    rho = 0.5
    result = mask(ids, statuses, rho=rho, rng=random.Random(1234))
    assert result.candidates == candidates
    reference = random.Random(1234)
    expected_draws = iter([reference.random() < rho for _ in range(sum(candidates))])
    expected = [next(expected_draws) if c else False for c in candidates]
    assert result.mask == expected
    # exactly one draw per candidate: the generator is where a fresh one would be after 3 draws
    rng = random.Random(1234)
    mask(ids, statuses, rho=rho, rng=rng)
    after = random.Random(1234)
    for _ in range(3):
        after.random()
    assert rng.getstate() == after.getstate()


def test_condition_4_rho_bounds():
    ids, statuses = [full(), full(3)], ["pass", "no_code"]
    assert conditional_truncation_mask(ids, statuses, L, 0.0, W).mask == [False, False]  # no rng needed
    assert mask(ids, statuses, rho=1.0).mask == [True, True]
    with pytest.raises(ValueError, match="random.Random"):
        conditional_truncation_mask(ids, statuses, L, 0.1, W)


def test_counts():
    ids = [full(), full()[:-1], full(10), [1] * L]
    result = mask(ids, ["pass", "pass", "fail", "no_code"])
    assert result.counts() == {"total": 4, "truncated": 3, "truncated_non_incorrect": 2, "candidates": 1, "masked": 1}


def test_invalid_inputs():
    with pytest.raises(ValueError, match="statuses"):
        mask([full()], [])
    with pytest.raises(ValueError, match="unknown reward statuses"):
        mask([full()], ["AC"])
    with pytest.raises(ValueError, match="rho"):
        mask([full()], ["pass"], rho=1.5)


def literal_check(ids, m):
    return len(ids) >= 2 * m and list(ids[-m:]) == list(ids[-2 * m:-m])


def brute_force_periodic(ids, m):
    tail = list(ids[-2 * m:])
    return len(ids) >= 2 * m and any(all(tail[i] == tail[i + p] for i in range(len(tail) - p))
                                     for p in range(1, m + 1))


def test_condition_3_loops_of_any_period_up_to_m():
    m = 128
    prefix = list(range(1000, 1100))
    line = list(range(50))  # a 50-token line repeated forever: 50 does not divide 128
    looping = prefix + line * 10
    assert not literal_check(looping, m)  # the paper's literal test misses it...
    assert is_repetitive(looping, m)  # ...the periodic-tail test catches it
    assert is_repetitive(prefix + [3] * 300, m)  # period 1
    assert is_repetitive(prefix + list(range(128)) * 2, m)  # period m: the literal test's case
    # a period longer than m is not a loop at this window, and a tail that only starts looping is not either
    assert not is_repetitive(list(range(129)) * 3, m)
    assert not is_repetitive(list(range(1, 200)) + line * 2, m)


def test_periodic_tail_matches_brute_force():
    rng = random.Random(5)
    for _ in range(400):
        m = rng.randint(1, 12)
        period = rng.randint(1, 2 * m)
        unit = [rng.randrange(3) for _ in range(period)]
        ids = [rng.randrange(3) for _ in range(rng.randint(0, 10))] + unit * rng.randint(1, 6)
        if rng.random() < 0.3 and ids:
            ids[rng.randrange(len(ids))] = 7  # break the loop somewhere
        assert is_repetitive(ids, m) == brute_force_periodic(ids, m), (ids, m)
        if literal_check(ids, m):
            assert is_repetitive(ids, m)  # the literal test is a special case
