"""MicroCoder-Evaluator: sandboxed, parallel, tolerant judging of Python and C++ submissions.

    from pipeline.evaluator import Submission, Evaluator, evaluate, evaluate_batch

    with Evaluator(workers=8) as ev:
        for verdict in ev.evaluate(problems, submissions, mode="all"):
            ...

stdio and functional (LeetCode-style) problems; the problem's checker decides when it has one
(exact / tokens / float / a Kattis or testlib checker program), otherwise the tolerant cascade in
`compare.py`. Every program runs in a bubblewrap sandbox (see `sandbox.py`) under resource limits;
the verdict statuses are those of `pipeline.schema.STATUSES`.
"""

from pipeline.evaluator.compare import Comparison, compare_functional, compare_stdio
from pipeline.evaluator.config import EvaluatorConfig, Submission
from pipeline.evaluator.pool import Evaluator, evaluate, evaluate_batch

__all__ = [
    "Comparison",
    "Evaluator",
    "EvaluatorConfig",
    "Submission",
    "compare_functional",
    "compare_stdio",
    "evaluate",
    "evaluate_batch",
]
