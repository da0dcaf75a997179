"""The training reward: each completion's extracted code judged by the sandboxed evaluator.

Per sample, a reward and a status (METHOD.md section 3 decisions; the truncation mask reads the
status):
- `pass`: the code passed every test (AC) -> `reward_pass`;
- `fail`: the code ran (or failed to compile) and failed a test: WA/TLE/MLE/RE/CE/OLE -> `reward_fail`.
  CE is the model's fault, and so is a per-test TLE (the code overran the problem's time limit);
- `no_code`: no extractable code block (an unfinished, often truncated answer) -> `reward_no_code`;
- `deadline`: the judge never finished the sample: it was still queued or running when the batch
  deadline passed (the evaluator's TLE with reason "batch deadline"). Four identical correct
  samples must not get [1, 0, 0, 0] because one worker was slow: the reward is None (TRL leaves
  the sample out of its group's mean/std and zeroes its advantage), the share is logged
  (`rewards/evaluator/deadline_frac`) and the trainer warns or stops above a threshold;
- `error`: the harness failed (SE), or the judge itself overran its deadline. That is our fault,
  not the model's, so the reward is None too. Errors are counted and logged
  (`rewards/evaluator/error_frac`).

The evaluator (`pipeline.evaluator.Evaluator`) is a persistent process pool: one per reward
object, reused across steps, closed by `close()`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

from pipeline.rollout.extract import extract_code
from pipeline.schema import Problem, Verdict

log = logging.getLogger(__name__)

STATUS_OF_VERDICT = {
    "AC": "pass",
    "WA": "fail",
    "TLE": "fail",
    "MLE": "fail",
    "RE": "fail",
    "CE": "fail",
    "OLE": "fail",
    "SE": "error",
}
# The evaluator's reason on the TLE verdict of a submission it did not finish by the batch deadline
# (pipeline/evaluator/pool.py `_deadline_verdict`): not the model's TLE.
DEADLINE_REASON = "batch deadline"
# Extra time the watchdog allows past the evaluator's own deadline (killing and collecting workers).
WATCHDOG_GRACE_S = 30.0


class Judge(Protocol):
    """What the reward needs from `pipeline.evaluator.Evaluator` (tests inject fakes)."""

    def evaluate_batch(self, problems: Any, submissions: list[Any], mode: str = "first-failure",
                       deadline_s: float | None = None) -> list[Verdict]: ...

    def close(self) -> None: ...


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversational list of messages."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(str(m.get("content") or "") for m in completion if m.get("role", "assistant") == "assistant")
    raise TypeError(f"unsupported completion type {type(completion).__name__}")


def status_of(verdict: Verdict) -> str:
    if verdict.status == "TLE" and verdict.reason == DEADLINE_REASON:
        return "deadline"
    try:
        return STATUS_OF_VERDICT[verdict.status]
    except KeyError:
        raise ValueError(f"unknown verdict status {verdict.status!r} for {verdict.submission_id}") from None


class EvaluatorReward:
    """A TRL reward function: `reward(prompts, completions, problem_id=[...], **kwargs) -> rewards`.

    The dataset must carry a `problem_id` column (TRL passes dataset columns to reward functions).
    After each call, `last_statuses` holds one status per sample (`pass|fail|no_code|error`),
    `last_verdicts` the evaluator's verdicts (None where no code was judged) and `stats` running
    counts.
    """

    __name__ = "evaluator"  # TRL names reward functions (and their metrics) by `__name__`

    def __init__(
        self,
        problems: Mapping[str, Problem] | Iterable[Problem],
        *,
        judge: Judge | None = None,
        language: str = "python",
        deadline_s: float = 120.0,
        workers: int | None = None,
        timeout_scale: float = 1.0,
        reward_pass: float = 1.0,
        reward_fail: float = 0.0,
        reward_no_code: float = 0.0,
        watchdog_grace_s: float = WATCHDOG_GRACE_S,
    ):
        self.problems = dict(problems) if isinstance(problems, Mapping) else {p.id: p for p in problems}
        if deadline_s <= 0:
            raise ValueError(f"deadline_s must be positive, got {deadline_s}")
        self.language = language
        self.deadline_s = deadline_s
        self.watchdog_grace_s = watchdog_grace_s
        self.workers = workers
        self.timeout_scale = timeout_scale
        self.values = {"pass": reward_pass, "fail": reward_fail, "no_code": reward_no_code, "error": None,
                       "deadline": None}
        self._judge = judge
        self._owns_judge = judge is None
        self._calls = 0
        self.last_statuses: list[str] = []
        self.last_verdicts: list[Verdict | None] = []
        self.stats: Counter[str] = Counter()

    # --- the judge -------------------------------------------------------------------------------
    @property
    def judge(self) -> Judge:
        if self._judge is None:
            from pipeline.evaluator import Evaluator

            self._judge = Evaluator(workers=self.workers, timeout_scale=self.timeout_scale)
        return self._judge

    def close(self) -> None:
        if self._judge is not None and self._owns_judge:
            self._judge.close()
            self._judge = None

    def __enter__(self) -> EvaluatorReward:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- scoring ---------------------------------------------------------------------------------
    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any], problem_id: Sequence[str] | None = None,
                 **kwargs: Any) -> list[float | None]:
        if problem_id is None:
            raise ValueError("the training dataset needs a `problem_id` column for the evaluator reward")
        if len(problem_id) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(problem_id)} problem ids")
        missing = sorted({pid for pid in problem_id if pid not in self.problems})
        if missing:
            raise KeyError(f"problems not known to the reward function: {missing[:5]} ({len(missing)} in all)")
        statuses, verdicts = self.score([completion_text(c) for c in completions], list(problem_id))
        self.last_statuses, self.last_verdicts = statuses, verdicts
        counts = Counter(statuses)
        self.stats.update(counts)
        log_metric = kwargs.get("log_metric")
        if log_metric is not None:
            n = max(len(statuses), 1)
            log_metric("rewards/evaluator/error_frac", counts["error"] / n)
            log_metric("rewards/evaluator/deadline_frac", counts["deadline"] / n)
        return [self.values[s] for s in statuses]

    def score(self, texts: list[str], problem_ids: list[str]) -> tuple[list[str], list[Verdict | None]]:
        """Statuses and verdicts for completion texts against their problems."""
        self._calls += 1
        statuses: list[str] = ["no_code"] * len(texts)
        verdicts: list[Verdict | None] = [None] * len(texts)
        index, submissions = [], []
        for i, (text, pid) in enumerate(zip(texts, problem_ids, strict=True)):
            code = extract_code(text, self.language)
            if code is None:
                continue
            index.append(i)
            submissions.append((pid, f"r{self._calls}-{i}", code))
        if not submissions:
            return statuses, verdicts
        from pipeline.evaluator import Submission

        submissions = [Submission(problem_id=pid, submission_id=sid, language=self.language, code=code)
                       for pid, sid, code in submissions]
        problems = {pid: self.problems[pid] for pid in problem_ids}
        judged = self._judge_with_watchdog(problems, submissions)
        for i, verdict in zip(index, judged, strict=True):
            verdicts[i] = verdict
            statuses[i] = status_of(verdict) if verdict is not None else "error"
        return statuses, verdicts

    def _judge_with_watchdog(self, problems: dict[str, Problem], submissions: list[Any]) -> list[Verdict | None]:
        """The evaluator enforces `deadline_s` itself; the watchdog only guards against the judge
        overrunning it (a harness bug): then every sample is an `error` and the judge is replaced.
        The call runs in a daemon thread so a stuck judge cannot block the interpreter's exit."""
        judge = self.judge
        result: dict[str, Any] = {}
        done = threading.Event()

        def call() -> None:
            try:
                result["verdicts"] = judge.evaluate_batch(problems, submissions, mode="first-failure",
                                                          deadline_s=self.deadline_s)
            except BaseException as e:  # re-raised in the trainer's thread
                result["error"] = e
            finally:
                done.set()

        start = time.monotonic()
        threading.Thread(target=call, name="reward-judge", daemon=True).start()
        if not done.wait(self.deadline_s + self.watchdog_grace_s):
            log.error("the evaluator overran the %.0f s batch deadline by more than %.0f s; scoring %d samples as "
                      "errors and starting a new evaluator", self.deadline_s, self.watchdog_grace_s, len(submissions))
            self._abandon_judge(judge)
            return [None] * len(submissions)
        if "error" in result:
            raise result["error"]
        verdicts = result["verdicts"]
        if len(verdicts) != len(submissions):
            raise RuntimeError(f"the evaluator returned {len(verdicts)} verdicts for {len(submissions)} submissions")
        log.debug("judged %d submissions in %.2f s", len(submissions), time.monotonic() - start)
        return list(verdicts)

    def _abandon_judge(self, judge: Judge) -> None:
        self.stats["watchdog_timeouts"] += 1
        if self._owns_judge:
            self._judge = None  # a fresh pool on the next call; close the stuck one in the background
            threading.Thread(target=judge.close, name="reward-judge-close", daemon=True).start()
