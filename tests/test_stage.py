"""The stage contract's core (pipeline/stage.py): typed configs, stats vocabulary, error path."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import pytest
import typer

from microcoder.pipeline.evaluator.config import EvaluatorConfig
from microcoder.pipeline.inputs import InputError
from microcoder.pipeline.stage import (
    Command,
    ConfigError,
    Stage,
    StageStats,
    build_config,
    check_stats,
    check_value,
    config_help,
    load_config,
    reason_key,
    run_stage,
    split_overrides,
    write_stats,
)


@dataclass
class Inner:
    k: int = field(default=4, metadata={"help": "samples per problem"})
    rate: float = 0.5


@dataclass
class Outer:
    name: str = "x"
    inner: Inner = field(default_factory=Inner, metadata={"help": "the inner section"})
    by_name: dict[str, Inner] = field(default_factory=dict)
    sizes: list[int] = field(default_factory=list)
    limit: int | None = None
    mode: Literal["a", "b"] = "a"

    def __post_init__(self) -> None:
        if self.name == "bad":
            raise ValueError("name may not be bad")


def test_nested_sections_become_dataclasses_and_values_are_type_checked():
    cfg = build_config(Outer, {"inner": {"k": 8, "rate": 1}, "by_name": {"a": {"k": 2}}, "sizes": [1, 2],
                               "limit": None, "mode": "b"}, "sec")
    assert cfg.inner == Inner(k=8, rate=1.0) and isinstance(cfg.inner.rate, float)
    assert cfg.by_name == {"a": Inner(k=2)} and cfg.sizes == [1, 2] and cfg.mode == "b"
    assert build_config(Outer, None, "sec") == Outer()


@pytest.mark.parametrize(("data", "message"), [
    ({"bogus": 1}, r"unknown sec params \['bogus'\]; valid: \['by_name', 'inner', 'limit', 'mode', 'name', 'sizes'\]"),
    ({"inner": {"kk": 1}}, r"unknown sec.inner params \['kk'\]; valid: \['k', 'rate'\]"),
    ({"inner": {"k": "8"}}, r"`sec.inner.k`: expected int, got '8'"),
    ({"inner": {"k": True}}, r"`sec.inner.k`: expected int, got True"),
    ({"sizes": [1, "x"]}, r"`sec.sizes.1`: expected int"),
    ({"sizes": 3}, r"`sec.sizes`: expected a list"),
    ({"limit": 1.5}, r"`sec.limit`: expected int"),
    ({"mode": "c"}, r"`sec.mode`: 'c' is not one of \['a', 'b'\]"),
    ({"inner": 3}, r"`sec.inner` must be a mapping"),
    ({"name": "bad"}, r"params `sec`: name may not be bad"),
])
def test_a_bad_setting_is_one_config_error_naming_where(data, message):
    with pytest.raises(ConfigError, match=message):
        build_config(Outer, data, "sec")


def test_check_value_is_the_typed_check_of_one_value():
    assert check_value(float, 1, "x") == 1.0 and isinstance(check_value(float, 1, "x"), float)
    assert check_value(Inner | None, None, "x") is None
    with pytest.raises(ConfigError, match=r"params `train.grpo.ks.1`: expected int"):
        check_value(list[int], [1, "2"], "train.grpo.ks")


def test_overrides_reach_the_stage_section_or_the_evaluator_section(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("sec:\n  inner:\n    k: 3\nevaluator:\n  workers: 2\n")
    sets = ["inner.rate=0.25", "evaluator.timeout_scale=3", "name=y"]
    assert split_overrides(sets) == (["inner.rate=0.25", "name=y"], ["timeout_scale=3"])
    cfg = load_config(Outer, "sec", params, sets)
    assert (cfg.inner.k, cfg.inner.rate, cfg.name) == (3, 0.25, "y")
    class Judging(Command):
        name, section, config, evaluator_config = "judging", "sec", Outer, EvaluatorConfig

    assert Judging.judges and not Command.judges
    cfg, ev = Judging.load_configs(params, sets)
    assert (cfg.name, ev.workers, ev.timeout_scale) == ("y", 2, 3.0)
    with pytest.raises(ConfigError, match=r"unknown evaluator params \['nope'\]"):
        Judging.load_configs(params, ["evaluator.nope=1"])
    with pytest.raises(ConfigError, match="--set expects key=value"):
        load_config(Outer, "sec", params, ["novalue"])
    params.write_text("- a list\n")
    with pytest.raises(ConfigError, match="expected a mapping at the top level"):
        load_config(Outer, "sec", params)


def test_help_lists_every_field_nested_ones_dotted():
    text = config_help(Outer, "sec", judges=True)
    assert "`sec:` section" in text
    assert "  inner.k (int) = 4: samples per problem" in text
    assert "  limit (int | None) = None" in text
    assert "evaluator.KEY=VALUE" in text


def test_stats_vocabulary_adds_up_and_settings_live_apart(tmp_path):
    s = StageStats(read=5, kept=3, figures={"tests": 12})
    s.reject("invalid record: tests[0] has no output")
    s.reject("invalid record: no tests")
    assert reason_key("invalid record: tests[0] has no output") == "invalid record"
    data = write_stats(tmp_path, s, settings={"api_key": "s3cret", "k": 4}, stage="t")
    assert data == {"unit": "problems", "read": 5, "kept": 3, "rejected": 2,
                    "rejected_by_reason": {"invalid record": 2}, "tests": 12}
    assert json.loads((tmp_path / "stats.json").read_text()) == data
    assert json.loads((tmp_path / "settings.json").read_text()) == {"api_key": "<redacted>", "k": 4}
    s.read = 6  # one record neither kept nor rejected: a bug the contract catches
    with pytest.raises(ValueError, match="do not add up: read 6 != kept 3 \\+ rejected 2"):
        s.as_dict()
    with pytest.raises(ValueError, match="may not reuse the shared names"):
        StageStats(figures={"read": 1}).as_dict()
    with pytest.raises(ValueError, match=r"lack \['unit'"):
        check_stats({"read": 0, "kept": 0})


def test_dvc_tracks_a_few_headline_figures_per_stage_not_every_stat(tmp_path):
    """`dvc metrics show` printed stats.json whole: a table 16,000 characters wide. DVC's metrics
    are headline.json (counts plus the stage's few tracked figures); stats.json is a plain output."""
    from pathlib import Path

    import yaml

    s = StageStats(read=4, kept=4, figures={"output_tests": 9, "strength": {"held_out": {"tpr": 1.0, "tnr": None}},
                                            "tests": {"tests_in": 12}})
    write_stats(tmp_path, s, stage="validate")
    assert json.loads((tmp_path / "headline.json").read_text()) == {
        "read": 4, "kept": 4, "rejected": 0, "tests": 9, "tpr": 1.0}
    root = Path(__file__).resolve().parents[1]
    for name, spec in yaml.safe_load((root / "dvc.yaml").read_text())["stages"].items():
        metrics = [next(iter(m)) if isinstance(m, dict) else m for m in spec.get("metrics", [])]
        outs = [next(iter(o)) if isinstance(o, dict) else o for o in spec.get("outs", [])]
        assert not any(m.endswith("stats.json") for m in metrics), name
        for m in metrics:
            if m.endswith("headline.json"):
                assert m.replace("headline.json", "stats.json") in outs, name


def test_run_stage_is_one_line_and_exit_2_for_user_errors(capsys):
    def missing():
        raise InputError("problems data/x.parquet does not exist")

    with pytest.raises(typer.Exit) as e:
        run_stage("demo", missing)
    assert e.value.exit_code == 2
    assert capsys.readouterr().err == "demo: error: problems data/x.parquet does not exist\n"

    def unreadable():
        open("/nonexistent/dir/file")  # noqa: SIM115 - the OSError is the point

    with pytest.raises(typer.Exit) as e:
        run_stage("demo", unreadable)
    assert e.value.exit_code == 2
    err = capsys.readouterr().err
    assert err.startswith("demo: error: ") and "/nonexistent/dir/file" in err and err.count("\n") == 1

    def bug():
        raise RuntimeError("boom\nsecond line")

    with pytest.raises(typer.Exit) as e:
        run_stage("demo", bug)
    assert e.value.exit_code == 1
    assert capsys.readouterr().err == "demo: failed: RuntimeError: boom second line (rerun with --debug for the traceback)\n"
    with pytest.raises(RuntimeError, match="boom"):
        run_stage("demo", bug, debug=True)
    assert run_stage("demo", lambda: 7) == 7


# --- the stage base ---------------------------------------------------------------------------------
@dataclass
class ShortConfig:
    min_words: int = 2
    api_key: str = "secret"


class Short(Stage):
    """A toy stage: rejects problems with a short statement."""

    name = "short"
    config = ShortConfig

    def process(self, problems, ctx):
        kept = []
        for p in problems:
            words = len(p.statement.split())
            if words < ctx.cfg.min_words:
                ctx.reject(p.id, f"too short: {words} words", p)
            else:
                kept.append(p)
        ctx.stats.figures["checked"] = len(problems)
        return kept


class JudgingShort(Short):
    name = "judging-short"
    evaluator_config = EvaluatorConfig


def _problems_file(tmp_path):
    from microcoder.pipeline.io import write_jsonl

    base = {"source": "t", "platform": "t", "style": "stdio", "tests": [{"input": "1\n", "output": "1\n"}]}
    path = tmp_path / "problems.jsonl"
    write_jsonl(path, [{**base, "id": "a", "statement": "print the number"}, {**base, "id": "b", "statement": "echo"},
                       {**base, "id": "a", "statement": "a second a"}, {"id": "c"}])
    return path


def test_the_base_reads_rejects_writes_and_counts_each_once(tmp_path):
    from microcoder.pipeline.io import read_jsonl, read_problems

    stats = Short().run(ShortConfig(), _problems_file(tmp_path), tmp_path / "out")
    out = tmp_path / "out"
    assert [p.id for p in read_problems(out / "problems.parquet")] == ["a"]
    rejects = [r for _, r, _ in read_jsonl(out / "rejects.jsonl")]
    # the reader's rejects (a duplicate id, an invalid record) once each, then the stage's own
    assert [(r["id"], r["stage"]) for r in rejects] == [("a", "short"), ("c", "short"), ("b", "short")]
    assert stats["read"] == 4 == stats["kept"] + stats["rejected"]
    assert stats["rejected_by_reason"] == {"duplicate id": 1, "invalid record": 1, "too short": 1}
    assert stats["checked"] == 2
    assert json.loads((out / "stats.json").read_text()) == stats
    settings = json.loads((out / "settings.json").read_text())
    assert settings == {"min_words": 2, "api_key": "<redacted>"}  # no evaluator: it judges nothing


def test_the_base_refuses_stats_that_do_not_add_up(tmp_path):
    class Leaky(Short):
        def process(self, problems, ctx):
            return problems[:-1]  # drops one without a reject

    with pytest.raises(ValueError, match="do not add up"):
        Leaky().run(ShortConfig(), _problems_file(tmp_path), tmp_path / "out")
    assert not (tmp_path / "out" / "stats.json").exists()


def test_a_judging_stage_records_its_evaluator_settings(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("judging-short:\n  min_words: 1\nevaluator:\n  workers: 3\n")
    cfg, evaluator = JudgingShort.load_configs(params, ["evaluator.workers=2"])
    assert JudgingShort.judges and not Short.judges
    assert cfg.min_words == 1 and evaluator.workers == 2
    JudgingShort().run(cfg, _problems_file(tmp_path), tmp_path / "out", evaluator=evaluator)
    settings = json.loads((tmp_path / "out" / "settings.json").read_text())
    assert settings["min_words"] == 1 and settings["evaluator"]["workers"] == 2
    assert Short.load_configs(params, ["evaluator.workers=2"])[1] is None


def test_a_stage_without_problem_input(tmp_path):
    from microcoder.pipeline.schema import Problem, TestCase

    class Make(Stage):
        name = "make"
        config = ShortConfig

        def process(self, problems, ctx):
            assert problems is None and ctx.problems_path is None
            made = [Problem(id=f"p{i}", source="t", statement="s", style="stdio", tests=[TestCase("1", "1")])
                    for i in range(3)]
            ctx.stats.read = 4
            ctx.reject("p3", "bad: made wrong", {"id": "p3"})
            return made

    stats = Make().run(ShortConfig(), None, tmp_path / "out", n=3)
    assert (stats["read"], stats["kept"], stats["rejected"]) == (4, 3, 1)
    assert (tmp_path / "out" / "problems.parquet").is_file() and (tmp_path / "out" / "rejects.jsonl").is_file()


def test_a_missing_problems_input_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="short input"):
        Short().run(ShortConfig(), tmp_path / "absent.parquet", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_stage_instance_holds_no_run_state(tmp_path):
    """The hook hands `finish` its results through `ctx.result`: one instance runs twice, each
    run with its own results, and no stage class of a command assigns to `self` in its hooks."""
    import ast
    import importlib
    import inspect
    import textwrap

    from microcoder.pipeline.cli import COMMANDS

    class Counted(Short):
        def process(self, problems, ctx):
            ctx.result["ids"] = [p.id for p in problems]
            return super().process(problems, ctx)

        def finish(self, stats, ctx):
            return ctx.result["ids"]

    stage = Counted()
    first = stage.run(ShortConfig(), _problems_file(tmp_path), tmp_path / "one")
    second = stage.run(ShortConfig(min_words=1), _problems_file(tmp_path), tmp_path / "two")
    assert first == second == ["a", "b"] and vars(stage) == {}
    for _, module, _ in COMMANDS:
        mod = importlib.import_module(f"microcoder.stages.{module}")
        if not hasattr(mod, "stage"):
            continue
        cls = mod.stage()
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        assigned = [f"self.{t.attr}" for node in ast.walk(tree) if isinstance(node, ast.Assign | ast.AugAssign)
                    for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                    if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self"]
        assert not assigned, f"{cls.__name__} keeps run state on the stage object: {assigned}"


def test_measured_figures_go_to_timing_json_so_stats_json_moves_only_with_content(tmp_path):
    """Build and the card read stats.json: a rerun whose only change is a time must leave it
    byte-identical (issue 39: build reran when reference times moved by 0.1 ms)."""
    def run(seconds: float, hits: int) -> tuple[bytes, dict]:
        s = StageStats(read=2, kept=2, figures={
            "output_tests": 9, "wall_s": seconds, "cache": {"hits": hits},
            "this_run": {"runs_executed": hits, "wall_s": seconds},
            "judge_time": {"total_s": seconds}, "tests": {"tests_in": 12, "tests_slow": hits},
            "search": {"reference_s": seconds, "rounds": 2}})
        returned = write_stats(tmp_path, s, stage="validate")
        return (tmp_path / "stats.json").read_bytes(), returned

    first, returned = run(1.25, 3)
    second, _ = run(7.5, 0)
    assert first == second
    content = json.loads(first)
    assert content["tests"] == {"tests_in": 12} and content["search"] == {"rounds": 2}
    assert not {"wall_s", "cache", "this_run", "judge_time"} & set(content)
    timing = json.loads((tmp_path / "timing.json").read_text())
    assert timing == {"wall_s": 7.5, "cache": {"hits": 0}, "this_run": {"runs_executed": 0, "wall_s": 7.5},
                      "judge_time": {"total_s": 7.5}, "tests": {"tests_slow": 0}, "search": {"reference_s": 7.5}}
    assert returned["this_run"] == {"runs_executed": 3, "wall_s": 1.25}  # callers still get every figure
    write_stats(tmp_path, StageStats(read=1, kept=1), stage="validate")
    assert not (tmp_path / "timing.json").exists()  # nothing measured this time: no stale figures left


def test_set_may_name_the_commands_own_section(tmp_path):
    """`--set validate.cache_path=X` for validate, as params.yaml spells it (a new user's first try)."""
    @dataclass
    class Cfg:
        cache_path: str = "a"
        max_tests: int = 1

    params = tmp_path / "params.yaml"
    params.write_text("demo:\n  max_tests: 2\n")
    cfg = load_config(Cfg, "demo", params, ["demo.cache_path=b", "max_tests=3", "evaluator.workers=1"])
    assert (cfg.cache_path, cfg.max_tests) == ("b", 3)
    with pytest.raises(ConfigError, match=r"unknown demo params \['nope'\]"):
        load_config(Cfg, "demo", params, ["demo.nope=1"])
