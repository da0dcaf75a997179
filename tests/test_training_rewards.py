"""The evaluator-backed reward: statuses, reward values, the per-batch deadline, the watchdog."""

from __future__ import annotations

import threading

import pytest

from pipeline.schema import Problem, TestCase, Verdict
from training.rewards import EvaluatorReward

PROBLEMS = [Problem(id=f"p{i}", source="t", statement="Echo the input.", style="stdio",
                    tests=[TestCase("5\n", "5\n")], time_limit_s=1.0) for i in range(3)]


def answer(code: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": f"Here it is.\n```python\n{code}\n```"}]


class ScriptedJudge:
    """Returns the status written in the code (`# AC`, `# WA`...), records what it was asked."""

    def __init__(self):
        self.calls = []

    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        self.calls.append((problems, submissions, mode, deadline_s))
        out = []
        for s in submissions:
            status = s.code.split("# ")[-1].strip()
            reason = "batch deadline" if status == "TLE-deadline" else None
            out.append(Verdict(s.problem_id, s.submission_id, "TLE" if reason else status, reason=reason))
        return out

    def close(self):
        pass


def test_statuses_and_rewards():
    judge = ScriptedJudge()
    reward = EvaluatorReward(PROBLEMS, judge=judge, deadline_s=7.0, reward_pass=1.0, reward_fail=-0.5,
                             reward_no_code=0.25)
    completions = [answer("x # AC"), answer("x # WA"), answer("x # CE"), answer("x # SE"),
                   [{"role": "assistant", "content": "thinking... ```python\nprint("}], "plain text\n```python\nx # RE\n```"]
    logged = {}
    rewards = reward(prompts=[None] * 6, completions=completions, problem_id=["p0", "p1", "p2", "p0", "p1", "p2"],
                     log_metric=logged.__setitem__)
    assert reward.last_statuses == ["pass", "fail", "fail", "error", "no_code", "fail"]
    assert rewards == [1.0, -0.5, -0.5, None, 0.25, -0.5]  # None: TRL leaves our own failures out of the group
    (problems, submissions, mode, deadline), = judge.calls
    assert mode == "first-failure" and deadline == 7.0
    assert len(submissions) == 5 and all(s.problem_id in problems for s in submissions)
    assert len({s.submission_id for s in submissions}) == 5
    assert logged["rewards/evaluator/error_frac"] == pytest.approx(1 / 6)
    assert reward.stats == {"pass": 1, "fail": 3, "error": 1, "no_code": 1}


def test_no_code_batch_never_calls_the_judge():
    judge = ScriptedJudge()
    reward = EvaluatorReward(PROBLEMS, judge=judge)
    assert reward(prompts=[None], completions=["no code here"], problem_id=["p0"]) == [0.0]
    assert judge.calls == [] and reward.last_statuses == ["no_code"]


def test_a_sample_left_unjudged_at_the_batch_deadline_has_no_reward():
    # Four identical correct answers, one of them still queued when the deadline passed (a slow worker):
    # it is the judge's failure, so no reward (None: TRL drops it from mean/std), never a 0 that ranks it
    # below its identical siblings. A per-test TLE (the code itself too slow) stays a failure.
    reward = EvaluatorReward(PROBLEMS, judge=ScriptedJudge())
    logged = {}
    rewards = reward(prompts=[None] * 5, completions=[answer("x # AC"), answer("x # AC"), answer("x # AC"),
                                                      answer("x # TLE-deadline"), answer("x # TLE")],
                     problem_id=["p0"] * 5, log_metric=logged.__setitem__)
    assert reward.last_statuses == ["pass", "pass", "pass", "deadline", "fail"]
    assert rewards == [1.0, 1.0, 1.0, None, 0.0]
    assert logged["rewards/evaluator/deadline_frac"] == pytest.approx(1 / 5)
    assert reward.stats["deadline"] == 1


class HungJudge:
    """Ignores its deadline (a harness bug): the watchdog must return anyway."""

    def __init__(self):
        self.release = threading.Event()

    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        self.release.wait()
        return []

    def close(self):
        self.release.set()


def test_watchdog_turns_a_hung_judge_into_errors():
    judge = HungJudge()
    reward = EvaluatorReward(PROBLEMS, judge=judge, deadline_s=0.05, watchdog_grace_s=0.05)
    try:
        rewards = reward(prompts=[None] * 2, completions=[answer("x # AC"), "none"], problem_id=["p0", "p1"])
    finally:
        judge.release.set()
    assert reward.last_statuses == ["error", "no_code"] and rewards == [None, 0.0]
    assert reward.stats["watchdog_timeouts"] == 1


def test_judge_exceptions_propagate():
    class Broken(ScriptedJudge):
        def evaluate_batch(self, *args, **kwargs):
            raise OSError("pool died")

    with pytest.raises(OSError, match="pool died"):
        EvaluatorReward(PROBLEMS, judge=Broken())(prompts=[None], completions=[answer("x")], problem_id=["p0"])


def test_unknown_problem_and_missing_column():
    reward = EvaluatorReward(PROBLEMS, judge=ScriptedJudge())
    with pytest.raises(KeyError, match="not known"):
        reward(prompts=[None], completions=["x"], problem_id=["nope"])
    with pytest.raises(ValueError, match="problem_id"):
        reward(prompts=[None], completions=["x"])


def test_real_evaluator_with_a_hung_sample():
    hang = "import time\nwhile True:\n    time.sleep(1)"
    # A time limit far beyond the batch deadline: only the deadline can stop the hung sample.
    slow = Problem(id="slow", source="t", statement="Echo.", style="stdio", tests=[TestCase("5\n", "5\n")],
                   time_limit_s=60.0)
    from pipeline.evaluator.config import EvaluatorConfig
    from pipeline.evaluator.factory import make_evaluator

    with EvaluatorReward([*PROBLEMS, slow], deadline_s=2.0,
                         make_judge=lambda: make_evaluator(EvaluatorConfig(workers=2))) as reward:
        rewards = reward(prompts=[None] * 3, completions=[answer("print(input())"), answer("print(6)"), answer(hang)],
                         problem_id=["p0", "p1", "slow"])
    assert reward.last_statuses == ["pass", "fail", "deadline"]
    assert rewards == [1.0, 0.0, None]
    assert reward.last_verdicts[2].status == "TLE" and reward.last_verdicts[2].reason == "batch deadline"


def test_the_reward_and_rollout_read_one_scoring_path():
    # The same completions scored once: the reward's statuses and rollout's verdict statuses agree.
    from pipeline.scoring import Scorer

    texts = ["```python\nx # AC\n```", "```python\nx # WA\n```", "no code", "```python\nx # TLE-deadline\n```",
             "```python\nx # SE\n```"]
    scored = Scorer(PROBLEMS, judge=ScriptedJudge()).score(texts, ["p0"] * 5)
    assert [s.status for s in scored] == ["AC", "WA", "no_code", "TLE", "SE"]
    assert [s.outcome for s in scored] == ["pass", "fail", "no_code", "deadline", "error"]
    reward = EvaluatorReward(PROBLEMS, judge=ScriptedJudge())
    reward(prompts=[None] * 5, completions=texts, problem_id=["p0"] * 5)
    assert reward.last_statuses == [s.outcome for s in scored]
