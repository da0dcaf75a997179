"""executor=ray judging against the local pool, on a real local Ray cluster (the session's
`ray_cluster`, no mocks): the same verdicts for the same samples, in submission order; an actor
killed mid-run is recovered from with nothing lost or judged twice; bad settings are one clear
error; and the default (local) path never imports Ray."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from microcoder.pipeline.evaluator import Evaluator, EvaluatorConfig, Submission
from microcoder.pipeline.evaluator.factory import make_evaluator
from microcoder.pipeline.executor import ExecutionFields, check_executor
from microcoder.pipeline.schema import Problem, TestCase

FAST = EvaluatorConfig(wall_factor=1.5, wall_slack_s=0.5)
SUM = Problem(id="sum", source="test", statement="", style="stdio", time_limit_s=0.5,
              tests=[TestCase("1 2\n", "3\n"), TestCase("10 20\n", "30\n"), TestCase("-1 1\n", "0\n")])
ADD = Problem(id="add", source="test", statement="", style="functional", entry_point="add", time_limit_s=0.5,
              tests=[TestCase("1\n2", "3"), TestCase("[1]\n[2]", "[1, 2]"), TestCase('"a"\n"b"', '"ab"')])
STDIO = {
    "ac": "a, b = map(int, input().split())\nprint(a + b)\n",
    "wa": "print(3)\n",  # right on the first test only
    "tle": "while True:\n    pass\n",
    "ce": "print(\n",
    "re": "raise ValueError('boom')\n",
}
FUNCTIONAL = {
    "ac": "def add(a, b):\n    return a + b\n",
    "wa": "def add(a, b):\n    return a\n",
    "tle": "def add(a, b):\n    while True:\n        pass\n",
    "ce": "def add(a, b)\n    return a + b\n",
}
CPP_AC = textwrap.dedent("""\
    #include <iostream>
    int main() { long long a, b; std::cin >> a >> b; std::cout << a + b << "\\n"; }
""")


def samples() -> list[Submission]:
    subs = [Submission("sum", f"sum-{k}", "python", code) for k, code in STDIO.items()]
    subs += [Submission("add", f"add-{k}", "python", code) for k, code in FUNCTIONAL.items()]
    subs.append(Submission("sum", "sum-cpp", "cpp", CPP_AC))
    subs.append(Submission("nope", "unknown-problem", "python", STDIO["ac"]))
    # more chunks than actors, so the order has to be put back together
    subs += [Submission(p, f"{p}-{k}-{i}", "python", code) for i in range(3)
             for p, k, code in (("sum", "ac", STDIO["ac"]), ("add", "wa", FUNCTIONAL["wa"]))]
    return subs


def shape(v):
    return (v.problem_id, v.submission_id, v.status, v.passed, v.total, [t.status for t in v.tests])


@pytest.fixture(scope="module")
def ray_ev(ray_cluster):
    with make_evaluator(FAST, executor="ray", workers=2, ray_actor_cpus=1) as ev:
        yield ev


@pytest.fixture(scope="module")
def local_verdicts():
    with Evaluator(workers=2, config=FAST) as ev:
        return {mode: ev.evaluate_batch([SUM, ADD], samples(), mode=mode) for mode in ("first-failure", "all")}


@pytest.mark.parametrize("mode", ["first-failure", "all"])
def test_same_verdicts_as_local(ray_ev, local_verdicts, mode):
    assert ray_ev.workers == 2 and len(ray_ev.actors()) == 2
    local = local_verdicts[mode]
    assert {v.status for v in local} >= {"AC", "WA", "TLE", "CE", "RE"}  # the mixture is really mixed
    ray_batch = ray_ev.evaluate_batch([SUM, ADD], samples(), mode=mode)
    assert [shape(v) for v in ray_batch] == [shape(v) for v in local]
    # the streaming call yields them in submission order too, dicts and malformed records included
    items = [{"problem_id": s.problem_id, "submission_id": s.submission_id, "language": s.language,
              "code": s.code} for s in samples()] + [{"problem_id": "sum", "code": 3}]
    streamed = list(ray_ev.evaluate([SUM, ADD], iter(items), mode=mode, progress=False))  # length unknown
    assert [shape(v) for v in streamed[:-1]] == [shape(v) for v in local]
    assert streamed[-1].status == "SE" and "malformed" in streamed[-1].reason
    assert all(v.meta.get("sandbox") == local[0].meta.get("sandbox") for v in streamed)


def test_batch_deadline_as_local(ray_ev):
    slow = Problem(id="slow", source="test", statement="", style="stdio", time_limit_s=20.0,
                   tests=[TestCase("", "")])
    subs = [Submission("slow", f"s{i}", "python", STDIO["tle"]) for i in range(3)]
    verdicts = ray_ev.evaluate_batch([slow], subs, deadline_s=1.0)
    assert [(v.submission_id, v.status, v.reason) for v in verdicts] == [
        (f"s{i}", "TLE", "batch deadline") for i in range(3)]


def test_killed_actor_is_recovered(ray_cluster, ray_ev):
    """An actor killed while it holds chunks: they are judged elsewhere, every submission exactly
    once in the output, in order; the lost actor is replaced and the next call uses both. (The
    module's evaluator: the session cluster's 2 CPUs hold no second one.)"""
    busy = "import time\nt = time.time()\nwhile time.time() - t < 0.15:\n    pass\n" + STDIO["ac"]
    subs = [Submission("sum", f"k{i}", "python", busy) for i in range(16)]
    restarts = ray_ev.restarts
    stream = ray_ev.evaluate([SUM], subs, progress=False)
    out = [next(stream)]
    victim = ray_ev.actors()[0]
    victim_root = ray_cluster.get(victim.ready.remote())["root"]
    assert os.path.isdir(victim_root)
    ray_cluster.kill(victim, no_restart=True)
    out += list(stream)
    assert [v.submission_id for v in out] == [s.submission_id for s in subs]
    assert [v.status for v in out] == ["AC"] * len(subs)
    assert ray_ev.restarts > restarts and victim not in ray_ev.actors() and len(ray_ev.actors()) == 2
    assert not os.path.exists(victim_root)  # the folder it could not remove, removed by a live actor
    again = ray_ev.evaluate_batch([SUM], subs[:4])
    assert [v.status for v in again] == ["AC"] * 4
    # a lost node: every actor dead while idle; the next call's chunks find out, all are replaced
    for actor in ray_ev.actors():
        ray_cluster.kill(actor, no_restart=True)
    after = ray_ev.evaluate_batch([SUM], subs[:6])
    assert [(v.submission_id, v.status) for v in after] == [(s.submission_id, "AC") for s in subs[:6]]


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"executor": "cluster"}, "executor must be one of"),
    ({"executor": "ray", "ray_address": "http://head:8265"}, "ray_address must be"),
    ({"executor": "ray", "ray_address": 6379}, "ray_address must be"),
])
def test_bad_settings_are_clear_errors(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ExecutionFields(**kwargs)
    with pytest.raises(ValueError, match=message):
        check_executor(kwargs["executor"], kwargs.get("ray_address"))


def test_bad_cluster_settings_are_clear_errors(ray_cluster):
    with pytest.raises(RuntimeError, match="no alive node .* resource 'gpu_free_node'"):
        make_evaluator(FAST, executor="ray", ray_resource="gpu_free_node")
    with pytest.raises(ValueError, match="judges per Ray actor must be >= 1"):
        make_evaluator(FAST, executor="ray", ray_actor_cpus=0)


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120)


def test_unreachable_cluster_is_one_line():
    """Outside the session's cluster (a fresh process): nothing listens there, said in seconds."""
    r = _python("""
        from microcoder.pipeline.evaluator.factory import make_evaluator
        make_evaluator(None, executor="ray", ray_address="127.0.0.1:1")
    """)
    assert r.returncode != 0
    assert "RuntimeError: executor=ray: no Ray cluster answers at '127.0.0.1:1'" in r.stderr


def test_local_default_never_imports_ray():
    r = _python("""
        import sys
        from microcoder.pipeline.evaluator import Submission
        from microcoder.pipeline.evaluator.factory import make_evaluator
        from microcoder.pipeline.executor import ExecutionFields
        from microcoder.pipeline.schema import Problem, TestCase
        p = Problem(id="p", source="t", statement="", style="stdio", tests=[TestCase("1\\n", "1\\n")])
        cfg = ExecutionFields()
        with make_evaluator({"workers": 1}, executor=cfg.executor, ray_address=cfg.ray_address) as ev:
            assert type(ev).__name__ == "Evaluator"
            v = ev.evaluate_batch([p], [Submission("p", "s", "python", "print(input())")])[0]
        assert v.status == "AC", v
        assert "ray" not in sys.modules, "the local executor imported ray"
        import microcoder.pipeline.cli  # every stage's command: none may start Ray when it is imported
        ray = sys.modules.get("ray")
        assert ray is None or not ray.is_initialized()
        print("ok")
    """)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-2000:]



def test_reward_scoring_on_ray_as_local(ray_ev):
    """The training reward's path (microcoder.pipeline.scoring.Scorer with a batch deadline, as
    EvaluatorReward uses it): the same statuses from Ray's judges as from the local pool."""
    from microcoder.pipeline.scoring import Scorer

    texts = [f"```python\n{STDIO[k]}```" for k in ("ac", "wa", "ce", "tle")] + ["no code here"]
    texts += [f"```python\n{FUNCTIONAL[k]}```" for k in ("ac", "wa")]
    pids = ["sum"] * 5 + ["add"] * 2
    with Evaluator(workers=2, config=FAST) as local_ev:
        local = Scorer([SUM, ADD], judge=local_ev, deadline_s=60).score(texts, pids)
    on_ray = Scorer([SUM, ADD], judge=ray_ev, deadline_s=60).score(texts, pids)
    assert [s.status for s in on_ray] == [s.status for s in local] == ["AC", "WA", "CE", "TLE", "no_code", "AC", "WA"]
