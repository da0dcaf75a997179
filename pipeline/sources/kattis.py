"""Kattis / ICPC problem packages (the problem package format) as stdio problems.

A package is a folder with `problem.yaml`, a statement (`problem_statement/problem[.en].{md,tex,html}`
or `statement/`), `data/sample|secret/**/*.in` + `.ans`, `submissions/accepted/*` (known-wrong ones under `submissions/wrong_answer|time_limit_exceeded|
run_time_error/`), optionally `output_validators/<name>/` and the input validators
(`input_validators/`, legacy `input_format_validators/`: see `input_validators`). `path` is one
package or any folder holding packages at any depth (a contest archive: every folder with a
`problem.yaml` is one).

Where a package is silent the problem package format's defaults apply: memory 1024 MiB (problemtools'
`limits.memory`); the time limit is not part of a package (the judge derives it from the accepted
submissions), so without `.timelimit` / `limits.time_limit` the problem records it as not stated
and validate derives it the same way, with the factors the package states (legacy
`limits.time_multiplier` / `time_safety_margin`, 2023-07 `limits.time_multipliers`; meta
`time_multipliers`, see `time_multipliers`). A statement that states its limits ("Time limit: 20
seconds.", as Code Jam pages do) fills what the package leaves out (`microcoder.pipeline.sources.stated_limits`;
meta `stated_limits`, the largest per-test-set time limit applies).

Every kind of package is read as a full-solve problem (solved when every test passes): scoring ones
with each test's group and the groups' settings (meta `test_groups`, `scoring`), interactive ones with
their output validator as a Kattis interactor (meta `interactive`), custom validators as one source
or, for a program directory, a bundle (`microcoder.pipeline.program_bundle`; the evaluator builds it); meta `problem_type` says
which (see `Kind`). Google's coding competitions archive keeps Google's judges: they are adapted by
`microcoder.pipeline.sources.codejam_judge` (see `CODEJAM_SOURCE`); it ships no accepted submission
(meta `references_shipped`: whether a package does, `ships_accepted`). What still cannot be judged is
a Reject with its reason (unsupported_judge, unsupported_type, bad_validator, no_tests, ...).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from microcoder.pipeline.schema import (
    WRONG_LABELS,
    Checker,
    Problem,
    ReferenceSolution,
    TestCase,
    WrongSolution,
)
from microcoder.pipeline.sources.base import (
    RECORD_ERRORS,
    Item,
    Reject,
    SourceContext,
    SourceError,
    jsonable,
    unstated_limits,
)
from microcoder.pipeline.sources.latex import tex_statement
from microcoder.pipeline.sources.normalize import clean_text, html_statement, stable_id
from microcoder.pipeline.sources.stated_limits import stated_limits

LANGUAGE_BY_SUFFIX = {".py": "python", ".cpp": "cpp", ".cc": "cpp", ".cxx": "cpp", ".c++": "cpp"}
STATEMENT_NAMES = ("problem.en.md", "problem.md", "problem.en.tex", "problem.tex", "problem.en.html", "problem.html")


class PackageError(ValueError):
    def __init__(self, code: str, detail: str, problem_type: list[str] | None = None):
        super().__init__(detail)
        self.code = code
        self.problem_type = problem_type  # meta["problem_type"] as far as it is known (scrape counts it)


@dataclass
class Options:
    path: str = field(default="", metadata={"help": "A Kattis problem package, or a folder of packages."})
    default_time_limit_s: float = field(default=2.0, metadata={
        "help": "Time limit when the package has neither `.timelimit` nor limits.time_limit (recorded as not "
                "stated: validate derives it from the accepted submissions)."})
    default_memory_mb: int = field(default=1024, metadata={
        "help": "Memory limit when problem.yaml has no limits.memory (problemtools' default is 1024 MiB)."})
    # Every labelled submission is the measurement pool of held-out test strength (issue 36): none is
    # dropped unless asked. A known-wrong one costs little (validate stops it at its first failure).
    max_solutions: int | None = field(default=None, metadata={
        "help": "Accepted submissions kept per language (null: all; each runs every test in validate)."})
    max_wrong_solutions: int | None = field(default=None, metadata={
        "help": "Known-wrong submissions kept per language and folder (wrong_answer, time_limit_exceeded, ...; "
                "null: all)."})


def read(opts: Options, ctx: SourceContext) -> Iterator[Item]:
    root = Path(opts.path)
    if not root.is_dir():
        raise SourceError(f"{root}: not a folder")
    packages = find_packages(root)
    if not packages:
        raise SourceError(f"{root}: no problem package (a folder with problem.yaml) at any depth")
    for pkg, native in package_ids(root, packages).items():
        record = {"package": str(pkg)}
        pid = stable_id(ctx.name, native)
        try:
            yield convert(pkg, ctx.name, opts, native)
        except PackageError as e:
            yield Reject(e.code, str(e), {**record, "problem_type": e.problem_type} if e.problem_type else record, pid)
        except (OSError, UnicodeDecodeError) as e:
            yield Reject("unreadable", f"{pkg.name}: {e}", record, pid)
        except RECORD_ERRORS as e:  # odd problem.yaml shapes and the like
            yield Reject("bad_package", f"{pkg.name}: {type(e).__name__}: {e}", record, pid)


def find_packages(root: Path) -> list[Path]:
    """Every folder under `root` (itself included) that holds a `problem.yaml`; hidden folders and
    the insides of a package are not searched."""
    if is_package(root):
        return [root]
    found = []
    for child in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")):
        found.extend(find_packages(child))
    return found


def is_package(folder: Path) -> bool:
    """A `problem.yaml`, or the package layout without one (then rejected as `bad_package`, not lost)."""
    return (folder / "problem.yaml").is_file() or (
        (folder / "data").is_dir() and any((folder / d).is_dir() for d in ("problem_statement", "statement")))


def package_ids(root: Path, packages: list[Path]) -> dict[Path, str]:
    """A native id per package: its folder name, or its path under `root` where two contests in
    one archive reuse a short name."""
    names = [p.name for p in packages]
    out = {}
    for pkg in packages:
        if names.count(pkg.name) > 1 and pkg != root:
            out[pkg] = "-".join(pkg.relative_to(root).parts)
        else:
            out[pkg] = pkg.name
    return out


def convert(pkg: Path, source: str, opts: Options, native: str | None = None) -> Problem:
    config = _problem_yaml(pkg)
    kind = problem_kind(pkg, config)
    try:
        return _convert(pkg, source, opts, native or pkg.name, config, kind)
    except PackageError as e:
        e.problem_type = e.problem_type or kind.types
        raise


def _convert(pkg: Path, source: str, opts: Options, native: str, config: dict[str, Any], kind: Kind) -> Problem:
    title, statement, pictures = _statement(pkg, config)
    checker = _checker(pkg, config, kind)
    tests, skipped, interactions = _tests(pkg)
    if not tests and kind.codejam and kind.interactive:
        tests = _codejam_test_sets(statement)
    if not tests:
        raise PackageError("no_tests", "no data/**/*.in with a matching .ans")
    limits = config.get("limits") or {}
    if not isinstance(limits, dict):
        raise PackageError("bad_package", f"limits: expected a mapping, got {type(limits).__name__}")
    stated = stated_limits(statement)  # "Time limit: 20 seconds.", as Code Jam statements state them
    time_limit, time_source = _time_limit(pkg, limits, opts.default_time_limit_s, stated)
    memory, memory_source = _memory_limit(limits, stated)
    meta: dict[str, Any] = {"skipped_tests": skipped, "time_limit_from": time_source,
                            "problem_type": kind.types,
                            **unstated_limits(time_source == "default", memory is None)}
    if memory_source != "limits.memory" and memory is not None:
        meta["memory_limit_from"] = memory_source
    if stated:
        meta["stated_limits"] = stated
    if pictures:  # shown as [image: alt] / [figure N: caption] in the text; the files are not carried
        meta["statement_images"] = pictures
    if kind.scoring:
        meta["scoring"] = True
    if kind.interactive:
        meta["interactive"] = True
    if kind.codejam:
        meta["codejam_judge"] = True
    groups = test_groups(pkg, tests)
    if groups:
        meta["test_groups"] = groups
    if not kind.custom:
        checker = _default_checker(_default_validator_flags(config, groups, _validator_flags(pkg, config)))
    meta.update(multi_case(tests, statement, kind))
    if interactions:
        meta["sample_interactions"] = interactions
    for key in ("author", "source", "rights_owner", "uuid"):
        if config.get(key) is not None:
            meta[key] = str(config[key])
    for key in ("time_multiplier", "time_safety_margin"):  # the legacy keys, as the package words them
        if limits.get(key) is not None:
            meta[key] = limits[key]
    meta.update(time_multipliers(config, limits))
    flags = _validator_flags(pkg, config)
    if flags:
        meta["validator_flags"] = flags
    meta.update(input_validators(pkg))
    meta["references_shipped"] = ships_accepted(pkg)
    return Problem(
        id=stable_id(source, native),
        source=source,
        source_id=native,
        url=str(config["source_url"]) if config.get("source_url") else None,
        title=title,
        statement=statement,
        platform="kattis",
        style="stdio",
        tests=tests,
        checker=checker,
        time_limit_s=time_limit,
        memory_limit_mb=memory if memory is not None else opts.default_memory_mb,
        reference_solutions=[ReferenceSolution(lang, code) for lang, code in
                             _submissions(pkg / "submissions" / "accepted", opts.max_solutions)],
        wrong_solutions=[WrongSolution(lang, code, label) for label in WRONG_FOLDERS for lang, code in
                         _submissions(pkg / "submissions" / label, opts.max_wrong_solutions)],
        license=str(config["license"]) if config.get("license") else None,
        meta=meta,
    )


# --- what kind of problem ------------------------------------------------------------------------
# meta["problem_type"] is a list: how it is graded ("pass-fail" or "scoring"), then how an output is
# judged where that is not the default validator ("interactive" or "custom-judge"). Every kept
# problem is judged pass/fail here: solved when every test of every group passes.
# Legacy: `type: pass-fail|scoring`, `validation: default|custom [score] [interactive]`. 2023-07 on:
# `type` is one or more of pass-fail, scoring, interactive, multi-pass, submit-answer, and a custom
# validator is there when the package has one (output_validator/, the 2023-07 drafts' output_validators/).
UNSUPPORTED_TYPES = ("multi-pass", "submit-answer")
# Google's coding competitions archive (Code Jam, Kick Start, the Farewell rounds) converted to this
# layout keeps Google's own judges, which do not follow problemtools' protocol. A package is read as
# one when its custom validator is `output_validators/validator/` and either problem.yaml says so in
# a comment ("does not follow problemtools specifications", on every such package of the archive) or
# its `source` names one of those competitions and the judge's code has Google's shape
# (codejam_judge.looks_like_google_judge). A `source` alone is not enough: a problemtools validator
# run with Google's argv would fail every submission.
CODEJAM_SOURCE = re.compile(r"code ?jam|kick ?start|coding competitions", re.IGNORECASE)


@dataclass
class Kind:
    scoring: bool = False
    interactive: bool = False
    custom: bool = False  # an output validator program judges (interactive ones always do)
    codejam: bool = False  # the validator is a Google judge (microcoder.pipeline.sources.codejam_judge adapts it)

    @property
    def types(self) -> list[str]:
        judged = ["interactive"] if self.interactive else ["custom-judge"] if self.custom else []
        return ["scoring" if self.scoring else "pass-fail", *judged]


def problem_kind(pkg: Path, config: dict[str, Any]) -> Kind:
    version = str(config.get("problem_format_version") or "legacy")
    types = _words(config.get("type")) or ["pass-fail"]
    validation = _words(config.get("validation")) or ["default"]
    kind = Kind(scoring="scoring" in types or "score" in validation,
                interactive="interactive" in types or "interactive" in validation)
    if version.startswith("legacy"):
        kind.custom = kind.interactive or validation[0] == "custom"
    else:
        kind.custom = kind.interactive or bool(_validator_entries(pkg))
    kind.codejam = kind.custom and _has_google_judge(pkg, config)
    odd = [t for t in types if t in UNSUPPORTED_TYPES]
    if odd:
        raise PackageError("unsupported_type", f"type {odd[0]} (not judged here)", kind.types)
    return kind


def _has_google_judge(pkg: Path, config: dict[str, Any]) -> bool:
    """Whether the package's custom validator is a Google judge (see CODEJAM_SOURCE)."""
    folder = pkg / "output_validators" / "validator"
    if not folder.is_dir():
        return False
    from microcoder.pipeline.sources import codejam_judge  # fissix, loaded only for these packages

    if codejam_judge.follows_google_protocol((pkg / "problem.yaml").read_text(encoding="utf-8")):
        return True
    if not CODEJAM_SOURCE.search(str(config.get("source") or "")):
        return False
    files = [f for f in folder.iterdir() if f.is_file() and not f.name.startswith(".")]
    return any(codejam_judge.looks_like_google_judge(f.read_text(encoding="utf-8", errors="replace")) for f in files)


def _words(value: Any) -> list[str]:
    """A space-separated string or a list of words (2023-07 allows `type` as either)."""
    if isinstance(value, list):
        return [str(w) for w in value]
    return str(value or "").split()


def _problem_yaml(pkg: Path) -> dict[str, Any]:
    path = pkg / "problem.yaml"
    if not path.exists():
        raise PackageError("bad_package", f"{pkg.name}: no problem.yaml")
    text = path.read_text(encoding="utf-8")
    try:
        config = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        config = _repaired_yaml(text, e)
    if not isinstance(config, dict):
        raise PackageError("bad_package", f"problem.yaml: expected a mapping, got {type(config).__name__}")
    return config


# `name: Game Sort: Part 1`: a colon and a space inside a plain scalar is not YAML, yet converted
# archives (the Code Jam one) write titles so; such top-level values are read as quoted text.
_UNQUOTED_COLON = re.compile(r"^([A-Za-z_][\w-]*):[ \t]+([^'\"\[{#|>&*!%@`\s][^#\n]*:\s[^#\n]*?)[ \t]*$", re.MULTILINE)


def _repaired_yaml(text: str, error: yaml.YAMLError) -> Any:
    """problem.yaml with its top-level `key: text: more` lines quoted, or the parse error."""
    repaired = _UNQUOTED_COLON.sub(lambda m: f"{m.group(1)}: {json.dumps(m.group(2))}", text)
    try:
        if repaired != text:
            return yaml.safe_load(repaired) or {}
    except yaml.YAMLError:
        pass
    raise PackageError("bad_package", f"problem.yaml does not parse: {error}") from error


def _statement(pkg: Path, config: dict[str, Any]) -> tuple[str, str, list[dict[str, str]]]:
    """(title, Markdown statement, the pictures it referenced). HTML and problemtools LaTeX become
    Markdown with `$...$` math (normalize.html_statement, latex.tex_statement)."""
    name = config.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    for folder in ("problem_statement", "statement"):
        for fname in STATEMENT_NAMES:
            path = pkg / folder / fname
            if path.is_file():
                text = path.read_text(encoding="utf-8")
                pictures: list[dict[str, str]] = []
                if path.suffix == ".html":
                    body, pictures = html_statement(text)
                elif path.suffix == ".tex":
                    tex_title, body, pictures = tex_statement(text)
                    name = name or tex_title
                else:
                    body = clean_text(text)
                if not body.strip():
                    raise PackageError("no_statement", f"{folder}/{fname} is empty")
                return str(name or pkg.name), body, list(pictures)
    raise PackageError("no_statement", f"no statement file ({', '.join(STATEMENT_NAMES)})")


# The folders under data/ whose tests a submission is judged on (2025-09 adds invalid_input/ and the
# like, which check the validators, not submissions), with their kind.
JUDGED_FOLDERS = (("sample", "public"), ("secret", "private"))


def _tests(pkg: Path) -> tuple[list[TestCase], int, list[dict[str, str]]]:
    """Every test under data/sample then data/secret in the format's order (lexicographic by path,
    groups included), each with its group: the folder under data/ ("sample", "secret/subtask1").
    A `.in` without `.ans` is skipped (counted); `.interaction` files (sample transcripts of an
    interactive problem) are kept as they are, for the statement's reader, beside their test."""
    tests, skipped, interactions = [], 0, []
    for top, kind in JUDGED_FOLDERS:
        folder = pkg / "data" / top
        if not folder.is_dir():
            continue
        for inp in sorted(folder.rglob("*.in")):
            group = str(inp.parent.relative_to(pkg / "data"))
            ans = inp.with_suffix(".ans")
            if not ans.is_file():
                skipped += 1
                continue
            tests.append(TestCase(inp.read_text(encoding="utf-8"), ans.read_text(encoding="utf-8"), kind, group))
        for transcript in sorted(folder.rglob("*.interaction")):
            interactions.append({"group": str(transcript.parent.relative_to(pkg / "data")), "name": transcript.stem,
                                 "text": transcript.read_text(encoding="utf-8")})
    return tests, skipped, interactions


# --- test groups -----------------------------------------------------------------------------------
# A group's settings (accept_score, range, on_reject, grader_flags, ... or 2025-09's max_score,
# score_aggregation, ...): legacy / 2023-07 `testdata.yaml` is used whole by its folder and by every
# folder below without one (the closest file wins); 2025-09 `test_group.yaml` files are merged key by
# key from data/ down (a closer key wins).
def test_groups(pkg: Path, tests: list[TestCase]) -> list[dict[str, Any]]:
    """meta["test_groups"]: every group folder holding tests (directly or below), in order, with its
    settings as resolved, where they come from, and how many tests sit directly in it."""
    counts: dict[str, int] = {}
    for t in tests:
        if t.group:
            counts[t.group] = counts.get(t.group, 0) + 1
    names: list[str] = []
    for group in counts:  # tests are in order, so their groups are; ancestors go first
        parts = group.split("/")
        for i in range(1, len(parts) + 1):
            name = "/".join(parts[:i])
            if name not in names:
                names.append(name)
    return [{"group": name, **_group_settings(pkg, name), "tests": counts.get(name, 0)} for name in names]


def _group_settings(pkg: Path, group: str) -> dict[str, Any]:
    data = pkg / "data"
    chain = [data, *(data / "/".join(group.split("/")[:i]) for i in range(1, group.count("/") + 2))]
    merged: dict[str, Any] = {}
    sources: list[str] = []
    try:
        for folder in chain:
            if (folder / "test_group.yaml").is_file():
                merged.update(_settings_file(folder / "test_group.yaml"))
                sources.append(str((folder / "test_group.yaml").relative_to(pkg)))
        if not sources:
            closest = next((f / "testdata.yaml" for f in reversed(chain) if (f / "testdata.yaml").is_file()), None)
            if closest is None:
                return {}
            merged, sources = _settings_file(closest), [str(closest.relative_to(pkg))]
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as e:  # settings are meta: the tests stand
        return {"settings_error": f"{type(e).__name__}: {e}"}
    return {**jsonable(merged), "settings_from": sources}


def _settings_file(path: Path) -> dict[str, Any]:
    config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if not isinstance(config, dict):
        raise ValueError(f"{path.name}: expected a mapping, got {type(config).__name__}")
    return {str(k): v for k, v in config.items()}


# The statement's bound on T, the number of cases: `1 ≤ T ≤ 100` (preferred) or `T = 50`, T as a
# word of its own (not QUERY_LIMIT's), and a whole number (not the 10 of `10^{5}`).
_T = r"\**\$?(?:\\mathbf\{T\}|(?<![\w\\])T(?!\w))\$?\**"
_LE = r"(?:≤|<=|\\leq?(?![A-Za-z]))"
_WHOLE_NUMBER = r"(\d{1,9})(?!\d|\s*\^)"
_CASES_BOUNDS = (re.compile(rf"{_LE}\s*{_T}\s*{_LE}\s*{_WHOLE_NUMBER}"), re.compile(rf"{_T}\s*=\s*{_WHOLE_NUMBER}"))


def multi_case(tests: list[TestCase], statement: str, kind: Kind) -> dict[str, Any]:
    """Code Jam tests are multi-case files ("Case #1: ..." per case in every answer): meta
    `multi_case_tests`, so that validate counts cases ("Case #i:" lines), not files; for an
    interactive Code Jam problem, whose judge makes each test set's cases, `cases_per_judge_run`
    is the statement's bound on T. Nothing for other problems."""
    answered = [t for t in tests if t.output.strip()]
    if answered and all(t.output.lstrip().startswith("Case #1:") for t in answered):
        return {"multi_case_tests": True}
    if kind.codejam and kind.interactive:
        bound = cases_bound(statement)
        return {"multi_case_tests": True, "cases_per_judge_run": bound or 1,
                "cases_per_judge_run_from": "the statement's bound on T" if bound else "not stated: 1"}
    return {}


def cases_bound(statement: str) -> int | None:
    """The statement's bound on T (see _CASES_BOUNDS), None when it states none."""
    for pattern in _CASES_BOUNDS:
        m = pattern.search(statement)
        if m:
            return int(m.group(1))
    return None


def _codejam_test_sets(statement: str) -> list[TestCase]:
    """An interactive Code Jam problem has no data/: its judge makes each test set's cases from the
    test set's index, so the tests are one per test set the statement names ("Test Set 1", ...),
    input "<index>\\n" (0-based), no answer, group "secret/test_set_<n>" (codejam_judge)."""
    from microcoder.pipeline.sources import codejam_judge

    try:
        return codejam_judge.interactive_tests(statement)
    except codejam_judge.Unsupported as e:
        raise PackageError("no_tests", f"interactive Code Jam problem: {e}") from e


def _time_limit(pkg: Path, limits: dict[str, Any], default: float, stated: dict[str, Any]) -> tuple[float, str]:
    marker = pkg / ".timelimit"
    if marker.is_file():
        try:
            return float(marker.read_text().split()[0]), ".timelimit"
        except (ValueError, IndexError) as e:
            raise PackageError("bad_package", f".timelimit is not a number: {e}") from e
    value = limits.get("time_limit")
    if _positive(value):
        return float(value), "limits.time_limit"
    value = _largest(stated.get("time_limit_s"))  # a limit per test set: the largest covers them all
    return (float(value), "statement") if value is not None else (default, "default")


def _memory_limit(limits: dict[str, Any], stated: dict[str, Any]) -> tuple[int | None, str]:
    if _positive(limits.get("memory")):
        return int(limits["memory"]), "limits.memory"
    value = _largest(stated.get("memory_limit_mb"))
    return (int(value), "statement") if value is not None else (None, "default")


def _largest(value: Any) -> float | None:
    """A stated limit, or the largest of one stated per test set; None unless all are positive."""
    values = list(value.values()) if isinstance(value, dict) else [value]
    return max(values) if values and all(_positive(v) for v in values) else None


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value < float("inf")


# problemtools/metadata.py: the factors of the time-limit rule (validate.derive_time_limit), by the
# 2023-07 names; the defaults of the legacy format and of those since 2023-07 (2023-07, draft, 2025-09),
# and the keys under `limits` that state them (2023-07 on, legacy).
FORMAT_MULTIPLIERS = {"legacy": {"ac_to_time_limit": 5.0, "time_limit_to_tle": 2.0},
                      "2023-07": {"ac_to_time_limit": 2.0, "time_limit_to_tle": 1.5}}
MULTIPLIER_KEYS = {"ac_to_time_limit": ("time_multipliers.ac_to_time_limit", "time_multiplier"),
                   "time_limit_to_tle": ("time_multipliers.time_limit_to_tle", "time_safety_margin")}


def time_multipliers(config: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    """Meta `time_multipliers` ({ac_to_time_limit, time_limit_to_tle}) and `time_multipliers_from`
    (the keys that stated them) as the package states them; a factor it leaves out is its format's
    default. Nothing for a legacy package that states neither: validate's settings then apply."""
    version = str(config.get("problem_format_version") or "legacy")
    family = "legacy" if version.startswith("legacy") else "2023-07"
    nested = limits.get("time_multipliers")
    if nested is not None and not isinstance(nested, dict):
        raise PackageError("bad_package", f"limits.time_multipliers: expected a mapping, got {type(nested).__name__}")
    factors, stated, defaulted = dict(FORMAT_MULTIPLIERS[family]), [], []
    for factor, keys in MULTIPLIER_KEYS.items():
        key, value = next(((k, v) for k in keys if (v := _limit_value(limits, k)) is not None), (None, None))
        if key is None:
            defaulted.append(f"{version} format default for {factor}")
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
            raise PackageError("bad_package", f"limits.{key}: expected a positive number, got {value!r}")
        factors[factor] = float(value)
        stated.append(f"limits.{key}")
    if family == "legacy" and not stated:
        return {}
    return {"time_multipliers": factors, "time_multipliers_from": ", ".join(stated + defaulted)}


def _limit_value(limits: dict[str, Any], key: str) -> Any:
    """`limits[key]`, a dotted key one mapping down."""
    outer, _, inner = key.partition(".")
    value = limits.get(outer)
    return (value or {}).get(inner) if inner else value


def _flags(text: Any) -> dict[str, str | None]:
    words = str(text or "").split()
    flags: dict[str, str | None] = {}
    i = 0
    while i < len(words):
        word = words[i]
        if word.startswith("float_") and i + 1 < len(words):
            flags[word] = words[i + 1]
            i += 2
        else:
            flags[word] = None
            i += 1
    return flags


def _validator_flags(pkg: Path, config: dict[str, Any]) -> str:
    """The default validator's flags: problem.yaml's legacy `validator_flags`, the 2023-07 name
    `output_validator_flags` (the Code Jam archive puts it there), else those the secret data's
    settings give (`output_validator_flags`, 2023-07 on `output_validator_args`)."""
    for key in ("validator_flags", "output_validator_flags"):
        if config.get(key):
            return _flag_text(config[key])
    for rel in SECRET_CONFIGS:
        if (pkg / rel).is_file():
            try:
                settings = _settings_file(pkg / rel)
            except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError):
                return ""
            value = settings.get("output_validator_flags") or settings.get("output_validator_args")
            return _flag_text(value) if value else ""
    return ""


def _flag_text(value: Any) -> str:
    return " ".join(str(v) for v in value) if isinstance(value, list) else str(value)


def _checker(pkg: Path, config: dict[str, Any], kind: Kind) -> Checker:
    if kind.codejam:
        return _codejam_checker(pkg, kind)
    if kind.custom:
        language, program = _output_validator(pkg, kind)
        return Checker(kind="interactor" if kind.interactive else "program", program=program, language=language,
                       protocol="kattis")
    return _default_checker(_validator_flags(pkg, config))


def _default_validator_flags(config: dict[str, Any], groups: list[dict[str, Any]], fallback: str) -> str:
    """The default validator's flags for every secret test, as problemtools gives them: problem.yaml's
    then the group's own (`output_validator_flags` / `_args`, later words win). One checker judges
    every test, so secret groups whose flags differ are refused: taking one group's would judge
    another's tests more leniently (its case_sensitive or tighter tolerance dropped). Samples take
    the secret tests' flags. `fallback` (today's reading) where no group sets any."""
    problem = next((_flag_text(config[k]) for k in ("validator_flags", "output_validator_flags") if config.get(k)), "")
    own = {}
    for g in groups:
        name = str(g.get("group", ""))
        if not g.get("tests") or name == "sample" or name.startswith("sample/"):
            continue
        value = g.get("output_validator_flags") or g.get("output_validator_args")
        own[name] = _flag_text(value) if value else ""
    if not any(own.values()):
        return fallback
    effective = {name: " ".join(filter(None, (problem, text))) for name, text in own.items()}
    if len({tuple(sorted(_flags(t).items())) for t in effective.values()}) > 1:
        shown = "; ".join(f"{name}: {text or '(none)'}" for name, text in effective.items())
        raise PackageError("unsupported_flags", f"the default output validator's flags differ between test groups "
                           f"({shown[:300]}); one checker judges every test")
    return next(iter(effective.values()))


def _default_checker(flag_text: str) -> Checker:
    flags = _flags(flag_text)
    case_sensitive = "case_sensitive" in flags  # Kattis' default validator ignores case unless told
    try:
        both = float(flags["float_tolerance"]) if "float_tolerance" in flags else None
        rel = float(flags["float_relative_tolerance"]) if "float_relative_tolerance" in flags else None
        abs_ = float(flags["float_absolute_tolerance"]) if "float_absolute_tolerance" in flags else None
    except (TypeError, ValueError) as e:
        raise PackageError("bad_package", f"validator_flags: bad float tolerance ({e})") from e
    if both is not None or rel is not None or abs_ is not None:
        rel = both if rel is None and both is not None else rel
        abs_ = both if abs_ is None and both is not None else abs_
        return Checker(kind="float", rel_tol=rel if rel is not None else 0.0,
                       abs_tol=abs_ if abs_ is not None else 0.0, case_sensitive=case_sensitive)
    return Checker(kind="tokens", case_sensitive=case_sensitive)


def _codejam_checker(pkg: Path, kind: Kind) -> Checker:
    """A Google judge, adapted to the Kattis protocol by microcoder.pipeline.sources.codejam_judge."""
    folder = pkg / "output_validators" / "validator"
    files = [f for f in sorted(folder.iterdir()) if f.is_file() and not f.name.startswith(".")]
    if len(files) != 1:
        raise PackageError("unsupported_judge", f"Code Jam judge: expected one file in output_validators/validator, "
                           f"found {[f.name for f in files]}")
    from microcoder.pipeline.sources import codejam_judge  # fissix, loaded only for these packages

    try:
        language, program = codejam_judge.adapt(files[0], kind.interactive)
    except codejam_judge.Unsupported as e:
        raise PackageError("unsupported_judge", f"Code Jam judge {files[0].name}: {e}") from e
    return Checker(kind="interactor" if kind.interactive else "program", program=program, language=language,
                   protocol="kattis")


def _validator_entries(pkg: Path) -> list[Path]:
    """The output validator programs: 2023-07 on, `output_validator/` is one program (a directory);
    before, each file or folder in `output_validators/` is one (notes and hidden files aside)."""
    if (pkg / "output_validator").is_dir():
        return [pkg / "output_validator"]
    folder = pkg / "output_validators"
    if not folder.is_dir():
        return []
    return [p for p in sorted(folder.iterdir()) if not p.name.startswith(".") and not _is_note(p)]


def _is_note(path: Path) -> bool:
    return path.is_file() and (path.suffix in (".txt", ".md") or path.name.upper().startswith("README"))


def _output_validator(pkg: Path, kind: Kind) -> tuple[str, str]:
    """(language, program) of the package's one output validator: one source file (a file, or a
    folder of one source and its headers, inlined), else the whole folder as a bundle."""
    role = "interactive problem: its interactor (output validator)" if kind.interactive else "custom validation"
    entries = _validator_entries(pkg)
    if len(entries) != 1:
        raise PackageError("bad_validator", f"{role} needs exactly one output validator, found {len(entries)}")
    entry = entries[0]
    if entry.is_file():
        language = LANGUAGE_BY_SUFFIX.get(entry.suffix)
        if language is None:
            raise PackageError("bad_validator", f"output validator {entry.name}: only Python and C++ are run here")
        return language, entry.read_text(encoding="utf-8")
    files = [f for f in sorted(entry.iterdir()) if not f.name.startswith(".")]
    sources = [f for f in files if f.suffix in LANGUAGE_BY_SUFFIX and f.is_file()]
    extras = [f for f in files if f not in sources and not _is_note(f)
              and not (f.is_file() and f.suffix in HEADER_SUFFIXES)]
    if len(sources) == 1 and not extras:
        return _single_source(sources[0], files)
    return "bundle", _bundle(entry, sources, extras)


def _single_source(src: Path, files: list[Path]) -> tuple[str, str]:
    language = LANGUAGE_BY_SUFFIX[src.suffix]
    code = src.read_text(encoding="utf-8")
    if language == "cpp":
        code = _inline_headers(code, {f.name: f for f in files if f.is_file() and f.suffix in HEADER_SUFFIXES})
    return language, code


def _bundle(folder: Path, sources: list[Path], extras: list[Path]) -> str:
    """A program directory (build/run scripts, several sources) packed by
    microcoder.pipeline.program_bundle (the evaluator builds and runs it as the format says)."""
    what = (f"output validator {folder.name}: a program directory ({len(sources)} sources "
            f"{[f.name for f in sources]}, other files {[f.name for f in extras]})")
    from microcoder.pipeline.program_bundle import pack_program_dir

    try:
        return pack_program_dir(folder)
    except (ValueError, OSError) as e:
        raise PackageError("bad_validator", f"{what} cannot be packed: {e}") from e


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"\s*$', re.MULTILINE)
# Headers the evaluator provides (testlib.h, for checkers and input validators): left included
# when the package does not ship its own copy.
PROVIDED_HEADERS = frozenset({"testlib.h"})


def _inline_headers(code: str, headers: dict[str, Path], seen: frozenset[str] = frozenset()) -> str:
    def repl(m: re.Match) -> str:
        name = m.group(1)
        if name not in headers and name in PROVIDED_HEADERS:
            return m.group(0)  # the evaluator's own copy is used
        if name not in headers:
            raise PackageError("bad_validator", f"validator includes {name!r}, which is not in its folder")
        if name in seen:
            return f"// {name} already included"
        inner = _inline_headers(headers[name].read_text(encoding="utf-8"), headers, seen | {name})
        return f"// --- begin {name}\n{inner}\n// --- end {name}"

    return _INCLUDE.sub(repl, code)


# Submission folders of known-wrong code (problem package format), each a label of `schema.WRONG_LABELS`.
WRONG_FOLDERS = tuple(label for label in WRONG_LABELS if label != "incorrect")


def ships_accepted(pkg: Path) -> bool:
    """Whether the package ships any accepted submission (in any language, a file or a folder):
    meta `references_shipped`. Without one nothing verifies its tests (Google's archive ships none),
    which validate rejects unless told to keep such problems; with some but no reference solution,
    none was in a language run here (or `max_solutions` left them out)."""
    folder = pkg / "submissions" / "accepted"
    return folder.is_dir() and any(not f.name.startswith(".") for f in folder.iterdir())


def _submissions(folder: Path, per_language: int | None) -> list[tuple[str, str]]:
    """(language, code) of the single-file Python / C++ submissions in `folder`, at most
    `per_language` each (None: all; multi-file submissions, folders, are left out)."""
    if not folder.is_dir():
        return []
    out, count = [], {"python": 0, "cpp": 0}
    for f in sorted(folder.iterdir()):
        language = LANGUAGE_BY_SUFFIX.get(f.suffix)
        if not f.is_file() or language is None or (per_language is not None and count[language] >= per_language):
            continue
        code = f.read_text(encoding="utf-8", errors="replace")
        if code.strip():
            out.append((language, code))
            count[language] += 1
    return out


# --- input validators ----------------------------------------------------------------------------
# `input_validators/` (every version of the format); the legacy format also accepts the deprecated
# `input_format_validators/`, read only where `input_validators/` is absent.
INPUT_VALIDATOR_FOLDERS = ("input_validators", "input_format_validators")
KATTIS_VALID_EXIT = 42  # the format: exit 42 = valid; any other exit = the input is not confirmed valid
HEADER_SUFFIXES = (".h", ".hpp", ".hh")
# The configuration of the secret data, closest first: 2025-09 `test_group.yaml`, then the legacy /
# 2023-07 `testdata.yaml` (a group without one uses its closest ancestor's, whole).
SECRET_CONFIGS = ("data/secret/test_group.yaml", "data/secret/testdata.yaml", "data/testdata.yaml")
GROUP_CONFIGS = ("test_group.yaml", "testdata.yaml")
ARG_KEYS = ("input_validator_args", "input_validator_flags")  # 2023-07 and later; legacy

ValidatorArgs = list[str] | dict[str, list[str]]  # for every validator, or per validator name


class Unsupported(Exception):
    """An input validator the evaluator cannot run (the message says why)."""


def input_validators(pkg: Path) -> dict[str, Any]:
    """The package's input validators as problem meta: `input_validators` = [{name, language, code,
    flags, valid_exit}] for those the evaluator runs (Python 3; one C++ source, its local headers
    inlined), `input_validators_unsupported` = [{name, reason}] for the others (the problem is kept),
    and `input_validator_group_args_ignored` = test groups whose own validator arguments differ from
    the secret data's (generated inputs are checked with the secret data's, the full constraints).
    `flags` are the arguments the format passes on the command line; the code does not apply them
    (microcoder.pipeline.testgen.validators does). Nothing when the package has no input validator."""
    folder = next((pkg / f for f in INPUT_VALIDATOR_FOLDERS if (pkg / f).is_dir()), None)
    if folder is None:
        return {}
    programs = [p for p in sorted(folder.iterdir()) if not _not_a_program(p)]
    try:
        args, ignored = _secret_validator_args(pkg), _group_args_ignored(pkg)
    except (Unsupported, OSError) as e:  # arguments unknown: no validator can be run as the package means it
        return {"input_validators_unsupported": [{"name": f"kattis:{p.name}", "reason": str(e)} for p in programs]}
    supported, unsupported = [], []
    for program in programs:
        name = f"kattis:{program.name}"
        try:
            language, code = _validator_program(program, _headers(folder))
        except (Unsupported, OSError) as e:  # an unreadable validator costs the validator, not the problem
            unsupported.append({"name": name, "reason": str(e)})
            continue
        supported.append({"name": name, "language": language, "code": code,
                          "flags": _flags_for(args, program), "valid_exit": KATTIS_VALID_EXIT})
    meta: dict[str, Any] = {}
    if supported:
        meta["input_validators"] = supported
    if unsupported:
        meta["input_validators_unsupported"] = unsupported
    if ignored and supported:
        meta["input_validator_group_args_ignored"] = ignored
    return meta


def _not_a_program(path: Path) -> bool:
    """Hidden files, headers and notes sit beside the programs without being programs."""
    name = path.name
    return (name.startswith(".") or (path.is_file() and path.suffix in HEADER_SUFFIXES)
            or name.upper().startswith("README") or path.suffix in (".txt", ".md"))


def _headers(folder: Path) -> dict[str, Path]:
    return {f.name: f for f in folder.iterdir() if f.is_file() and f.suffix in HEADER_SUFFIXES}


def _validator_program(program: Path, headers: dict[str, Path]) -> tuple[str, str]:
    """(language, code) of a single-file program, or of a directory program with one source file
    (its own headers inlined)."""
    if program.is_file():
        return _validator_source(program, headers)
    files = [f for f in sorted(program.iterdir()) if not f.name.startswith(".")]
    if any(f.name in ("build", "run") for f in files):
        raise Unsupported("a directory program with build/run scripts (not run here)")
    sources = [f for f in files if not _not_a_program(f) and f.name != "Makefile"]
    if len(sources) != 1 or not sources[0].is_file():
        raise Unsupported(f"a directory program of {len(sources)} files {[f.name for f in sources]}: "
                          "only one source file (plus headers) is run here")
    return _validator_source(sources[0], _headers(program))


def _validator_source(src: Path, headers: dict[str, Path]) -> tuple[str, str]:
    if src.suffix in (".ctd", ".viva"):
        raise Unsupported(f"a {'checktestdata' if src.suffix == '.ctd' else 'VIVA'} file "
                          "(no interpreter for it in the sandbox)")
    language = LANGUAGE_BY_SUFFIX.get(src.suffix)
    if language is None:
        raise Unsupported(f"{src.name}: only Python 3 and C++ programs are run here")
    try:
        code = src.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise Unsupported(f"{src.name} is not UTF-8 text ({e})") from e
    if language == "python" and re.match(r"#!.*python2", code):
        raise Unsupported(f"{src.name} is Python 2 (its shebang); the evaluator runs Python 3")
    if language == "cpp":
        try:
            code = _inline_headers(code, headers)
        except PackageError as e:
            raise Unsupported(f"{src.name}: {e}") from e
    return language, code


def _secret_validator_args(pkg: Path) -> ValidatorArgs:
    """The input validator arguments of the secret data (empty when none are given)."""
    for rel in SECRET_CONFIGS:
        if (pkg / rel).is_file():
            return _args_in(pkg, rel) or []
    return []


def _args_in(pkg: Path, rel: str) -> ValidatorArgs | None:
    """The validator arguments a group configuration file sets (None: it sets none)."""
    try:
        config = yaml.safe_load((pkg / rel).read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as e:
        raise Unsupported(f"{rel} does not parse, so the validators' arguments are unknown: {e}") from e
    if not isinstance(config, dict):
        raise Unsupported(f"{rel}: expected a mapping, got {type(config).__name__}")
    value = next((config[k] for k in ARG_KEYS if config.get(k) is not None), None)
    if value is None:
        return None
    if isinstance(value, dict):
        if set(value) == {"name", "flags"}:  # the legacy spec's map form: one validator's flags
            return {str(value["name"]): _arg_list(value["flags"], rel)}
        return {str(k): _arg_list(v, rel) for k, v in value.items()}
    return _arg_list(value, rel)


def _arg_list(value: Any, rel: str) -> list[str]:
    """A legacy flags string (split on whitespace, as problemtools does) or a list of arguments."""
    if value is None:
        return []
    if isinstance(value, str):
        return value.split()
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) for x in value):
        return [str(x) for x in value]
    raise Unsupported(f"{rel}: input validator arguments of an unexpected shape ({value!r:.80})")


def _group_args_ignored(pkg: Path) -> list[str]:
    """Test groups under data/secret that set validator arguments other than the secret data's."""
    secret = pkg / "data" / "secret"
    if not secret.is_dir():
        return []
    base = _secret_validator_args(pkg)
    groups = set()
    for path in (p for name in GROUP_CONFIGS for p in secret.rglob(name) if p.parent != secret):
        args = _args_in(pkg, str(path.relative_to(pkg)))
        if args is not None and args != base:
            groups.add(str(path.parent.relative_to(pkg / "data")))
    return sorted(groups)


def _flags_for(args: ValidatorArgs, program: Path) -> list[str]:
    if isinstance(args, list):
        return list(args)
    # A map names validators by program name: the file's base name (with or without its suffix).
    return list(args.get(program.name, args.get(program.stem, [])))
