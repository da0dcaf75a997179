"""An interactive Kattis package through the pipeline's own paths: the adapter keeps it with its
interactor, the evaluator judges every submission of its `submissions/` folders as labelled, and
the training reward scores a model's interactive answer (issue 26 item 5)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from microcoder.pipeline.sources.kattis import Options, convert

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")

PACKAGE = Path(__file__).parent / "fixtures" / "sources" / "kattis_kinds" / "guessing"
EXPECTED = {"accepted": "AC", "wrong_answer": "WA", "time_limit_exceeded": "TLE", "run_time_error": "RE"}
LANGUAGE = {".py": "python", ".cpp": "cpp"}


@pytest.fixture(scope="module")
def problem():
    p = convert(PACKAGE, "kattis", Options())
    assert p.checker.kind == "interactor" and p.checker.protocol == "kattis" and p.meta["interactive"]
    return p


def test_every_submission_folder_is_judged_as_labelled(problem):
    """problemtools' rule for a folder: every test gives its verdict or AC, at least one gives it
    (accepted: all AC)."""
    from microcoder.pipeline.evaluator import EvaluatorConfig, Submission
    from microcoder.pipeline.evaluator.factory import make_evaluator

    if shutil.which("g++") is None:
        pytest.skip("g++ is not installed")
    subs = [Submission(problem.id, f"{f.parent.name}/{f.name}", LANGUAGE[f.suffix], f.read_text())
            for f in sorted((PACKAGE / "submissions").glob("*/*")) if f.suffix in LANGUAGE]
    assert {s.submission_id.split("/")[0] for s in subs} == set(EXPECTED)
    with make_evaluator(EvaluatorConfig(workers=2)) as ev:
        verdicts = list(ev.evaluate({problem.id: problem}, subs, mode="all", progress=False))
    for v in verdicts:
        want = EXPECTED[v.submission_id.split("/")[0]]
        statuses = {t.status for t in v.tests}
        assert v.status == want and statuses <= {want, "AC"}, (v.submission_id, v.status, v.reason)


def test_the_reward_scores_an_interactive_answer(problem):
    from microcoder.pipeline.evaluator import EvaluatorConfig
    from microcoder.pipeline.evaluator.factory import make_evaluator
    from microcoder.training.rewards import EvaluatorReward

    right = (PACKAGE / "submissions" / "accepted" / "binary.py").read_text()
    wrong = (PACKAGE / "submissions" / "wrong_answer" / "linear.py").read_text()
    completions = [[{"role": "assistant", "content": f"```python\n{code}\n```"}] for code in (right, wrong)]
    with EvaluatorReward([problem], deadline_s=60.0,
                         make_judge=lambda: make_evaluator(EvaluatorConfig(workers=2))) as reward:
        rewards = reward(prompts=[None, None], completions=completions, problem_id=[problem.id] * 2)
    assert reward.last_statuses == ["pass", "fail"] and rewards == [1.0, 0.0]


def test_the_prompt_says_interactive_and_flush(problem):
    from microcoder.pipeline.generation.prompts import build_messages

    user = build_messages(problem, language="python")[-1]["content"]
    assert "interactive problem" in user and "flush" in user.lower()
