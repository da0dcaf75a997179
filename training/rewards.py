"""The training reward: each completion scored through the one scoring path (`microcoder.pipeline.scoring`).

Per sample, a reward and a status (METHOD.md section 3 decisions; the truncation mask reads the
status; `microcoder.pipeline.scoring` defines them):
- `pass`: the code passed every test (AC) -> `reward_pass`;
- `fail`: the code ran (or failed to compile) and failed a test: WA/TLE/MLE/RE/CE/OLE -> `reward_fail`;
- `no_code`: no extractable code block (an unfinished, often truncated answer) -> `reward_no_code`;
- `deadline`: the judge never finished the sample by the batch deadline. Four identical correct
  samples must not get [1, 0, 0, 0] because one worker was slow: the reward is None (TRL leaves
  the sample out of its group's mean/std and zeroes its advantage), the share is logged
  (`rewards/evaluator/deadline_frac`) and the trainer warns or stops above a threshold;
- `error`: the harness failed (SE), or the judge itself overran its deadline: our fault, not the
  model's, so the reward is None too (`rewards/evaluator/error_frac`).

What a `fail` earns depends on `reward` (the training config's knob of that name):
- `binary` (the paper's, the default): `reward_fail`; judged first-failure (cheapest);
- `fraction`: `reward_fail + (reward_pass - reward_fail) * share`, the share of the problem's tests
  passed (Klear-Reasoner's partial credit); every test is judged (mode "all");
- `groups`: the same with the share of the points of the problem's test groups whose every test
  passed (`microcoder.pipeline.scoring.group_share`: Kattis / Code Jam subtasks); problems whose groups carry
  no points take `fraction`. Judged in mode "all".
A compile error passes no test (`reward_fail` under every mode); AC is always `reward_pass`.

The judge is a persistent process pool (the params' `evaluator:` section, `make_judge`): one per
reward object, reused across steps, closed by `close()`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from microcoder.pipeline.schema import Problem, Verdict
from microcoder.pipeline.scoring import (
    WATCHDOG_GRACE_S,
    Judge,
    Scored,
    Scorer,
    completion_text,
    group_share,
    test_share,
)

log = logging.getLogger(__name__)

# reward -> how the judge must run: partial credit needs every test judged, binary only the first failure.
JUDGE_MODE = {"binary": "first-failure", "fraction": "all", "groups": "all"}
REWARDS = tuple(JUDGE_MODE)


class EvaluatorReward:
    """A TRL reward function: `reward(prompts, completions, problem_id=[...], **kwargs) -> rewards`.

    The dataset must carry a `problem_id` column (TRL passes dataset columns to reward functions).
    After each call, `last_statuses` holds one status per sample (`pass|fail|no_code|error|deadline`),
    `last_verdicts` the evaluator's verdicts (None where no code was judged), `last_credits` each
    judged sample's share of credit in [0, 1] under `reward` (None where nothing was judged) and
    `stats` running counts (statuses, and the watchdog's timeouts).
    """

    __name__ = "evaluator"  # TRL names reward functions (and their metrics) by `__name__`

    def __init__(
        self,
        problems: Mapping[str, Problem] | Iterable[Problem],
        *,
        judge: Judge | None = None,
        make_judge: Callable[[], Judge] | None = None,
        language: str = "python",
        deadline_s: float = 120.0,
        reward_pass: float = 1.0,
        reward_fail: float = 0.0,
        reward_no_code: float = 0.0,
        watchdog_grace_s: float = WATCHDOG_GRACE_S,
        reward: str = "binary",
    ):
        if reward not in JUDGE_MODE:
            raise ValueError(f"reward must be one of {REWARDS}, got {reward!r}")
        self.reward = reward
        self.scorer = Scorer(problems, language=language, judge=judge, make_judge=make_judge, deadline_s=deadline_s,
                             watchdog_grace_s=watchdog_grace_s, mode=JUDGE_MODE[reward])
        self.problems = self.scorer.problems
        self.language = language
        self.deadline_s = deadline_s
        self.values = {"pass": reward_pass, "fail": reward_fail, "no_code": reward_no_code, "error": None,
                       "deadline": None}
        self.last_statuses: list[str] = []
        self.last_verdicts: list[Verdict | None] = []
        self.last_credits: list[float | None] = []
        self.stats: Counter[str] = Counter()

    def close(self) -> None:
        self.scorer.close()

    def __enter__(self) -> EvaluatorReward:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], problem_id: Sequence[str] | None = None,
                 **kwargs: Any) -> list[float | None]:
        if problem_id is None:
            raise ValueError("the training dataset needs a `problem_id` column for the evaluator reward")
        if len(problem_id) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(problem_id)} problem ids")
        missing = sorted({pid for pid in problem_id if pid not in self.problems})
        if missing:
            raise KeyError(f"problems not known to the reward function: {missing[:5]} ({len(missing)} in all)")
        timeouts = self.scorer.stats["watchdog_timeouts"]
        scored = self.scorer.score([completion_text(c) for c in completions], list(problem_id))
        statuses = [s.outcome for s in scored]
        self.last_statuses, self.last_verdicts = statuses, [s.verdict for s in scored]
        self.last_credits = [self.credit(s, pid) for s, pid in zip(scored, problem_id, strict=True)]
        counts = Counter(statuses)
        self.stats.update(counts)
        if self.scorer.stats["watchdog_timeouts"] > timeouts:
            self.stats["watchdog_timeouts"] += self.scorer.stats["watchdog_timeouts"] - timeouts
        log_metric = kwargs.get("log_metric")
        if log_metric is not None:
            n = max(len(statuses), 1)
            log_metric("rewards/evaluator/error_frac", counts["error"] / n)
            log_metric("rewards/evaluator/deadline_frac", counts["deadline"] / n)
        return [self.value(status, credit) for status, credit in zip(statuses, self.last_credits, strict=True)]

    def credit(self, scored: Scored, problem_id: str) -> float | None:
        """A judged sample's share of credit in [0, 1] (module docs); None where nothing was judged."""
        outcome = scored.outcome
        if outcome in ("no_code", "error", "deadline") or scored.verdict is None:
            return None
        if outcome == "pass":
            return 1.0
        if self.reward == "binary" or scored.verdict.status == "CE":
            return 0.0
        problem = self.problems[problem_id]
        tests = test_share(scored.verdict, problem)
        if tests >= 1.0:  # failed, yet every test passed: the failure is outside the tests, no partial credit
            return 0.0
        share = group_share(problem, scored.verdict) if self.reward == "groups" else None
        # A failing sample never earns the full reward: tests outside the scored groups (samples,
        # testgen's `generated`, e.g. a too-slow run on a full-size input) still cost it their share.
        return tests if share is None else min(share, tests)

    def value(self, status: str, credit: float | None) -> float | None:
        if status != "fail":
            return self.values[status]
        low, high = self.values["fail"], self.values["pass"]
        return low + (high - low) * credit if credit else low
