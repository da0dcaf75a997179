"""The evaluator-backed reward: statuses, reward values (binary and graded), the per-batch deadline, the watchdog."""

from __future__ import annotations

import threading

import pytest

from microcoder.pipeline.schema import Problem, TestCase, TestResult, Verdict
from microcoder.pipeline.scoring import group_points, group_share
from microcoder.training.rewards import EvaluatorReward

PROBLEMS = [Problem(id=f"p{i}", source="t", statement="Echo the input.", style="stdio",
                    tests=[TestCase("5\n", "5\n")], time_limit_s=1.0) for i in range(3)]


def answer(code: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": f"Here it is.\n```python\n{code}\n```"}]


class ScriptedJudge:
    """Returns the status written in the code (`# AC`, `# WA`...), then the per-test statuses where
    written (`# WA AC WA AC AC`; an AC passes every test), cut after the first failure in mode
    first-failure as the evaluator does; records what it was asked."""

    def __init__(self):
        self.calls = []

    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        self.calls.append((problems, submissions, mode, deadline_s))
        out = []
        for s in submissions:
            status, *per_test = s.code.split("# ")[-1].split()
            reason = "batch deadline" if status == "TLE-deadline" else None
            total = len(problems[s.problem_id].tests)
            tests = [TestResult(t) for t in (per_test or (["AC"] * total if status == "AC" else []))]
            if mode == "first-failure":
                failed = next((i for i, t in enumerate(tests) if t.status != "AC"), None)
                tests = tests if failed is None else tests[:failed + 1]
            out.append(Verdict(s.problem_id, s.submission_id, "TLE" if reason else status, reason=reason,
                               passed=sum(t.status == "AC" for t in tests), total=total, tests=tests))
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
    from microcoder.pipeline.evaluator.config import EvaluatorConfig
    from microcoder.pipeline.evaluator.factory import make_evaluator

    with EvaluatorReward([*PROBLEMS, slow], deadline_s=2.0,
                         make_judge=lambda: make_evaluator(EvaluatorConfig(workers=2))) as reward:
        rewards = reward(prompts=[None] * 3, completions=[answer("print(input())"), answer("print(6)"), answer(hang)],
                         problem_id=["p0", "p1", "slow"])
    assert reward.last_statuses == ["pass", "fail", "deadline"]
    assert rewards == [1.0, 0.0, None]
    assert reward.last_verdicts[2].status == "TLE" and reward.last_verdicts[2].reason == "batch deadline"


def test_the_reward_and_rollout_read_one_scoring_path():
    # The same completions scored once: the reward's statuses and rollout's verdict statuses agree.
    from microcoder.pipeline.scoring import Scorer

    texts = ["```python\nx # AC\n```", "```python\nx # WA\n```", "no code", "```python\nx # TLE-deadline\n```",
             "```python\nx # SE\n```"]
    scored = Scorer(PROBLEMS, judge=ScriptedJudge()).score(texts, ["p0"] * 5)
    assert [s.status for s in scored] == ["AC", "WA", "no_code", "TLE", "SE"]
    assert [s.outcome for s in scored] == ["pass", "fail", "no_code", "deadline", "error"]
    reward = EvaluatorReward(PROBLEMS, judge=ScriptedJudge())
    reward(prompts=[None] * 5, completions=texts, problem_id=["p0"] * 5)
    assert reward.last_statuses == [s.outcome for s in scored]


# --- graded rewards (issue 29): binary | fraction | groups ---------------------------------------------
FOUR = Problem(id="four", source="t", statement="Echo.", style="stdio", time_limit_s=1.0,
               tests=[TestCase(f"{i}\n", f"{i}\n") for i in range(1, 5)])
# A Code Jam-like problem: a 0-point sample, two subtasks with points, one group without points, and the
# parent `secret` folder that holds no test of its own. Points: 0 + 10 + 30 + 1 = 41.
GROUPED = Problem(
    id="grouped", source="t", statement="Echo.", style="stdio", time_limit_s=1.0,
    tests=[TestCase("1\n", "1\n", "public", "sample"), TestCase("2\n", "2\n", "private", "secret/subtask1"),
           TestCase("3\n", "3\n", "private", "secret/subtask1"), TestCase("4\n", "4\n", "private", "secret/subtask2"),
           TestCase("5\n", "5\n", "private", "secret/extra")],
    meta={"test_groups": [{"group": "sample", "accept_score": 0, "tests": 1}, {"group": "secret", "tests": 0},
                          {"group": "secret/subtask1", "accept_score": 10, "range": "0 10", "tests": 2},
                          {"group": "secret/subtask2", "accept_score": 30, "tests": 1},
                          {"group": "secret/extra", "tests": 1}]})
GRADED = [*PROBLEMS, FOUR, GROUPED]
# AC, 2 of 4 tests passed (the first failure at test 2), CE, no code, left unjudged at the batch deadline.
GRID = [answer("x # AC"), answer("x # WA AC WA AC WA"), answer("x # CE"), "no code", answer("x # TLE-deadline")]


@pytest.mark.parametrize(("reward", "mode", "expected"), [
    ("binary", "first-failure", [1.0, -1.0, -1.0, 0.25, None]),
    ("fraction", "all", [1.0, 0.0, -1.0, 0.25, None]),  # -1 + (1 - -1) * 2/4
    ("groups", "all", [1.0, 0.0, -1.0, 0.25, None]),  # no test groups: the fraction
])
def test_each_reward_on_a_grid_of_cases(reward, mode, expected):
    judge = ScriptedJudge()
    scored = EvaluatorReward(GRADED, judge=judge, reward=reward, reward_pass=1.0, reward_fail=-1.0,
                             reward_no_code=0.25)
    rewards = scored(prompts=[None] * 5, completions=GRID, problem_id=["four"] * 5)
    assert rewards == expected
    # The statuses (what the truncation mask and the pass rate read) do not depend on the reward.
    assert scored.last_statuses == ["pass", "fail", "fail", "no_code", "deadline"]
    assert [c for _p, _s, c, _d in judge.calls] == [mode]  # every test judged only where the reward needs it
    assert scored.last_credits == [1.0, 0.0 if reward == "binary" else 0.5, 0.0, None, None]


@pytest.mark.parametrize(("per_test", "credit"), [
    ("AC AC AC WA AC", 11 / 41),  # subtask1 (10) and the group without points (1); the sample counts nothing
    ("AC AC WA AC AC", 31 / 41),  # one failing test loses its whole group
    ("WA AC AC AC AC", 4 / 5),  # only the 0-point sample failed: a fail never earns the full reward,
    #                             capped by the share of tests passed
    ("AC AC AC AC WA", 4 / 5),  # 40/41 of the points, capped by the share of tests
    ("WA WA WA WA WA", 0.0),
])
def test_group_credit_counts_the_points_of_whole_groups(per_test, credit):
    reward = EvaluatorReward(GRADED, judge=ScriptedJudge(), reward="groups", reward_pass=2.0, reward_fail=1.0)
    rewards = reward(prompts=[None], completions=[answer(f"x # WA {per_test}")], problem_id=["grouped"])
    assert reward.last_credits == [pytest.approx(credit)]
    assert rewards == [pytest.approx(1.0 + credit)] and reward.last_statuses == ["fail"]
    # `fraction` on the same problem counts tests, not groups
    fraction = EvaluatorReward(GRADED, judge=ScriptedJudge(), reward="fraction")
    fraction(prompts=[None], completions=[answer(f"x # WA {per_test}")], problem_id=["grouped"])
    assert fraction.last_credits == [per_test.split().count("AC") / 5]


def test_group_points_and_problems_not_graded_by_groups():
    assert group_points(GROUPED) == {"sample": 0.0, "secret/subtask1": 10.0, "secret/subtask2": 30.0,
                                     "secret/extra": 1.0}
    # A pass-fail package's groups carry no points: not graded by groups (the reward takes the fraction).
    pass_fail = Problem(id="pf", source="t", statement="Echo.", style="stdio",
                        tests=[TestCase("1\n", "1\n", "public", "sample"), TestCase("2\n", "2\n", "private", "secret"),
                               TestCase("3\n", "3\n", "private", "secret")],
                        meta={"test_groups": [{"group": "sample", "tests": 1}, {"group": "secret", "tests": 2}]})
    assert group_points(pass_fail) is None and group_points(FOUR) is None
    verdict = Verdict("pf", "s", "WA", passed=2, total=3, tests=[TestResult("AC"), TestResult("AC"), TestResult("WA")])
    assert group_share(pass_fail, verdict) is None
    reward = EvaluatorReward([pass_fail], judge=ScriptedJudge(), reward="groups")
    assert reward(prompts=[None], completions=[answer("x # WA AC AC WA")], problem_id=["pf"]) == [pytest.approx(2 / 3)]
    # 2025-09 packages give a group's points as max_score; a compile error (no test results) has no group
    modern = Problem(id="m", source="t", statement="Echo.", style="stdio", tests=GROUPED.tests,
                     meta={"test_groups": [{"group": "secret/subtask1", "max_score": 40},
                                           {"group": "secret/subtask2", "max_score": 60}]})
    assert group_points(modern) == {"secret/subtask1": 40.0, "secret/subtask2": 60.0}
    assert group_share(modern, Verdict("m", "s", "CE", total=5)) == 0.0


def test_an_unknown_reward_is_refused():
    with pytest.raises(ValueError, match="reward must be one of"):
        EvaluatorReward(PROBLEMS, judge=ScriptedJudge(), reward="partial")


def test_real_evaluator_fraction_reward_judges_every_test():
    from microcoder.pipeline.evaluator.config import EvaluatorConfig
    from microcoder.pipeline.evaluator.factory import make_evaluator

    half = "n = int(input())\nprint(n if n <= 2 else 0)"  # passes tests 1 and 2 of 4, fails 3 and 4
    with EvaluatorReward(GRADED, deadline_s=120.0, reward="fraction",
                         make_judge=lambda: make_evaluator(EvaluatorConfig(workers=2))) as reward:
        rewards = reward(prompts=[None] * 3, completions=[answer(half), answer("print(input())"), answer("print(")],
                         problem_id=["four"] * 3)
    assert reward.last_statuses == ["fail", "pass", "fail"]
    assert rewards == [0.5, 1.0, 0.0]
    half_verdict = reward.last_verdicts[0]
    assert (half_verdict.passed, half_verdict.total, len(half_verdict.tests)) == (2, 4, 4)


# --- graded rewards against verdicts that could inflate them (issue 35) -----------------------------------
class FixedJudge:
    """Answers every submission with a copy of `verdict` (what a judge that stopped early, or a verdict
    whose counts disagree with its tests, would give)."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict

    def evaluate_batch(self, problems, submissions, mode="first-failure", deadline_s=None):
        v = self.verdict
        return [Verdict(s.problem_id, s.submission_id, v.status, passed=v.passed, total=v.total,
                        tests=list(v.tests), reason=v.reason) for s in submissions]

    def close(self):
        pass


def credit_of(problem: Problem, verdict: Verdict, reward: str) -> tuple[float | None, float | None]:
    scored = EvaluatorReward([problem], judge=FixedJudge(verdict), reward=reward, reward_pass=1.0, reward_fail=0.0)
    (value,) = scored(prompts=[None], completions=[answer("x")], problem_id=[problem.id])
    return scored.last_credits[0], value


@pytest.mark.parametrize("reward", ["fraction", "groups"])
def test_tests_left_unjudged_count_as_failures_whatever_the_verdicts_total(reward):
    """A run that ended the judging early (a killed session, a crash) leaves tests without results:
    the denominator is every test of the problem, never the verdict's own count of judged tests."""
    ac = TestResult("AC")
    credit, value = credit_of(FOUR, Verdict("four", "s", "RE", passed=2, total=2, tests=[ac, ac]), reward)
    assert credit == value == 0.5


@pytest.mark.parametrize("reward", ["fraction", "groups"])
def test_a_failure_outside_every_test_earns_no_partial_credit(reward):
    """Every test AC yet the verdict failed (a whole-submission MLE, a failure the counts do not show):
    a failing sample never gets the full reward."""
    tests = [TestResult("AC") for _ in FOUR.tests]
    credit, value = credit_of(FOUR, Verdict("four", "s", "MLE", passed=4, total=4, tests=tests), reward)
    assert credit == value == 0.0


def test_the_share_counts_the_per_test_results_not_the_verdicts_passed():
    tests = [TestResult(s) for s in ("AC", "WA", "WA", "WA")]
    assert credit_of(FOUR, Verdict("four", "s", "WA", passed=4, total=4, tests=tests), "fraction")[0] == 0.25


def test_groups_unjudged_tests_fail_their_group_and_groups_are_full_solve():
    """Tests 4-5 never judged: subtask2 and extra fail; subtask1 (both tests AC) alone scores."""
    tests = [TestResult("AC"), TestResult("AC"), TestResult("AC")]
    credit, _ = credit_of(GROUPED, Verdict("grouped", "s", "TLE", passed=3, total=3, tests=tests), "groups")
    assert credit == pytest.approx(10 / 41)
    # one TLE in subtask1 loses the whole group, whatever its other test did
    tests = [TestResult("AC"), TestResult("TLE"), TestResult("AC"), TestResult("AC"), TestResult("AC")]
    credit, _ = credit_of(GROUPED, Verdict("grouped", "s", "TLE", passed=4, total=5, tests=tests), "groups")
    assert credit == pytest.approx(31 / 41)


def test_an_se_test_makes_the_sample_unjudged_only_when_it_is_the_verdict():
    """A test the judge failed on (SE) is never counted against the model as the verdict (error: None);
    after an earlier failure of the model's own, it stays a failed test (no credit gained by it)."""
    se_first = Verdict("four", "s", "SE", passed=1, total=4, tests=[TestResult("AC"), TestResult("SE")])
    assert credit_of(FOUR, se_first, "fraction") == (None, None)
    wa_then_se = [TestResult("AC"), TestResult("WA"), TestResult("SE"), TestResult("AC")]
    assert credit_of(FOUR, Verdict("four", "s", "WA", passed=2, total=4, tests=wa_then_se), "fraction")[0] == 0.5
