"""The one scoring path: completion text -> extracted code -> verdict -> status.

Rollout, the training reward and eval-model all score through `Scorer.score`; each reads the
status it reports from the same `Scored` result:
- `Scored.status`: the evaluator's status (AC, WA, TLE, ..., SE) or `no_code` (rollout rows);
- `Scored.outcome`: `pass | fail | no_code | error | deadline` (the reward and eval-model):
  `fail` is the model's fault (WA/TLE/MLE/RE/CE/OLE: a per-test TLE means the code overran the
  problem's limit); `deadline` is a sample the judge had not finished at the batch deadline (the
  evaluator's TLE with reason "batch deadline") and `error` one the harness could not run (SE) or
  the judge overran its deadline on: both are the judge's failures, not the model's (unjudged).

`Scorer` owns the judge (started only when a sample has code to judge, through the factory the
stage gives it: `pipeline.evaluator.factory.make_evaluator(...)` from the params' `evaluator:` section) and,
given a batch deadline, a watchdog thread: the evaluator enforces the deadline itself; the
watchdog only guards against the judge overrunning it (a harness bug), scoring the batch as
errors and replacing the judge, so a stuck judge never hangs a trainer.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pipeline.rollout.extract import extract_code
from pipeline.schema import Problem, Verdict

log = logging.getLogger(__name__)

NO_CODE = "no_code"
# The evaluator's reason on the TLE verdict of a submission it did not finish by the batch deadline
# (pipeline/evaluator/pool.py `_deadline_verdict`): not the model's TLE.
DEADLINE_REASON = "batch deadline"
OUTCOME_OF_VERDICT = {"AC": "pass", "WA": "fail", "TLE": "fail", "MLE": "fail", "RE": "fail", "CE": "fail",
                      "OLE": "fail", "SE": "error"}
OUTCOMES = ("pass", "fail", "no_code", "error", "deadline")
JUDGED = ("pass", "fail", "no_code")  # outcomes the judge decided (no_code: the model gave no code)
UNJUDGED = ("error", "deadline")  # the judge's own failures: never counted against the model
# Extra time the watchdog allows past the evaluator's own deadline (killing and collecting workers).
WATCHDOG_GRACE_S = 30.0


class Judge(Protocol):
    """What scoring needs of `pipeline.evaluator.Evaluator` (or its Ray counterpart; tests inject fakes)."""

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


def outcome_of(verdict: Verdict) -> str:
    if verdict.status == "TLE" and verdict.reason == DEADLINE_REASON:
        return "deadline"
    try:
        return OUTCOME_OF_VERDICT[verdict.status]
    except KeyError:
        raise ValueError(f"unknown verdict status {verdict.status!r} for {verdict.submission_id}") from None


def completion_text(completion: Any) -> str:
    """The text of a completion: a string, or a conversational list of messages (TRL)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant")
    raise TypeError(f"unsupported completion type {type(completion).__name__}")


class Scorer:
    """Scores completion texts against their problems with one judge (first-failure judging).

    `judge`: an evaluator owned by the caller; else `make_judge()` (default: the evaluator with
    default settings) builds one on first use, owned and closed here. `deadline_s`: a hard
    deadline per batch (None: none, no watchdog)."""

    def __init__(self, problems: Mapping[str, Problem] | Iterable[Problem], *, language: str = "python",
                 judge: Judge | None = None, make_judge: Callable[[], Judge] | None = None,
                 deadline_s: float | None = None, watchdog_grace_s: float = WATCHDOG_GRACE_S):
        self.problems = dict(problems) if isinstance(problems, Mapping) else {p.id: p for p in problems}
        if deadline_s is not None and not deadline_s > 0:
            raise ValueError(f"deadline_s must be positive, got {deadline_s}")
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
                from pipeline.evaluator.factory import make_evaluator

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
        from pipeline.evaluator import Submission

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
            return list(judge.evaluate_batch(problems, submissions, mode="first-failure"))
        # The call runs in a daemon thread so that a stuck judge cannot block the interpreter's exit.
        result: dict[str, Any] = {}
        done = threading.Event()

        def call() -> None:
            try:
                result["verdicts"] = judge.evaluate_batch(problems, submissions, mode="first-failure",
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
