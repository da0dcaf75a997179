"""Group diversity: 1 - mean pairwise Jaccard of token 4-gram sets, batch mean over groups."""

from __future__ import annotations

import math

import pytest

from microcoder.training.diversity import batch_diversity, group_diversity


# The plain definition, the reference the vectorised `group_diversity` is compared against.
def ngram_set(ids, n: int = 4) -> frozenset[tuple[int, ...]]:
    ids = list(ids)
    return frozenset(zip(*(ids[i:] for i in range(n)), strict=False))


def jaccard(a: frozenset, b: frozenset) -> float:
    if not a and not b:
        return 1.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def test_ngram_set():
    assert ngram_set([1, 2, 3, 4, 5]) == {(1, 2, 3, 4), (2, 3, 4, 5)}
    assert ngram_set([1, 2, 3]) == frozenset()


def test_identical_samples_have_no_diversity():
    assert group_diversity([[1, 2, 3, 4, 5]] * 4) == 0.0


def test_disjoint_samples_are_fully_diverse():
    assert group_diversity([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]]) == 1.0


def test_hand_computed_group():
    a = [1, 2, 3, 4, 5]  # {1234, 2345}
    b = [1, 2, 3, 4, 9]  # {1234, 2349}: J(a, b) = 1/3
    c = [7, 7, 7, 7]  # {7777}: J(a, c) = J(b, c) = 0
    assert jaccard(ngram_set(a), ngram_set(b)) == pytest.approx(1 / 3)
    assert group_diversity([a, b]) == pytest.approx(2 / 3)
    assert group_diversity([a, b, c]) == pytest.approx(1 - (1 / 3) / 3)


def test_short_samples():
    assert group_diversity([[1], [2, 3]]) == 0.0  # both without 4-grams: identical
    assert group_diversity([[1], [1, 2, 3, 4]]) == 1.0


def test_batch_mean_over_groups():
    same = [[1, 2, 3, 4]] * 2
    different = [[1, 2, 3, 4], [5, 6, 7, 8]]
    assert batch_diversity(same + different, group_size=2) == 0.5
    assert math.isnan(group_diversity([[1, 2, 3, 4]]))
    assert math.isnan(batch_diversity([[1, 2, 3, 4]], group_size=1))
    with pytest.raises(ValueError, match="groups of 2"):
        batch_diversity([[1]] * 3, group_size=2)


def test_ngram_size_is_a_parameter():
    assert group_diversity([[1, 2], [1, 3]], n=1) == pytest.approx(1 - 1 / 3)


def test_vectorised_metric_equals_the_set_definition():
    import random
    from itertools import combinations

    rng = random.Random(5)
    for _ in range(20):
        vocab = rng.choice([3, 10, 200_000])
        group = [[rng.randrange(vocab) for _ in range(rng.randrange(0, 40))] for _ in range(rng.randrange(2, 7))]
        sets = [ngram_set(s) for s in group]
        pairs = list(combinations(sets, 2))
        reference = 1 - sum(jaccard(a, b) for a, b in pairs) / len(pairs)
        assert group_diversity(group) == pytest.approx(reference, abs=1e-12)
