"""The dataset card (README.md of the curated folder): YAML front matter for the Hub, the build's
figures, and each upstream stage's figures and settings for provenance.

Upstream stages are read from their output folders: `stats.json` (figures only) and
`settings.json` (the settings the stage ran with, `--set` overrides included); a stage that
recorded no settings is shown with its params.yaml section. The "Test strength" section reads the
validate and testgen figures in the terms of `pipeline/strength.py` (TPR/TNR with their counts), and
the figures of stats written before them where those are all there is.

The card states only what the build knows: local paths are shown relative to the project (or as
`<local>/name` outside it), only enabled sources are listed, each source's license is a Hub license
id (`other` where the statements belong to a platform), the summary claims a pass-rate band only
when pass rates were measured, and the rollout model is named with its revision. It closes with how
to load this version by tag, a citation, and the versions so far with what changed between them
(re-rendered by `publish`, which knows the versions already on the Hub).
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import yaml

from microcoder.pipeline import strength
from microcoder.pipeline.params import load_yaml
from microcoder.pipeline.stage import settings_record

SHARD_PATTERN = "data/train-*"
# Upstream stage -> its output folder under the data directory (in pipeline order).
UPSTREAM = {"scrape": "raw", "dedup": "dedup", "testgen": "testgen", "validate": "validated",
            "rollout": "rollouts", "filter": "filtered"}
NOISE = ("this_run", "config")  # a run's own timing is noise in a card; settings are shown apart
DEFAULT_TAGS = ["code", "competitive-programming", "reinforcement-learning", "rlvr", "microcoder"]
CARD_SUMMARY = (
    "Competitive-programming problems curated for reinforcement learning of coding models "
    "(MicroCoder-Dataset): scraped, deduplicated and decontaminated, tests validated against "
    "reference solutions, and filtered by the measured pass rate of policy rollouts."
)
# Hub license ids (huggingface.co/docs/hub/repositories-licenses) the card may state; anything else is `other`.
HUB_LICENSE_IDS = {
    "apache-2.0", "mit", "bsd-2-clause", "bsd-3-clause", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
    "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nc-sa-3.0",
    "cc-by-nc-sa-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-4.0", "gpl-2.0", "gpl-3.0", "lgpl-3.0", "agpl-3.0", "odc-by",
    "odbl", "pddl", "unlicense", "other", "unknown"}
# Per source kind: the license of what the rows carry (statements above all), and why where it is not obvious.
SOURCE_LICENSES = {
    "seed": ("apache-2.0", "written for this project"),
    "humaneval": ("mit", "openai/human-eval"),
    "leetcodedataset": ("other", "statements are LeetCode's (its terms of service); the collection's code is Apache-2.0"),
    "leetcode": ("other", "statements are LeetCode's (its terms of service)"),
    "codeforces": ("other", "statements are Codeforces' (its terms of use)"),
    "atcoder": ("other", "statements are AtCoder's (its terms of use)"),
    "kattis": ("other", "each package states its own license (problem.yaml `license`)"),
    "codecontests": ("cc-by-4.0", "deepmind/code_contests"),
    "open-r1-codeforces": ("cc-by-4.0", "open-r1/codeforces"),
    "taco": ("apache-2.0", "BAAI/TACO"),
    "apps": ("mit", "codeparrot/apps"),
    "deepcoder": ("mit", "agentica-org/DeepCoder-Preview-Dataset"),
    "livecodebench": ("other", "livecodebench/code_generation_lite: license `cc` without a version"),
}


def hub_license_id(name: str | None) -> str:
    """A license as the rows or a package name it (`CC BY-SA 3.0`, `Apache-2.0`) -> a Hub id, or
    `other` when it is not one (`cc-by-sa` without a version, a platform's terms, unknown)."""
    if not name:
        return "other"
    lowered = str(name).strip().lower().replace("_", "-").replace(" ", "-")
    lowered = lowered.replace("--", "-")
    return lowered if lowered in HUB_LICENSE_IDS else "other"


def _read_json(path: Path) -> Any:
    return json.loads(path.read_text()) if path.exists() else None


def upstream_records(data_dir: str | Path, params_path: str | Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """({stage: figures or None}, {stage: settings}) of the upstream stages."""
    data_dir = Path(data_dir)
    params_path = Path(params_path)
    all_params = (load_yaml(params_path.read_text()) if params_path.is_file() else None) or {}  # YAML 1.2, as every reader
    figures, settings = {}, {}
    for stage, folder in UPSTREAM.items():
        st = _read_json(data_dir / folder / "stats.json")
        figures[stage] = st and {k: v for k, v in st.items() if k not in NOISE}
        recorded = _read_json(data_dir / folder / "settings.json")
        if recorded is None and isinstance(st, dict):  # written before settings.json existed
            recorded = st.get("config")
        if isinstance(recorded, dict):
            settings[stage] = settings_record(recorded)
        elif stage in all_params:
            settings[stage] = settings_record(all_params[stage])
    return figures, settings


def size_category(n: int) -> str:
    for limit, label in [(10**3, "n<1K"), (10**4, "1K<n<10K"), (10**5, "10K<n<100K"), (10**6, "100K<n<1M"),
                         (10**7, "1M<n<10M")]:
        if n < limit:
            return label
    return "10M<n<100M"


def card_license(by_license: dict[str, int]) -> str:
    """The Hub license id shared by every row (`Apache-2.0` -> `apache-2.0`), else `other`."""
    names = [k for k in by_license if k != "unknown"]
    if len(names) == 1 and "unknown" not in by_license:
        return hub_license_id(names[0])
    return "other"


PLATFORM_OWNED = ("leetcodedataset", "leetcode")  # rows may say MIT (the collection's code); the statements are not


def source_licenses(stats: dict[str, Any], kinds: dict[str, str]) -> list[list[str]]:
    """[source, Hub license id(s), note] per source in the release: the rows' own licenses where the
    build counted them per source (`license_by_source`, or `by_license` when one license or one source),
    else the source kind's known license; a platform's statements are `other` whatever rows say."""
    measured = dict(stats.get("license_by_source") or {})
    shared = card_license(stats.get("by_license") or {}) != "other" or len(stats.get("by_source", {})) == 1
    if not measured and shared and stats.get("by_license"):  # every row states one license: it is each source's
        measured = {source: stats["by_license"] for source in stats.get("by_source", {})}
    out = []
    for source in stats.get("by_source", {}):
        kind = kinds.get(source, source)
        known_id, note = SOURCE_LICENSES.get(kind, ("other", "license not known for this source"))
        if measured.get(source) and kind not in PLATFORM_OWNED:
            ids = sorted({hub_license_id(None if name == "unknown" else name) for name in measured[source]})
            out.append([source, ", ".join(ids), "as the rows state it: " + ", ".join(sorted(measured[source]))])
        else:
            out.append([source, known_id, note])
    return out


def front_license(cfg, stats: dict[str, Any], sources: dict[str, str]) -> str | list[str]:
    """The front matter's license: the configured one, else the sources' ids (one, or a list)."""
    if cfg.license:
        return hub_license_id(cfg.license)
    ids = sorted({lid for _, ids, _ in source_licenses(stats, sources) for lid in ids.split(", ")})
    return ids[0] if len(ids) == 1 else (ids or "other")


STRENGTH_DEFINITION = (
    "TPR = share of correct solutions passing every kept test, TNR = share of known-incorrect solutions failing at "
    "least one (the terms of CodeContests-O and HardTests; `pipeline/strength.py`). Correct solutions are the "
    "problems' reference solutions that compiled and ran (a Kattis package's accepted submissions are its references; "
    "no source ships other accepted submissions); incorrect ones are the known-wrong solutions the sources ship (Kattis "
    "`submissions/wrong_answer` and the like, CodeContests `incorrect_solutions`). **Held out** figures are measured "
    "on solutions that had no part in choosing the tests: each problem's solutions are dealt into seeded folds and "
    "each fold is measured on the tests chosen without it (no vote on the outputs, no say in the time limit or the "
    "caps). Those are the figures to compare with CodeContests-O's (TPR 89.4%, TNR 90.9%, on solutions its tests were "
    "not fitted to). **In-sample** figures are measured on the solutions that chose the tests: a reference that voted "
    "passes every kept test by construction (policy `all`), so an in-sample TPR of 100% says nothing by itself. A "
    "problem with a single reference has no held-out TPR (counted, never taken as 100%). Counts are summed over "
    "problems, never averaged.")

# The held-out benchmark on real model-written code (bench/heldout_strength.py; bench/README.md has the
# tables and the subsets), quoted as measured: a figure of the project's method, not of this build.
BENCH_HELD_OUT = (
    "Measured on real model-written code that played no part in choosing the tests (`.venv/bin/python "
    "bench/heldout_strength.py --parts models,split --sources humaneval --limit 0 --samples 100`): tests "
    "generated from HumanEval's docstring examples and kept by validate pass 96.5% (2052/2127) of the CodeGen-16B "
    "samples HumanEval's official check accepts (most of the rest are bugs that check misses) and fail 98.5% "
    "(7849/7967) of those it rejects (the official tests: 100.0%, 99.7%); with half of each problem's samples "
    "choosing the tests, the other half: TPR 98.7% (232/235), TNR 98.2% (821/836). On LeetCode problems the "
    "input rules were not read from, the tests pass 91.7% (88/96) of LeetCodeDataset's model-written responses "
    "(`--sources leetcodedataset --limit 100 --pick spread-five-eighths`; 91.8-94.9% on three earlier such sets), "
    "and on DeepSeek-Coder's LeetCode contest "
    "problems, whose ~100 tests label the responses, pass 91.9% (114/124) of the right ones (9 of the 10 failures "
    "are over the time or memory limit on full-size inputs) and fail 88.9% (8/9) of the wrong ones "
    "(`--sources leetcode-contest`); a problem with a constraint line no rule models gets no generated test.")


def _rate(r: dict[str, Any] | None, side: str) -> str:
    """One side of a strength record as `66.7% (2/3)`, or `n/a (0)` with nothing behind it."""
    part, whole = {"tpr": ("correct_passing", "correct"), "tnr": ("incorrect_failing", "incorrect")}[side]
    if not r or not r.get(whole):
        return "n/a (0)"
    return f"{100 * r[side]:.1f}% ({r[part]}/{r[whole]})"


def _record(d: Any, *keys: str) -> dict[str, Any] | None:
    """d[k1][k2]... when every step is a dict (stats of older runs lack these keys), else None."""
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d if isinstance(d, dict) else None


def _strength_table(label: str, groups: dict[str, Any] | None, held: dict[str, Any] | None = None) -> list[str]:
    """Per group: TPR/TNR in-sample, and held out first where the stats have it."""
    if not groups:
        return []
    if held is None:  # stats written before issue 36
        rows = [[g, _rate(r, "tpr"), _rate(r, "tnr")] for g, r in groups.items() if isinstance(r, dict)]
        return [f"### Test strength by {label}\n"
                + _md_table([label, "TPR (passing/correct)", "TNR (failing/incorrect)"], rows)]
    rows = [[g, _rate(held.get(g), "tpr"), _rate(held.get(g), "tnr"), _rate(r, "tpr"), _rate(r, "tnr")]
            for g, r in groups.items() if isinstance(r, dict)]
    return [f"### Test strength by {label}\n" + _md_table(
        [label, "TPR held out", "TNR held out", "TPR in-sample", "TNR in-sample"], rows)]


def _validated_strength(validation: dict[str, Any] | None) -> list[str]:
    """The validate stage's TPR/TNR of the kept tests, before the caps, per source and difficulty;
    for stats written before those figures, its known-wrong-solution sentence."""
    s = validation or {}
    kept, before = _record(s, "strength", "kept"), _record(s, "strength", "before_caps")
    if kept is None:
        w = s.get("wrong_solutions") or {}
        if not w.get("ran"):
            return []
        return [f"On the {w['problems_with_wrong_solutions']} problems whose source ships known-wrong solutions, the "
                f"kept tests catch {w['caught']} of the {w['ran']} that ran ({w['share_caught']:.1%}); the caps on the "
                f"number and size of tests cost {w['lost_to_caps']} of them (validate stage)."]
    held = _record(s, "strength", "held_out")
    out = _held_out_lines(s["strength"]) if held is not None else []
    out.append(f"Kept tests (validate stage, in-sample, over its {s['strength'].get('problems_measured', 0)} kept "
               f"problems with solutions of either kind; this dataset's problems are among them): "
               f"{strength.describe(kept)}.")
    if before:
        lost = before["incorrect_failing"] - kept["incorrect_failing"]
        freed = kept["correct_passing"] - before["correct_passing"]
        out.append(f"Before the caps on the number and size of tests (`max_tests`, `max_total_bytes`): "
                   f"{strength.describe(before)}; the caps cost {lost} caught known-wrong solution(s) and let "
                   f"{freed} more reference(s) pass.")
    hs = held is not None
    return (out + _strength_table("source", _record(s, "strength", "by_source"),
                                  (_record(s, "strength", "held_out_by_source") or {}) if hs else None)
            + _strength_table("difficulty", _record(s, "strength", "by_difficulty"),
                              (_record(s, "strength", "held_out_by_difficulty") or {}) if hs else None))


def _held_out_lines(st: dict[str, Any]) -> list[str]:
    """validate's held-out figures (first: the ones that say how the tests do on unseen code)."""
    held, before = st["held_out"], st.get("held_out_before_caps")
    no_tpr = st.get("problems_without_held_out_tpr") or {}
    out = [f"**Held out** (validate stage, over {st.get('problems_measured_held_out', 0)} kept problems with a "
           f"solution that could be held out): {strength.describe(held)}"
           + (f"; on every candidate test, before the caps: {strength.describe(before)}." if before else ".")]
    if no_tpr:
        out.append(f"{sum(no_tpr.values())} kept problems have no held-out TPR: "
                   + "; ".join(f"{n} with {why}" for why, n in no_tpr.items()) + ".")
    if BENCH_HELD_OUT:
        out.append(BENCH_HELD_OUT)
    return out


def _generated_strength(testgen: dict[str, Any] | None) -> list[str]:
    """The testgen stage's figures: known-wrong TPR/TNR before -> after its tests, the mutant kill
    rate on its own line (a separate number), and how many generated outputs rest on one reference."""
    t = testgen or {}
    out = []
    if t.get("tests_added") is not None:
        out.append(f"Generated tests: the testgen stage added {t.get('tests_added', 0)} tests to "
                   f"{t.get('problems_augmented', 0)} problems.")
    known = [_record(t, "strength", when, "known_wrong") for when in ("before", "after")]
    if any(r and (r.get("correct") or r.get("incorrect")) for r in known):
        over = f" over {t['strength']['problems']} problems" if "problems" in t["strength"] else ""
        out.append(f"The testgen stage's own measure{over} (before validate's caps), on the tests it received: "
                   f"{strength.describe(known[0])}; with its generated tests: {strength.describe(known[1])}.")
    out += _mutant_line(t)
    out += _generated_held_out(t)
    for label in ("source", "difficulty"):
        out += _generated_table(label, _record(t, "strength", f"by_{label}"))
    agreement = t.get("agreement") if isinstance(t.get("agreement"), dict) else {}
    by_refs = agreement.get("tests_by_references") or {}
    if "single_reference" in agreement or by_refs:
        spread = ", ".join(f"{k}: {v}" for k, v in sorted(by_refs.items(), key=lambda kv: int(kv[0])))
        out.append(f"{agreement.get('single_reference', by_refs.get('1', 0))} generated tests rest on a single "
                   f"reference (no second reference agreed on their expected output)"
                   + (f"; tests by the number of references agreeing: {spread}." if spread else "."))
    return out


def _generated_held_out(t: dict[str, Any]) -> list[str]:
    """testgen's held-out share (no vote on outputs, never hunted by the search) and what the search's
    tests did to the held-out survivors."""
    held = _record(t, "strength", "held_out")
    known = [_record(held, when, "known_wrong") for when in ("before", "after")]
    mutants = [_record(held, when, "mutants") for when in ("before", "after")]
    if not any(r and (r.get("correct") or r.get("incorrect")) for r in known + mutants):
        return []
    search = t.get("search") if isinstance(t.get("search"), dict) else {}
    line = (f"Held out by the testgen stage (a seeded share that did not vote on outputs and that the search never "
            f"hunted): on the tests it received {strength.describe(known[0])}, with its generated tests "
            f"{strength.describe(known[1])}; held-out mutants killed {_rate(mutants[0], 'tnr')} -> "
            f"{_rate(mutants[1], 'tnr')}")
    if search.get("held_out_survivors_at_start"):
        line += (f"; the search's tests failed {search['held_out_killed_by_search']} of the "
                 f"{search['held_out_survivors_at_start']} held-out survivors")
    return [line + "."]


def _generated_table(label: str, groups: dict[str, Any] | None) -> list[str]:
    """testgen's per-group figures with its generated tests: known-wrong TPR/TNR and mutant TNR apart."""
    rows = [[g, _rate(_record(r, "known_wrong"), "tpr"), _rate(_record(r, "known_wrong"), "tnr"),
             _rate(_record(r, "mutants"), "tnr")] for g, r in (groups or {}).items()]
    if not rows:
        return []
    return [f"### Generated tests' strength by {label}\n"
            + _md_table([label, "TPR (references)", "TNR (known-wrong)", "mutants killed"], rows)]


def _mutant_line(t: dict[str, Any]) -> list[str]:
    """Mutants of the references, never mixed into the known-wrong TNR (stats of older runs: `mutants`)."""
    before, after = (_record(t, "strength", when, "mutants") for when in ("before", "after"))
    if any(r and r.get("incorrect") for r in (before, after)):
        return [f"Mutants of the references (flipped comparisons, constants +1, min/max swaps; a separate number, "
                f"never mixed into the TNR above): the tests before the testgen stage kill {_rate(before, 'tnr')}, "
                f"with its generated tests {_rate(after, 'tnr')}."]
    m = t.get("mutants") or {}
    if not m.get("mutants"):
        return []
    return [f"Of {m['mutants']} simple mutants of the references (flipped comparisons, constants +1, min/max swaps; "
            f"a separate number) on {m['problems']} problems, the examples alone kill {m['kill_rate_examples']:.1%} "
            f"and the examples plus generated tests {m['kill_rate_with_generated']:.1%}."]


def strength_section(validation: dict[str, Any] | None, testgen: dict[str, Any] | None) -> str:
    """The card's "Test strength" section from the validate and testgen stats (either may be absent)."""
    lines = _validated_strength(validation) + _generated_strength(testgen)
    if not lines:
        lines = ["No test-strength figures were found when this version was built."]
    return "\n\n".join(["## Test strength", STRENGTH_DEFINITION, *lines])


def _md_table(header: list[str], rows: list[list[Any]]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join("" if v is None else str(v).replace("|", "\\|") for v in r) + " |" for r in rows]
    return "\n".join(out)


def _flat_numbers(d: dict[str, Any], prefix: str = "") -> list[list[Any]]:
    """Scalar entries of a stats.json, nested objects one level deep (`a.b`), as table rows."""
    out = []
    for k, v in d.items():
        if isinstance(v, dict) and not prefix:
            out += _flat_numbers(v, f"{k}.")
        elif isinstance(v, (int, float, str, bool)):
            out.append([f"{prefix}{k}", v])
    return out


def _counts(title: str, label: str, counts: dict[str, int]) -> str:
    return f"### {title}\n" + _md_table([label, "problems"], [[k, v] for k, v in counts.items()])


def portable(value: Any, root: Path | None = None) -> Any:
    """Settings/figures with local paths made shareable: relative to the project root where under it,
    else `<local>/name` (the builder's own folders say nothing to a reader and leak their layout)."""
    root = (root or Path.cwd()).resolve()
    if isinstance(value, dict):
        return {k: portable(v, root) for k, v in value.items()}
    if isinstance(value, list):
        return [portable(v, root) for v in value]
    if isinstance(value, str) and (os.path.isabs(value) or value.startswith(("~", "../"))):
        path = Path(os.path.expanduser(value))
        try:
            return path.resolve().relative_to(root).as_posix()
        except ValueError:
            return f"<local>/{path.name}"
    return value


def enabled_sources(settings: dict[str, Any]) -> dict[str, Any]:
    """Settings with the scrape stage's disabled sources left out (they contributed nothing)."""
    scrape = settings.get("scrape")
    if not isinstance(scrape, dict) or not isinstance(scrape.get("sources"), list):
        return settings
    sources = [s for s in scrape["sources"] if not isinstance(s, dict) or s.get("enabled", True)]
    return {**settings, "scrape": {**scrape, "sources": sources}}


def source_kinds(settings: dict[str, Any]) -> dict[str, str]:
    """Source name -> its kind (a Hub source: its adapter), from the scrape settings."""
    sources = (settings.get("scrape") or {}).get("sources") or []
    return {s["name"]: str(s.get("adapter") or s.get("kind") or s["name"]) for s in sources
            if isinstance(s, dict) and s.get("name")}


def rollout_model(settings: dict[str, Any], upstream: dict[str, Any]) -> str:
    """The policy the pass rates were measured with, by name and revision (or saying it is not recorded)."""
    rollout = settings.get("rollout") or {}
    figures = upstream.get("rollout") or {}
    model = rollout.get("model") or figures.get("model")
    if not model:
        return "The rollout model is not recorded."
    shown = portable(str(model))
    revision = rollout.get("revision") or rollout.get("model_revision") or figures.get("model_revision")
    return (f"Pass rates were measured with `{shown}` at revision `{revision}`." if revision else
            f"Pass rates were measured with `{shown}` (its revision was not recorded).")


def summary(stats: dict[str, Any], settings: dict[str, Any]) -> str:
    """What this version is, claiming a pass-rate band only where pass rates were measured."""
    measured, unsolved, kept = stats.get("with_pass_rate", 0), stats.get("unsolved", 0), stats["kept"]
    band = settings.get("filter") or {}
    if not measured:
        return CARD_SUMMARY + " No pass rate was measured for this version: it is not filtered by difficulty."
    if unsolved >= kept:
        return (CARD_SUMMARY + f" Every one of the {kept} problems was unsolved by the policy (pass rate 0): this "
                "version holds problems too hard for that policy, not a band it can learn from.")
    lo, hi = band.get("min_pass_rate"), band.get("max_pass_rate")
    where = f" between {lo} and {hi}" if lo is not None and hi is not None else ""
    return (CARD_SUMMARY + f" {kept - unsolved} of the {kept} problems were solved by the policy at a measured "
            f"pass rate{where}; {unsolved} were never solved.")


REPO_PLACEHOLDER = "<owner>/<name>"  # a build without publish.repo_id; publish writes the repository in
ADDRESS_PLACEHOLDER = "<the dataset's address>"
HUB = "https://huggingface.co"


def dataset_address(repo_id: str, endpoint: str | None = None) -> str:
    return f"{(endpoint or HUB).rstrip('/')}/datasets/{repo_id}"


def usage(repo_id: str | None, version: str, tag_prefix: str = "v") -> str:
    repo = repo_id or REPO_PLACEHOLDER
    return ("## Usage\n\nEach published version is a tag; load this one by its tag (a plain `main` moves on with "
            "the next version):\n\n```python\nfrom datasets import load_dataset\n"
            f"ds = load_dataset(\"{repo}\", \"default\", split=\"train\", revision=\"{tag_prefix}{version}\")\n```")


def citation(cfg, repo_id: str | None, revision: str, tag_prefix: str = "v") -> str:
    key = "".join(c if c.isalnum() else "_" for c in f"{cfg.name}_{tag_prefix}{cfg.version}").lower()
    where = dataset_address(repo_id) if repo_id else ADDRESS_PLACEHOLDER
    return ("## Citation\n\n```bibtex\n"
            f"@misc{{{key},\n  title = {{{{{cfg.name}}}}},\n  version = {{{tag_prefix}{cfg.version}}},\n"
            f"  howpublished = {{\\url{{{where}}}}},\n  note = {{Tag {tag_prefix}{cfg.version}, built from git revision "
            f"{revision}}}\n}}\n```")


THRESHOLDS = ("min_pass_rate", "max_pass_rate")  # the filter's band, compared between versions


def version_record(cfg, stats: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """What the versions section compares: rows, sources, pass-rate thresholds."""
    return release_record(str(cfg.version), stats, settings)


def release_record(version: str, stats: dict[str, Any], settings: dict[str, Any]) -> dict[str, Any]:
    """`version_record` from a built release's figures (`publish` writes it to the Hub as version.json)."""
    band = settings.get("filter") or {}
    return {"version": version, "rows": stats["kept"], "sources": dict(stats.get("by_source", {})),
            "thresholds": {k: band[k] for k in THRESHOLDS if k in band}}


def _changes(old: dict[str, Any], new: dict[str, Any]) -> str:
    out = []
    if old.get("rows") != new["rows"]:
        out.append(f"rows {old.get('rows')} -> {new['rows']}")
    added = sorted(set(new["sources"]) - set(old.get("sources", {})))
    dropped = sorted(set(old.get("sources", {})) - set(new["sources"]))
    out += [f"source {s} added" for s in added] + [f"source {s} dropped" for s in dropped]
    out += [f"{s} {old['sources'][s]} -> {n}" for s, n in new["sources"].items()
            if s in old.get("sources", {}) and old["sources"][s] != n]
    before, after = old.get("thresholds", {}), new["thresholds"]  # in THRESHOLDS' order, however a record was stored
    out += [f"{k} {before.get(k)} -> {after[k]}" for k in THRESHOLDS if k in after and before.get(k) != after[k]]
    return "; ".join(out) or "no change in rows, sources or thresholds"


def _load_line(repo_id: str | None, tag: str) -> str:
    return f'`load_dataset("{repo_id or REPO_PLACEHOLDER}", "default", split="train", revision="{tag}")`'


def versions_section(current: dict[str, Any], history: list[dict[str, Any]] | None, tag_prefix: str = "v",
                     repo_id: str | None = None) -> str:
    """Every version so far (oldest first) and what changed from the one before, with how to load each.
    `history` None: the earlier versions are not known (a build; publish re-renders this section from
    the Hub's tags). An entry with `no_record` (a tag without version.json) is listed without figures,
    and the next version is compared with the last one that has a record."""
    earlier = [h for h in history or [] if h.get("version") != current["version"]]
    rows, previous, previous_tag = [], None, None
    for record in [*earlier, current]:
        tag = f"{tag_prefix}{record['version']}"
        if record.get("no_record"):
            rows.append([tag, "no record", "", f"no record: {record['no_record']}", _load_line(repo_id, tag)])
            previous_tag = tag
            continue
        if previous is None:
            change = "first version" if previous_tag is None else "first version with a record"
        else:
            change = _changes(previous, record)
            if previous_tag != f"{tag_prefix}{previous['version']}":  # a version without record in between
                change = f"since {tag_prefix}{previous['version']}: {change}"
        rows.append([tag, record.get("rows"), ", ".join(record.get("sources", {})), change, _load_line(repo_id, tag)])
        previous, previous_tag = record, tag
    note = "" if history is not None else ("\n\nNo earlier version's record was available when this one was built; "
                                        "`microcoder publish` lists the versions on the Hub here.")
    return "## Versions\n\n" + _md_table(["tag", "rows", "sources", "changes from the previous version", "load"],
                                          rows) + note


def replace_versions_section(readme: str, section: str) -> str:
    """`readme` with its `## Versions` section (up to the next `## ` heading) replaced by `section`,
    the rest of the card untouched; a card without one gets it before `## Citation`, or at the end."""
    lines = readme.split("\n")
    new = section.rstrip("\n").split("\n") + [""]
    if "## Versions" in lines:
        start = lines.index("## Versions")
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
        tail = lines[end:] if end < len(lines) else [""]
        return "\n".join(lines[:start] + new + tail)
    if "## Citation" in lines:
        at = lines.index("## Citation")
        return "\n".join(lines[:at] + new + lines[at:])
    return readme.rstrip("\n") + "\n\n" + section.rstrip("\n") + "\n"


# The repository a card names: each `load_dataset("owner/name", ...)` and the citation's `\url{...}`.
_LOAD_REPO = re.compile(r'load_dataset\("(?:' + re.escape(REPO_PLACEHOLDER) + r'|[\w.-]+/[\w.-]+)"')
_URL = re.compile(r"\\url\{[^}\n]*\}")


def with_repository(readme: str, repo_id: str, address: str) -> str:
    """`readme` naming `repo_id` in every load line and `address` in the citation, whatever the
    build named there (a placeholder when it had no publish.repo_id, or another repository)."""
    readme = _LOAD_REPO.sub(lambda _: f'load_dataset("{repo_id}"', readme)
    return _URL.sub(lambda _: f"\\url{{{address}}}", readme)


def model_section(models: list[dict[str, Any]] | None) -> str:
    """The difficulty tables per policy model (each row's `model_difficulty` entries, summed)."""
    if not models:
        return "## Difficulty per policy model\n\nNo row carries a per-model measurement (`model_difficulty`)."
    rows, hists = [], []
    for m in models:
        name = f"`{portable(str(m.get('model')))}`" + (f" @ `{m['revision']}`" if m.get("revision") else " (revision not recorded)")
        sampling = (f"T={m.get('temperature')}, top_p={m.get('top_p')}, max_tokens={m.get('max_tokens')}, "
                    f"seed={m.get('seed')}, thinking={m.get('thinking')}")
        statuses = ", ".join(f"{k} {v}" for k, v in m["statuses"].items())
        rows.append([name, m.get("backend"), sampling, m.get("k"), m["problems"], m["problems_in_default"],
                     m["samples"], m["correct"], m["mean_pass_rate"], m["unsolved"], statuses])
        hists.append(f"### Pass-rate histogram of {name}\n" + _md_table(
            ["pass rate", "problems (all configs)"], [[k, v] for k, v in m["pass_rate_histogram"].items()]))
    table = _md_table(["model", "backend", "sampling", "k", "problems", "in default config", "judged samples",
                       "passes", "mean pass rate", "unsolved", "statuses"], rows)
    return "\n\n".join(["## Difficulty per policy model",
                         "Each row's `model_difficulty` lists one entry per policy model that rolled it out (model "
                         "id and revision, sampling settings, k, judged samples `n_samples`, passes `n_correct`, "
                         "system errors and per-status counts); a rollout with another model adds its entry. "
                         "`pass_rate` and the band use the first model listed here.", table, *hists])


def configs_section(configs: list[dict[str, Any]] | None, repo_id: str | None, version: str,
                    tag_prefix: str = "v") -> str:
    """What each config holds and how to load one."""
    what = {"default": "the rows in the filter's pass-rate band (what training reads)",
            "all": "every rolled-out problem, the band's and the rest (`out_of_band/`), for re-banding",
            "unsolved": "the default config's rows no sample of the policy solved"}
    rows = []
    for c in configs or []:
        name = c["config_name"]
        if name in what:
            held = what[name]
        elif name.startswith("platform-"):
            held = f"the default config's rows from {name.removeprefix('platform-')}"
        else:
            held = "rows of `all` whose measured pass rate lies in " + name.removeprefix("band-").replace("-", " .. ")
        rows.append([f"`{name}`", held])
    repo = repo_id or REPO_PLACEHOLDER
    return ("## Configs\n\n" + _md_table(["config", "rows"], rows)
            + "\n\nConfigs other than `default` and `all` select rows with the Parquet builder's `filters` "
              "(recent `datasets`). Load one by name and tag:\n\n```python\nfrom datasets import load_dataset\n"
              f"ds = load_dataset(\"{repo}\", \"unsolved\", split=\"train\", revision=\"{tag_prefix}{version}\")\n```\n\n"
              "Another band, from this release alone (no new rollouts): `microcoder filter --band LO,HI "
              "--release DIR --out NEW_DIR` writes a release whose default config is that band.")


def render_card(cfg, stats: dict[str, Any], upstream: dict[str, Any], settings: dict[str, Any],
                revision: str, info: dict[str, Any] | None = None, *, repo_id: str | None = None,
                history: list[dict[str, Any]] | None = None, tag_prefix: str = "v",
                configs: list[dict[str, Any]] | None = None) -> str:
    """The card of build config `cfg` (microcoder.pipeline.build.BuildConfig) with the build's `stats`; `repo_id`
    (the publish target) for the usage and citation, `history` the earlier versions' records
    (`version_record`, oldest first) for the versions section."""
    settings = portable(enabled_sources(settings))
    upstream = portable(upstream)
    kinds = source_kinds(settings)
    front = {
        "pretty_name": cfg.name,
        "license": front_license(cfg, stats, kinds),
        "size_categories": [size_category(stats["kept"])],
        "task_categories": list(cfg.task_categories),
        "tags": list(cfg.tags),
        **({"dataset_info": info} if info else {}),
        "configs": configs or [{"config_name": "default", "data_files": [{"split": "train", "path": SHARD_PATTERN}]}],
    }
    s = stats
    parts = [
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---",
        f"# {cfg.name} v{cfg.version}",
        summary(stats, settings),
        rollout_model(settings, upstream),
        "## Contents",
        f"{s['kept']} problems ({s['tests']} test cases, at most {s['max_tests_per_problem']} per problem) in "
        f"{s['shards']} shard(s) under `data/`. {s['with_pass_rate']} problems have a measured pass rate "
        f"(mean {s['mean_pass_rate']}); {s['unsolved']} were never solved by the policy and are marked `unsolved`."
        + (f" {s['rejected']} of the build's {s['read']} input records could not be built (invalid, a duplicate "
           "id, or no training prompt) and are listed in the build's `rejects.jsonl`." if s.get("rejected") else ""),
        "Each row is a full problem record (statement, style, starter code / entry point, tests, checker, "
        "limits, metadata) plus the difficulty columns of the filter (`pass_rate`, `n_samples`, `pass_at_k`, "
        "`unsolved`, `difficulty_scores`, `predicted_difficulty`, `predicted_pass_rate`, `selection_reason`), "
        "`model_difficulty` (the measurement per policy model) and `prompt`, the chat messages used for training (explicit stdin/stdout or function-completion "
        "instructions). Functional tests hold one JSON value per argument line and the JSON of the return value.",
        usage(repo_id, cfg.version, tag_prefix),
        configs_section(configs, repo_id, cfg.version, tag_prefix),
        model_section(s.get("models")),
        strength_section(upstream.get("validate"), upstream.get("testgen")),
        "## Statistics",
        _counts("By source", "source", s["by_source"]),
        _counts("By style", "style", s["by_style"]),
        _counts("By difficulty (source label)", "difficulty", s["by_difficulty"]),
        "### Difficulty by source\n" + _md_table(["source", "difficulty", "problems", "mean pass rate"],
                                                 [[r["source"], r["difficulty"], r["count"], r["mean_pass_rate"]]
                                                  for r in s["difficulty_by_source"]]),
        "### Pass-rate histogram (policy rollouts)\n" + _md_table(["pass rate", "problems"],
                                                                  [[k, v] for k, v in s["pass_rate_histogram"].items()]),
        _counts("Selection", "reason", s["by_selection_reason"]),
        "### Licenses by source\n" + _md_table(["source", "license (Hub id)", "note"], source_licenses(s, kinds)),
        _counts("Licenses as the rows state them", "license", s["by_license"]),
        "## Provenance",
    ]
    for stage, st in upstream.items():
        if st is None:
            parts.append(f"### {stage}\nNo `{stage}` stats were found when this version was built.")
        else:
            parts.append(f"### {stage}\n" + _md_table(["count", "value"], _flat_numbers(st)))
    parts.append(f"Built from git revision `{revision}` with these settings (each stage's effective settings as its "
                 "settings.json records them, command-line overrides included; params.yaml where a stage recorded "
                 "none):\n\n```yaml\n"
                 + yaml.safe_dump(settings, sort_keys=True).rstrip() + "\n```")
    parts.append(versions_section(version_record(cfg, stats, settings), history, tag_prefix, repo_id))
    parts.append(citation(cfg, repo_id, revision, tag_prefix))
    return "\n\n".join(parts) + "\n"
