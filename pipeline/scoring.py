"""The one scoring path: completion text -> extracted code -> verdict -> status.

Rollout, the training reward and eval-model all score through `Scorer.score`; each reads the
status it reports from the same `Scored` result:
- `Scored.status`: the evaluator's status (AC, WA, TLE, ..., SE) or `no_code` (rollout rows);
- `Scored.outcome`: `pass | fail | no_code | error | deadline` (the reward and eval-model):
  `fail` is the model's fault (WA/TLE/MLE/RE/CE/OLE: a per-test TLE means the code overran the
  problem's limit); `deadline` is a sample the judge had not finished at the batch deadline (the
  evaluator's TLE with reason "batch deadline") and `error` one the harness could not run (SE) or
  the judge overran its deadline on: both are the judge's failures, not the model's (unjudged).
- `Scored.passed` / `Scored.total`: the tests passed out of the problem's tests; with
  `mode="all"` (a graded reward) every test is judged, so `test_share` and `group_share` (the
  share of the points of the problem's test groups whose every test passed) are partial credit.
  First-failure judging (rollout, eval-model, the binary reward) stops at the first failure.

`Scorer` owns the judge (started only when a sample has code to judge, through the factory the
stage gives it: `microcoder.pipeline.evaluator.factory.make_evaluator(...)` from the params' `evaluator:` section) and,
given a batch deadline, a watchdog thread: the evaluator enforces the deadline itself; the
watchdog only guards against the judge overrunning it (a harness bug), scoring the batch as
errors and replacing the judge, so a stuck judge never hangs a trainer.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from microcoder.pipeline.generation.extract import extract_code
from microcoder.pipeline.schema import Problem, Verdict

log = logging.getLogger(__name__)

NO_CODE = "no_code"
# The evaluator's reason on the TLE verdict of a submission it did not finish by the batch deadline
# (pipeline/evaluator/pool.py `_deadline_verdict`): not the model's TLE.
DEADLINE_REASON = "batch deadline"
OUTCOME_OF_VERDICT = {"AC": "pass", "WA": "fail", "TLE": "fail", "MLE": "fail", "RE": "fail", "CE": "fail",
                      "OLE": "fail", "SE": "error"}
# a sample's outcome: pass, fail, no_code (no code in the answer), error (SE), deadline (not judged in time)
JUDGED = ("pass", "fail", "no_code")  # outcomes the judge decided (no_code: the model gave no code)
UNJUDGED = ("error", "deadline")  # the judge's own failures: never counted against the model
JUDGE_MODES = ("first-failure", "all")  # pipeline/evaluator/verdict/judge.py MODES
# Extra time the watchdog allows past the evaluator's own deadline (killing and collecting workers).
WATCHDOG_GRACE_S = 30.0


class Judge(Protocol):
    """What scoring needs of `microcoder.pipeline.evaluator.Evaluator` (or its Ray counterpart; tests inject fakes)."""

    def evaluate_batch(self, problems: Any, submissions: list[Any], mode: str = "first-failure",
                       **kwargs: Any) -> list[Verdict]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Scored:
    """One completion's code (None: nothing extractable) and verdict (None: not judged)."""

    code: str | None
    verdict: Verdict | None = None

    @property
    def status(self) -> str:
        """The evaluator's status, `no_code`, or SE where the judge gave no verdict (its watchdog)."""
        if self.code is None:
            return NO_CODE
        return self.verdict.status if self.verdict is not None else "SE"

    @property
    def outcome(self) -> str:
        """pass | fail | no_code | error | deadline (module docs)."""
        if self.code is None:
            return NO_CODE
        return outcome_of(self.verdict) if self.verdict is not None else "error"

    @property
    def passed(self) -> int:
        """Tests passed (0 where nothing was judged; under first-failure judging, those before the failure)."""
        return self.verdict.passed if self.verdict is not None else 0

    @property
    def total(self) -> int:
        """The problem's tests (0 where nothing was judged)."""
        return self.verdict.total if self.verdict is not None else 0


def outcome_of(verdict: Verdict) -> str:
    if verdict.status == "TLE" and verdict.reason == DEADLINE_REASON:
        return "deadline"
    try:
        return OUTCOME_OF_VERDICT[verdict.status]
    except KeyError:
        raise ValueError(f"unknown verdict status {verdict.status!r} for {verdict.submission_id}") from None


def test_share(verdict: Verdict, problem: Problem | None = None) -> float:
    """The share of the problem's tests the verdict passed (meaningful under `mode="all"`). Given the
    problem, counted from the per-test results over all its tests (the verdict's own `passed` and
    `total` are not trusted: a test without a result, not judged, did not pass)."""
    if problem is None:
        return min(verdict.passed / verdict.total, 1.0) if verdict.total > 0 else 0.0
    n = len(problem.tests)
    return sum(t.status == "AC" for t in verdict.tests[:n]) / n if n else 0.0


def group_points(problem: Problem) -> dict[str, float] | None:
    """The points of each test group holding some of the problem's tests (`meta["test_groups"]`):
    `accept_score` (2025-09 packages: `max_score`), else 1, and 0 for a `sample` group without
    points (the package formats never score samples). None where no group carries points of its
    own (a pass-fail package's `sample` and `secret`): not a problem graded by groups."""
    groups = problem.meta.get("test_groups") if isinstance(problem.meta, dict) else None
    if not isinstance(groups, list):
        return None
    holding = {t.group for t in problem.tests if t.group is not None}
    points: dict[str, float] = {}
    scored = False
    for g in groups:
        name = g.get("group") if isinstance(g, dict) else None
        if name not in holding:
            continue  # a parent folder (its tests sit in its subgroups) or a group all of whose tests were dropped
        value = _points(g)
        scored = scored or (value is not None and value > 0)
        points[name] = value if value is not None else 0.0 if _is_sample(name) else 1.0
    return points if scored else None


def group_share(problem: Problem, verdict: Verdict) -> float | None:
    """The share of the points of the groups (`group_points`) whose every test passed; None where the
    problem is not graded by groups. The verdict's per-test results follow the problem's tests; a test
    without a result (not judged: first-failure judging, a compile error) did not pass."""
    points = group_points(problem)
    if points is None:
        return None
    passed = dict.fromkeys(points, True)
    for i, test in enumerate(problem.tests):
        if test.group in passed and not (i < len(verdict.tests) and verdict.tests[i].status == "AC"):
            passed[test.group] = False
    return sum(p for g, p in points.items() if passed[g]) / sum(points.values())


def _points(group: dict[str, Any]) -> float | None:
    for key in ("accept_score", "max_score"):
        value = group.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
            return float(value)
    return None


def _is_sample(group: str) -> bool:
    return group == "sample" or group.startswith("sample/")


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or a conversational list of messages (TRL)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant")
    raise TypeError(f"unsupported completion type {type(completion).__name__}")


class Scorer:
    """Scores completion texts against their problems with one judge.

    `judge`: an evaluator owned by the caller; else `make_judge()` (default: the evaluator with
    default settings) builds one on first use, owned and closed here. `deadline_s`: a hard
    deadline per batch (None: none, no watchdog). `mode`: "first-failure" (stop at a submission's
    first failing test: the status is all that is read) or "all" (judge every test: partial credit)."""

    def __init__(self, problems: Mapping[str, Problem] | Iterable[Problem], *, language: str = "python",
                 judge: Judge | None = None, make_judge: Callable[[], Judge] | None = None,
                 deadline_s: float | None = None, watchdog_grace_s: float = WATCHDOG_GRACE_S,
                 mode: str = "first-failure"):
        self.problems = dict(problems) if isinstance(problems, Mapping) else {p.id: p for p in problems}
        if deadline_s is not None and not deadline_s > 0:
            raise ValueError(f"deadline_s must be positive, got {deadline_s}")
        if mode not in JUDGE_MODES:
            raise ValueError(f"mode must be one of {JUDGE_MODES}, got {mode!r}")
        self.mode = mode
        self.language = language
        self.deadline_s = deadline_s
        self.watchdog_grace_s = watchdog_grace_s
        self._judge = judge
        self._owns_judge = judge is None
        self._make_judge = make_judge
        self._calls = 0
        self.stats: Counter[str] = Counter()  # watchdog_timeouts

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            if self._make_judge is None:
                from microcoder.pipeline.evaluator.factory import make_evaluator

                self._judge = make_evaluator()
            else:
                self._judge = self._make_judge()
        return self._judge

    def close(self) -> None:
        if self._judge is not None and self._owns_judge:
            self._judge.close()
            self._judge = None

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def score(self, texts: Sequence[str], problem_ids: Sequence[str],
              submission_ids: Sequence[str] | None = None) -> list[Scored]:
        """One `Scored` per text: its code extracted, judged against problem `problem_ids[i]`."""
        from microcoder.pipeline.evaluator import Submission

        self._calls += 1
        if len(texts) != len(problem_ids):
            raise ValueError(f"{len(texts)} completions but {len(problem_ids)} problem ids")
        codes = [extract_code(t, self.language) for t in texts]
        todo = [i for i, code in enumerate(codes) if code is not None]
        scored = [Scored(code) for code in codes]
        if not todo:
            return scored
        sids = submission_ids if submission_ids is not None else [f"s{self._calls}-{i}" for i in range(len(texts))]
        submissions = [Submission(problem_ids[i], sids[i], self.language, codes[i]) for i in todo]
        problems = {pid: self.problems[pid] for pid in dict.fromkeys(problem_ids[i] for i in todo)}
        verdicts = self._judge_batch(problems, submissions)
        if len(verdicts) != len(submissions):
            raise RuntimeError(f"the evaluator returned {len(verdicts)} verdicts for {len(submissions)} submissions")
        for i, verdict in zip(todo, verdicts, strict=True):
            scored[i] = Scored(codes[i], verdict)
        return scored

    def _judge_batch(self, problems: dict[str, Problem], submissions: list[Any]) -> list[Verdict | None]:
        judge = self.judge
        if self.deadline_s is None:
            return list(judge.evaluate_batch(problems, submissions, mode=self.mode))
        # The call runs in a daemon thread so that a stuck judge cannot block the interpreter's exit.
        result: dict[str, Any] = {}
        done = threading.Event()

        def call() -> None:
            try:
                result["verdicts"] = judge.evaluate_batch(problems, submissions, mode=self.mode,
                                                          deadline_s=self.deadline_s)
            except BaseException as e:  # re-raised in the caller's thread
                result["error"] = e
            finally:
                done.set()

        start = time.monotonic()
        threading.Thread(target=call, name="scoring-judge", daemon=True).start()
        if not done.wait(self.deadline_s + self.watchdog_grace_s):
            log.error("the evaluator overran the %.0f s batch deadline by more than %.0f s; scoring %d samples as "
                      "errors and starting a new evaluator", self.deadline_s, self.watchdog_grace_s, len(submissions))
            self._abandon_judge(judge)
            return [None] * len(submissions)
        if "error" in result:
            raise result["error"]
        log.debug("judged %d submissions in %.2f s", len(submissions), time.monotonic() - start)
        return list(result["verdicts"])

    def _abandon_judge(self, judge: Judge) -> None:
        self.stats["watchdog_timeouts"] += 1
        if self._owns_judge:
            self._judge = None  # a fresh pool on the next call; close the stuck one in the background
            threading.Thread(target=judge.close, name="scoring-judge-close", daemon=True).start()
