"""Learning signal: whether a generation step's groups can teach the policy anything.

GRPO's advantage is a sample's reward minus its group's mean (scaled by the group's std): a group
whose judged rewards are all equal (every sample failed, or every one passed) has advantage 0 for
every sample and adds no gradient from the reward. A step whose groups are all like that trains on
nothing (with beta 0: loss 0, grad norm 0), and a run of such steps learns nothing while looking
healthy. This module classifies a step's groups and words the one-line warning from what the step
saw; `MicroCoderGRPOTrainer` counts such steps (curves.csv `no_signal_frac` = 1), warns at the
first, and stops after `stop_without_signal` in a row; microcoder.training.train writes the counts
to stats.json and warns again with the count at the end.

The rule is the one dynamic sampling drops groups by (`pools.varied_groups`), on the rewards TRL
computed, so it holds for every `scale_rewards` and for the merged batch of online filtering (TRL's
own `frac_reward_zero_std` is the batch's std under `scale_rewards: batch`, one figure per round
under online filtering, and counts a group with one judged sample as varied).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence

from microcoder.training.pools import varied_groups

MIXED, ALL_FAIL, ALL_PASS, ALL_EQUAL, UNJUDGED = "mixed", "all-fail", "all-pass", "all-equal", "unjudged"
# Group outcomes without a learning signal, in the order messages list them.
NO_SIGNAL = (ALL_FAIL, ALL_PASS, ALL_EQUAL, UNJUDGED)
_TOL = 1e-6


def group_outcomes(rewards: Sequence[float | None], size: int, reward_pass: float, reward_fail: float) -> list[str]:
    """Per group of `size` consecutive samples: `mixed` (judged rewards differ: a learning signal),
    else `all-pass` (all at least `reward_pass`), `all-fail` (all at most `reward_fail`), `all-equal`
    (the same partial reward) or `unjudged` (fewer than two samples judged)."""
    out = []
    for g, varied in enumerate(varied_groups(list(rewards), size, _TOL)):
        judged = [r for r in rewards[g * size:(g + 1) * size] if r is not None and not math.isnan(r)]
        if varied:
            out.append(MIXED)
        elif len(judged) < 2:
            out.append(UNJUDGED)
        elif judged[0] >= reward_pass - _TOL:
            out.append(ALL_PASS)
        elif judged[0] <= reward_fail + _TOL:
            out.append(ALL_FAIL)
        else:
            out.append(ALL_EQUAL)
    return out


def no_signal_frac(outcomes: Sequence[str]) -> float:
    """The share of groups without a learning signal (NaN for no groups)."""
    return sum(o != MIXED for o in outcomes) / len(outcomes) if outcomes else math.nan


def without_signal(row: Mapping[str, float]) -> bool:
    """Whether a generation_log row had no learning signal at all (NaN, e.g. a row from before the
    column existed: not known, so not counted)."""
    frac = row.get("no_signal_frac", math.nan)
    return not math.isnan(frac) and frac >= 1.0 - _TOL


def streak_without_signal(rows: Sequence[Mapping[str, float]]) -> int:
    """How many of the last rows in a row had no learning signal."""
    n = 0
    for row in reversed(rows):
        if not without_signal(row):
            break
        n += 1
    return n


def what_was_seen(counts: Mapping[str, int]) -> str:
    """`all 2 groups were all-fail` or `no group's rewards differed (3 all-fail, 1 all-pass)`."""
    kinds = [k for k in NO_SIGNAL if counts.get(k)]
    if len(kinds) == 1:
        return f"all {counts[kinds[0]]} groups were {kinds[0]}"
    return "no group's rewards differed (" + ", ".join(f"{counts[k]} {k}" for k in kinds) + ")"


def what_gives_signal(counts: Mapping[str, int]) -> str:
    """The remedies for the group outcomes in `counts`, one clause each, most relevant first."""
    hints = []
    if counts.get(ALL_FAIL):
        hints.append("train on problems this policy sometimes solves (a filter band with filter.min_pass_rate > 0: "
                     "the default 0 keeps unsolved problems) or start from a stronger or warm-started --model")
    if counts.get(ALL_PASS):
        hints.append("drop problems it always solves (lower filter.max_pass_rate)")
    if counts.get(ALL_FAIL) or counts.get(ALL_PASS) or counts.get(ALL_EQUAL):
        hints.append("raise grpo.num_generations or grpo.temperature so groups mix")
    if counts.get(UNJUDGED):
        hints.append("raise evaluator.workers or grpo.reward_deadline_s (samples left unjudged)")
    return "; ".join(hints)


def no_signal_message(step: int, outcomes: Sequence[str]) -> str:
    """The one-line warning for a step whose groups all lacked a signal, worded from what it saw."""
    counts = Counter(outcomes)
    return (f"step {step}: no learning signal: {what_was_seen(counts)}, so every advantage is 0 and the reward "
            f"trains nothing; for signal: {what_gives_signal(counts)} (warned once; stats.json counts "
            "steps_without_signal; grpo.stop_without_signal=N stops after N such steps in a row)")
