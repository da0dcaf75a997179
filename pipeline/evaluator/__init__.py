"""MicroCoder-Evaluator: sandboxed, parallel, tolerant judging of Python and C++ submissions.

    from microcoder.pipeline.evaluator import Submission, Evaluator, evaluate, evaluate_batch

    with Evaluator(workers=8) as ev:
        for verdict in ev.evaluate(problems, submissions, mode="all"):
            ...

stdio and functional (LeetCode-style) problems; the problem's checker decides when it has one
(exact / tokens / float / a Kattis or testlib checker program), otherwise the tolerant cascade in
`verdict/compare.py`. Every program runs in a bubblewrap sandbox (`sandbox/launch.py`; the layers and
the attacks they hold: docs/evaluator.md) under resource limits;
the verdict statuses are those of `microcoder.pipeline.schema.STATUSES`.
"""

from microcoder.pipeline.evaluator.config import EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.pool import Evaluator, evaluate, evaluate_batch
from microcoder.pipeline.evaluator.verdict.compare import Comparison, compare_functional, compare_stdio

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
