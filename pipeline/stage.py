"""The stage contract: how every `microcoder STAGE` is configured, reports, logs and fails.

A stage is a typer command in `stages/<name>.py` (a thin shell, `microcoder.stages.common.run_stage_command`)
over a `Stage` subclass in `pipeline/` or `training/`. Through this module every stage gets:

- one base (`Stage`): reading the problems (tolerant reader), rejects, problems.parquet, stats
  and settings are done once, in `Stage.run(cfg, problems, out_dir, *, evaluator, progress,
  **inputs)`; the stage writes one hook, `process(problems, ctx)`;
- one typed config: a dataclass (nested dataclasses for nested sections) filled from its
  params.yaml section plus `--set key=value` overrides (`load_config`); an unknown key or a value of
  the wrong type is a one-line error naming the valid keys; `microcoder STAGE --help` lists every
  field with its default and help (`config_help`);
- one evaluator config: judging stages (`Stage.evaluator_config`) read the top-level `evaluator:`
  section (`--set evaluator.workers=2` overrides it), record it in settings.json and build their
  judge from it (`microcoder.pipeline.evaluator.factory.make_evaluator`);
- one error path (`run_stage`): bad params, a missing input or an unreadable file end the stage
  with one line on stderr and exit status 2; `--debug` shows the traceback;
- one way to stop (`run_stage`): SIGINT or SIGTERM kills the stage's judges at once, the stage
  unwinds (its caches keep every run it finished) and exits 130 / 143 with one line saying what it
  kept; a second signal, or an unwinding that takes over `STOP_GRACE_S`, exits at once;
- logging set up once (`run_stage`), progress bars switched by the `--progress/--no-progress` flag;
- one stats vocabulary (`StageStats`): `read`, `kept`, `rejected`, `rejected_by_reason` at the top
  of `stats.json` (figures only; `read == kept + rejected` is checked here; reject counts keyed by
  one rule, `reason_key`), the stage's settings in
  `settings.json` beside it, so that `dvc metrics show` and `microcoder stats --summary` line the
  stages up.

docs/DEVELOPING.md shows a whole stage in one short example.
"""

from __future__ import annotations

import _thread
import dataclasses
import logging
import os
import re
import signal
import sys
import threading
import time
import types
import typing
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from microcoder.pipeline.inputs import InputError, LoadedProblems

T = TypeVar("T")
log = logging.getLogger(__name__)
EVALUATOR_SECTION = "evaluator"
EXIT_USAGE = 2  # bad params, missing input, unreadable file: the user's to fix
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
STOP_GRACE_S = 5.0  # after SIGINT / SIGTERM, the longest a stage may take to stop before it exits at once


class ConfigError(InputError):
    """A params section that does not fit its config class (unknown key, wrong type, bad value)."""


class StageInterrupted(KeyboardInterrupt):
    """A stage on its way out of an interrupt; `kept` says what it keeps for a rerun (one line)."""

    def __init__(self, kept: str):
        super().__init__(kept)
        self.kept = kept


# --- typed configs ---------------------------------------------------------------------------------
def build_config(cls: type[T], data: Any, where: str | None = None) -> T:
    """Dataclass `cls` from mapping `data`, nested dataclasses included; `where` names the section
    (`validate`, `train.grpo`; default: the class name) in errors."""
    where = where or cls.__name__
    if data is None:
        data = {}
    if isinstance(data, cls):
        return data
    if not isinstance(data, dict):
        raise ConfigError(f"params `{where}` must be a mapping, got {type(data).__name__} {data!r}")
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"unknown {where} params {unknown}; valid: {sorted(fields)}")
    hints = typing.get_type_hints(cls)
    values = {name: check_value(hints.get(name, Any), value, f"{where}.{name}") for name, value in data.items()}
    try:
        return cls(**values)
    except ConfigError:
        raise
    except (TypeError, ValueError) as e:
        raise ConfigError(f"params `{where}`: {e}") from e


def check_value(tp: Any, value: Any, where: str) -> Any:
    """`value` checked against annotation `tp` as a params value is: a ConfigError naming `where`
    when it does not fit; returns it coerced (dataclasses built, ints accepted as floats).
    Annotations this does not understand pass the value through."""
    origin = typing.get_origin(tp)
    if tp is Any or isinstance(tp, TypeVar):
        return value
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(tp)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return check_value(option, value, where)
            except ConfigError as e:
                errors.append(str(e))
        raise ConfigError(errors[0] if len(errors) == 1 else f"params `{where}`: {value!r} fits none of {_name(tp)}")
    if origin is typing.Literal:
        if value not in typing.get_args(tp):
            raise ConfigError(f"params `{where}`: {value!r} is not one of {list(typing.get_args(tp))}")
        return value
    if dataclasses.is_dataclass(tp):
        return build_config(tp, value, where)
    if origin in (list, tuple) or tp in (list, tuple):
        if not isinstance(value, list | tuple):
            raise ConfigError(f"params `{where}`: expected a list, got {value!r}")
        args = typing.get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            return tuple(value)
        item = args[0] if args else Any
        out = [check_value(item, v, f"{where}.{i}") for i, v in enumerate(value)]
        return tuple(out) if origin is tuple else out
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"params `{where}`: expected a mapping, got {value!r}")
        args = typing.get_args(tp)
        item = args[1] if len(args) == 2 else Any
        return {k: check_value(item, v, f"{where}.{k}") for k, v in value.items()}
    if tp is float:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif tp in (str, bool):
        if isinstance(value, tp):
            return value
    else:  # other classes (Path, enums): the config's own __post_init__ judges them
        return value
    return _fail(tp, value, where)


def _fail(tp: Any, value: Any, where: str) -> Any:
    raise ConfigError(f"params `{where}`: expected {_name(tp)}, got {value!r}")


def _name(tp: Any) -> str:
    return tp.__name__ if isinstance(tp, type) else str(tp).replace("typing.", "")


def split_overrides(overrides: list[str] | None) -> tuple[list[str], list[str]]:
    """`--set` items for the stage's own section, and those for the `evaluator:` section."""
    own, evaluator = [], []
    for item in overrides or []:
        if item.startswith(EVALUATOR_SECTION + "."):
            evaluator.append(item[len(EVALUATOR_SECTION) + 1:])
        else:
            own.append(item)
    return own, evaluator


def load_config(cls: type[T], section: str, params_path: str | Path | None = None,
                overrides: list[str] | None = None, own_section: bool = False) -> T:
    """The stage's config from its params.yaml section and `--set` overrides (those aimed at the
    evaluator section are left out unless `own_section`: all of `overrides` is for this section)."""
    from microcoder.pipeline.params import load_params

    own = overrides if own_section else split_overrides(overrides)[0]
    # `--set validate.cache_path=X` for the validate command: the section named, as in params.yaml
    fields = {f.name for f in dataclasses.fields(cls)} if dataclasses.is_dataclass(cls) else set()
    if section not in fields:
        own = [item.removeprefix(section + ".") for item in own]
    try:
        data = load_params(section, params_path, own)
    except (ValueError, OSError) as e:
        raise ConfigError(f"params: {e}") from e
    return build_config(cls, data, section)


def config_help(cls: type, section: str, judges: bool = False) -> str:
    """The `--help` epilog: every field (nested ones dotted) with its type, default and help."""
    lines = [f"Params: the `{section}:` section of params.yaml; override any with --set KEY=VALUE."]
    lines += _field_lines(cls, "")
    if judges:
        lines.append("Judging uses the `evaluator:` section (override with --set evaluator.KEY=VALUE; "
                     "see `microcoder evaluate --help`).")
    return "\n".join(lines)


def _field_lines(cls: type, prefix: str) -> list[str]:
    hints = typing.get_type_hints(cls)
    lines = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        tp = hints.get(f.name, Any)
        if f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = "required"
        if dataclasses.is_dataclass(default):
            lines.append(f"  {prefix}{f.name}: {f.metadata.get('help', '')}".rstrip())
            lines += _field_lines(type(default), f"{prefix}{f.name}.")
            continue
        lines.append(f"  {prefix}{f.name} ({_name(tp)}) = {default!r}: {f.metadata.get('help', '')}".rstrip(": "))
    return lines


# --- settings records ----------------------------------------------------------------------------
# api_key, secret_key, hf_token, password, passwd, credentials, cookie, Authorization, auth_header...
_SECRET_KEY = re.compile(r"(?:key|token|secret|passw(?:or)?d|credentials?|cookie)$|(?:^|[_-])auth", re.IGNORECASE)
_URL_SECRETS = re.compile(r"(?P<scheme>[a-z][a-z0-9+.-]*://)[^/@\s]+@|(?P<query>\?[^\s#]+)", re.IGNORECASE)


def settings_record(cfg: Any) -> Any:
    """A config (dataclass or mapping) as plain data for stats files and dataset cards, with every
    value under a secret-looking key (`api_key`, `hf_token`, `password`, `Authorization`, ...)
    redacted, and credentials and query strings cut out of URLs."""
    data = dataclasses.asdict(cfg) if dataclasses.is_dataclass(cfg) and not isinstance(cfg, type) else cfg
    if isinstance(data, Mapping):  # dicts, and typed sections such as train's grpo (GrpoFields)
        return {k: "<redacted>" if v not in (None, "") and _SECRET_KEY.search(str(k)) else settings_record(v)
                for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [settings_record(v) for v in data]
    if isinstance(data, str) and "://" in data:
        return _URL_SECRETS.sub(lambda m: f"{m['scheme']}<redacted>@" if m["scheme"] else "?<redacted>", data)
    return data


# --- stats ---------------------------------------------------------------------------------------
VOCABULARY = ("unit", "read", "kept", "rejected", "rejected_by_reason")


def reason_key(reason: str) -> str:
    """A reject reason's category for `rejected_by_reason`: the text before its first colon (the
    rest names the record's particulars), at most 80 characters."""
    head = reason.split(":", 1)[0].strip() or reason.strip()
    return head[:80]


@dataclass
class StageStats:
    """A stage's counts in the shared vocabulary, plus its own figures. `unit` says what a record
    is (problems, samples, ...); every record read is kept or rejected, with a reason."""

    unit: str = "problems"
    read: int = 0
    kept: int = 0
    rejected_by_reason: Counter = field(default_factory=Counter)
    figures: dict[str, Any] = field(default_factory=dict)

    @property
    def rejected(self) -> int:
        return sum(self.rejected_by_reason.values())

    def reject(self, reason: str, n: int = 1) -> None:
        self.rejected_by_reason[reason_key(reason)] += n

    def as_dict(self) -> dict[str, Any]:
        clash = sorted(set(self.figures) & set(VOCABULARY))
        if clash:
            raise ValueError(f"stage figures may not reuse the shared names {clash}")
        out = {"unit": self.unit, "read": self.read, "kept": self.kept, "rejected": self.rejected,
               "rejected_by_reason": dict(sorted(self.rejected_by_reason.items())), **self.figures}
        check_stats(out)
        return out


def check_stats(stats: dict[str, Any], stage: str = "stage") -> None:
    """The shared vocabulary is present and adds up; a stage that breaks it has a bug."""
    missing = [k for k in VOCABULARY if k not in stats]
    if missing:
        raise ValueError(f"{stage} stats lack {missing}")
    if stats["read"] != stats["kept"] + stats["rejected"]:
        raise ValueError(f"{stage} stats do not add up: read {stats['read']} != kept {stats['kept']} "
                         f"+ rejected {stats['rejected']}")
    if sum(stats["rejected_by_reason"].values()) != stats["rejected"]:
        raise ValueError(f"{stage} stats: rejected_by_reason sums to {sum(stats['rejected_by_reason'].values())}, "
                         f"not rejected {stats['rejected']}")


# The few figures per stage worth tracking across runs: `dvc metrics show` prints every metrics file
# as a row of one table whose columns are the union of their keys (stats.json whole made it 16,000
# characters wide, stage-named figures 11,000), so every stage's headline.json uses the columns of
# one short vocabulary, HEADLINE_COLUMNS, and the detail stays in stats.json (a plain output).
HEADLINE_COLUMNS = {
    "clusters": "clusters of duplicates folded into one kept record",
    "added": "tests the stage added to its problems",
    "tests": "tests in the stage's output problems",
    "tpr": "test strength: share of correct solutions the tests pass (held out where measured so)",
    "tnr": "test strength: share of wrong solutions (known wrong or mutants) the tests fail",
    "steps": "optimizer steps",
    "loss": "training loss",
    "no_signal": "train: generation steps whose groups all had zero reward variance (nothing to learn from)",
    "samples": "model samples judged",
    "pass_rate": "share of samples that pass (per problem, averaged, where a stage groups them)",
    "solved": "problems at least one sample solved",
    "unsolved": "problems no sample solved",
    "base_pass_rate": "eval-model: the base model's pass@1, beside the trained model's pass_rate",
}
# {stage: {column: where its value is}}: a dotted key of stats.json, or `FILE:dotted.key` in a file
# the stage wrote beside it before its stats (train's and eval-model's metrics.json).
HEADLINE: dict[str, dict[str, str]] = {
    "dedup": {"clusters": "clusters"},
    "testgen": {"added": "tests_added", "tnr": "strength.after.mutants.tnr"},
    "validate": {"tests": "output_tests", "tpr": "strength.held_out.tpr", "tnr": "strength.held_out.tnr"},
    "warmstart": {"steps": "steps", "loss": "train_loss"},
    "rollout": {"samples": "samples", "pass_rate": "sample_pass_rate", "solved": "problems_solved_any"},
    "filter": {"unsolved": "kept_by_reason.unsolved"},
    "build": {"tests": "tests", "pass_rate": "mean_pass_rate", "unsolved": "unsolved"},
    "train": {"steps": "steps", "no_signal": "steps_without_signal", "pass_rate": "metrics.json:final.pass_rate"},
    "eval-model": {"samples": "samples", "pass_rate": "metrics.json:models.trained.overall.pass@1",
                   "base_pass_rate": "metrics.json:models.base.overall.pass@1"},
}


def _dotted(data: Any, key: str) -> Any:
    for part in key.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def headline(stats: dict[str, Any], stage: str, out_dir: str | Path | None = None) -> dict[str, Any]:
    """read/kept/rejected and the stage's HEADLINE figures under their shared column names (an
    absent one is left out), flat."""
    import json

    out = {k: stats[k] for k in ("read", "kept", "rejected")}
    for column, where in HEADLINE.get(stage, {}).items():
        file, _, key = where.rpartition(":")
        source: Any = stats
        if file:
            path = Path(out_dir or ".") / file
            source = json.loads(path.read_text()) if out_dir is not None and path.is_file() else None
        value = _dotted(source, key)
        if value is not None and not isinstance(value, (dict, list)):
            out[column] = value
    return out


# Figures a run measures (times; what the cache held): they move with the machine and the cache, so
# they go to timing.json, never to stats.json, which build and the card read (a rerun on another
# machine must not rerun build or change the card).
MEASURED = ("this_run", "wall_s", "cache", "judge_time", "tests.tests_slow", "search.reference_s",
            "reference_runs.judge_s")


def split_measured(data: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the figures without the MEASURED ones, the MEASURED ones under the same nesting)."""
    import copy

    content, measured = copy.deepcopy(data), {}
    for key in MEASURED:
        *parents, last = key.split(".")
        src = content
        for part in parents:
            src = src.get(part) if isinstance(src, dict) else None
        if isinstance(src, dict) and last in src:
            dst = measured
            for part in parents:
                dst = dst.setdefault(part, {})
            dst[last] = src.pop(last)
    return content, measured


def write_stats(out_dir: str | Path, stats: StageStats | dict[str, Any], settings: Any = None,
                stage: str = "stage") -> dict[str, Any]:
    """`stats.json` (figures only, checked; nothing measured), `timing.json` (the MEASURED figures,
    when there are any), `headline.json` (the few tracked by DVC as metrics) and, given settings,
    `settings.json` (secrets redacted). Returns every figure, measured ones included."""
    from microcoder.pipeline.io import write_json

    data = stats.as_dict() if isinstance(stats, StageStats) else stats
    check_stats(data, stage)
    out_dir = Path(out_dir)
    if settings is not None:
        write_json(out_dir / "settings.json", settings_record(settings))
    content, measured = split_measured(data)
    write_json(out_dir / "stats.json", content)
    if measured:
        write_json(out_dir / "timing.json", measured)
    elif (out_dir / "timing.json").is_file() and not (out_dir / "timing.json").is_symlink():
        (out_dir / "timing.json").unlink()  # a plain file in the stage's folder: an earlier run's, stale
    write_json(out_dir / "headline.json", headline(content, stage, out_dir))
    return data


# --- the stage base --------------------------------------------------------------------------------
@dataclass
class StageContext:
    """What a stage's hook works with. `problems_path`: the problems input as given to `run`;
    `inputs`: the stage's other named inputs (rollouts folders, a data folder, models); `settings`:
    what settings.json records beside the config; `result`: what the hook hands `finish` beyond the
    stats (the context, not the Stage object, holds a run's state: one instance may run twice)."""

    cfg: Any
    problems_path: Path | None
    out_dir: Path
    stats: StageStats
    rejects: Any  # microcoder.pipeline.io.RejectsWriter, written by the base after the hook
    evaluator: Any = None
    progress: bool = True
    inputs: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    result: dict[str, Any] = field(default_factory=dict)

    def reject(self, id: str | None, reason: str, record: Any, key: str | None = None, **extra: Any) -> None:
        """One reject: its row in rejects.jsonl (`extra` rides along) and its count under
        `reason_key(key or reason)` (`key`: a stage's own category where its reasons carry no
        `category:` head)."""
        self.rejects.add(id, reason, record, **extra)
        self.stats.reject(key or reason)


class Command:
    """What a command reads from params.yaml, named once: its config class (`config`, filled from
    the `section` of params.yaml, default the command's `name`) and, for a command that judges code,
    the evaluator's (`evaluator_config`, filled from the `evaluator:` section; `judges` follows).
    `microcoder COMMAND --help` lists both (pipeline/cli.py); `load_configs` reads both. A stage
    file's `stage()` returns its Command (a `Stage` for the commands that run a pipeline stage)."""

    name: str = ""
    section: str | None = None
    config: type | None = None
    # a command that judges code: EvaluatorConfig, filled from the `evaluator:` section (`judges` follows)
    evaluator_config: type | None = None
    judges: bool = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.judges = cls.evaluator_config is not None

    @classmethod
    def params_section(cls) -> str:
        return cls.section or cls.name

    @classmethod
    def load_configs(cls, params_path: str | Path | None, overrides: list[str] | None) -> tuple[Any, Any]:
        """The command's config and, for a judging command, its evaluator's (None otherwise), from
        params.yaml and `--set` (`evaluator.KEY=VALUE` items go to the evaluator's)."""
        cfg = load_config(cls.config, cls.params_section(), params_path, overrides)
        if cls.evaluator_config is None:
            return cfg, None
        evaluator = load_config(cls.evaluator_config, EVALUATOR_SECTION, params_path, split_overrides(overrides)[1],
                                own_section=True)
        return cfg, evaluator


def _schema_checked(kept: list, ctx: StageContext) -> list:
    """The rows a stage writes pass the schema its readers apply: a stage writes no row the next
    one would reject. Rows it read were checked then (cheap now: their functional tests are known
    by digest, `checked_tests`); what it made (testgen's tests) is checked here once, and the file
    records it for every later reader. A row that fails is a bug in the stage: a reject that says
    so, not a row in the output."""
    from microcoder.pipeline.schema import validate_problem

    out = []
    for p in kept:
        errors = validate_problem(p)
        if errors:
            ctx.reject(p.id, "invalid output record (a bug in this stage): " + "; ".join(errors), p)
        else:
            out.append(p)
    return out


class Stage(Command):
    """One stage, run the same way by every command: `run` reads the problems with the tolerant
    reader (none where the stage has no problem input), records the reader's rejects, calls the
    stage's one hook `process`, writes `problems.parquet` when the hook returns the kept problems,
    then rejects.jsonl, stats.json and settings.json (the config, the hook's `ctx.settings` and,
    for a judging stage, the evaluator's) -- each once, so every stage accounts for every record
    (`read == kept + rejected`) the same way.

    A subclass names `name` (the command, the rejects' `stage`, the stats' stage), `config` (its
    config class; its params section is `section`, default the name), `unit` and `judges`; a stage
    whose input is not a problem file (dedup streams its shards, eval-model reads benchmarks)
    overrides `load`; one whose result is more than the stats overrides `finish`, which gets what
    the hook left in `ctx.result`. A Stage object keeps no state of a run (it may run twice)."""

    unit: str = "problems"
    # settings.json records the evaluator's settings (judging stages; two keep their earlier record)
    evaluator_settings: bool = True
    input_label: str | None = None  # names the problems in a missing-input error; default `<name> input`
    problems_schema: Any = None  # the stage's columns of problems.parquet (pyarrow schema)

    def run(self, cfg: Any, problems: str | Path | None, out_dir: str | Path, *, evaluator: Any = None,
            progress: bool = True, **inputs: Any) -> Any:
        """Run the stage on `problems` (a path; None for a stage without problem input) into
        `out_dir`; returns `finish`'s result (the stats as written, by default)."""
        from microcoder.pipeline.io import RejectsWriter, write_problems

        out_dir = Path(out_dir)
        ctx = StageContext(cfg, None if problems is None else Path(problems), out_dir, StageStats(unit=self.unit),
                           RejectsWriter(out_dir / "rejects.jsonl", self.name), evaluator, progress, dict(inputs))
        loaded = self.load(problems, ctx)
        if isinstance(loaded, LoadedProblems):
            ctx.stats.read = loaded.read
            for r in loaded.rejects:
                ctx.reject(r.id, r.reason, r.record)
            loaded = loaded.problems
        kept = self.process(loaded, ctx)
        if kept is not None:
            kept = _schema_checked(kept, ctx)
            write_problems(out_dir / "problems.parquet", kept, extra_schema=self.problems_schema)
            ctx.stats.kept = len(kept)
        ctx.rejects.close()
        stats = write_stats(out_dir, ctx.stats, settings=self.settings(ctx), stage=self.name)
        return self.finish(stats, ctx)

    def load(self, problems: str | Path | None, ctx: StageContext) -> Any:
        """The stage's input: LoadedProblems (the base records its rejects and passes its problems
        to `process`), or anything else, passed as it is."""
        if problems is None:
            return None
        from microcoder.pipeline.inputs import load_problems

        return load_problems(problems, self.input_label or f"{self.name} input")

    def process(self, problems: Any, ctx: StageContext) -> list | None:
        """The stage's work: reject with `ctx.reject`, set `ctx.stats` figures; return the kept
        problems (the base writes them) or None where the stage writes its own outputs (and sets
        `ctx.stats.kept`)."""
        raise NotImplementedError

    def settings(self, ctx: StageContext) -> dict[str, Any]:
        out = {**settings_record(ctx.cfg), **ctx.settings}
        if self.judges and self.evaluator_settings:
            out["evaluator"] = settings_record(ctx.evaluator)
        return out

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> Any:
        """The result of `run`, after every output is written."""
        return stats


# --- running a stage command -----------------------------------------------------------------------
class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is at the time (a test runner swaps it per invocation)."""

    @property
    def stream(self):
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup_logging(debug: bool = False) -> None:
    """Once per process: INFO (DEBUG with --debug) to stderr, one format for every stage."""
    root = logging.getLogger()
    if not getattr(root, "_microcoder", False):
        logging.basicConfig(level=logging.DEBUG if debug else logging.INFO,
                            format="%(levelname)s %(name)s: %(message)s", handlers=[_CurrentStderr()], force=True)
        root._microcoder = True  # type: ignore[attr-defined]
    else:
        root.setLevel(logging.DEBUG if debug else logging.INFO)


def run_stage(command: str, body: Callable[[], T], debug: bool = False) -> T:
    """Run a stage command's body under the contract's logging, error path and interrupts: a user
    error (bad params, missing or unreadable input: InputError, OSError) is one line on stderr and
    exit status 2; any other exception is one line naming it and exit status 1; `--debug` re-raises
    both with the traceback. SIGINT / SIGTERM: see `StopSignals`."""
    import typer

    setup_logging(debug)
    stop = StopSignals(command)
    try:
        with stop:
            return body()
    except typer.Exit:
        raise
    except (InputError, OSError) as e:
        if debug:
            raise
        typer.echo(f"{command}: error: {_one_line(e)}", err=True)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt as e:
        typer.echo(stop.message(e.kept if isinstance(e, StageInterrupted) else None), err=True)
        raise typer.Exit(stop.exit_code) from None
    except Exception as e:  # noqa: BLE001 - the contract's last line: no traceback without --debug
        if debug:
            raise
        typer.echo(f"{command}: failed: {type(e).__name__}: {_one_line(e)} (rerun with --debug for the "
                   "traceback)", err=True)
        raise typer.Exit(1) from None


class StopSignals:
    """SIGINT and SIGTERM while a stage runs (installed from the main thread only). The first one
    kills every judge of the process at once (from a thread: the handler may have interrupted
    one that holds an evaluator's lock) and raises KeyboardInterrupt, so the stage unwinds and
    its caches keep what it finished; `exit_code` is then 128 + the signal. A second signal, or
    an unwinding still going `STOP_GRACE_S` later, kills the judges without waiting and exits
    at once (SQLite caches stay whole: each commit is atomic)."""

    def __init__(self, command: str):
        self.command = command
        self.signum: int | None = None
        self._previous: dict[int, Any] = {}

    @property
    def exit_code(self) -> int:
        return 128 + (self.signum or signal.SIGINT)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum or signal.SIGINT).name

    def message(self, kept: str | None) -> str:
        """The stage's last line: the signal, its judges stopped (where it had any), what it kept."""
        parts = [f"{self.command}: interrupted by {self.name}"]
        if "microcoder.pipeline.evaluator.pool" in sys.modules:
            parts.append("its judges were stopped")
        return "; ".join(parts + ([kept] if kept else []))

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        if self.signum is not None:  # on the way out: a second signal must still exit at once
            return
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _handle(self, signum: int, frame) -> None:
        if self.signum is not None:
            self._exit_now(f"a second {signal.Signals(signum).name}")
        self.signum = signum
        # bare threads: threading.Thread.start takes a lock the interrupted code may hold
        _thread.start_new_thread(_stop_judges, ())
        _thread.start_new_thread(self._watchdog, ())
        raise KeyboardInterrupt

    def _watchdog(self) -> None:
        time.sleep(STOP_GRACE_S)
        self._exit_now(f"still stopping after {STOP_GRACE_S:g} s")

    def _exit_now(self, why: str) -> None:
        _stop_judges(now=True)
        line = (f"{self.command}: interrupted by {self.name}, then {why}: exited at once; its judges were killed; "
                "what it had committed to its cache stays there\n")
        os.write(2, line.encode())  # not sys.stderr: its lock may be held by the code interrupted
        os._exit(self.exit_code)


def _stop_judges(now: bool = False) -> None:
    """Kill every judge of this process (`now`: without locks or waits), where an evaluator was
    loaded at all (a stage that judges nothing does not import it)."""
    pool = sys.modules.get("microcoder.pipeline.evaluator.pool")
    if pool is None:
        return
    if now:
        pool.kill_all_now()
    else:
        pool.interrupt_all()


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split()) or type(e).__name__
    if isinstance(e, OSError) and e.filename and str(e.filename) not in text:
        text = f"{e.filename}: {text}"
    return text[:2000]
