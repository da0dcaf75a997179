"""The dataset card (README.md of the curated folder): YAML front matter for the Hub, the build's
figures, and each upstream stage's figures and settings for provenance.

Upstream stages are read from their output folders: `stats.json` (figures only) and
`settings.json` (the settings the stage ran with, `--set` overrides included); a stage that
recorded no settings is shown with its params.yaml section. The "Test strength" section reads the
validate and testgen figures in the terms of `pipeline/strength.py` (TPR/TNR with their counts), and
the figures of stats written before them where those are all there is.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from pipeline import strength
from pipeline.config import settings_record
from pipeline.params import load_yaml

SHARD_PATTERN = "data/train-*"
# Upstream stage -> its output folder under the data directory (in pipeline order).
UPSTREAM = {"scrape": "raw", "dedup": "dedup", "testgen": "testgen", "validate": "validated",
            "rollout": "rollouts", "filter": "filtered"}
NOISE = ("this_run", "config")  # a run's own timing is noise in a card; settings are shown apart
DEFAULT_TAGS = ["code", "competitive-programming", "reinforcement-learning", "rlvr", "microcoder"]
CARD_SUMMARY = (
    "Competitive-programming problems curated for reinforcement learning of coding models "
    "(MicroCoder-Dataset): scraped, deduplicated and decontaminated, tests validated against "
    "reference solutions, and filtered by the measured pass rate of policy rollouts so that "
    "what remains is hard but learnable."
)


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
        return names[0].strip().lower().replace(" ", "-")
    return "other"


STRENGTH_DEFINITION = (
    "Measured as the field measures it (CodeContests-O, HardTests; `pipeline/strength.py`): TPR = share of correct "
    "solutions passing every kept test, TNR = share of known-incorrect solutions failing at least one. Correct "
    "solutions are the problems' reference solutions that compiled and ran (no source ships other accepted "
    "submissions today); incorrect ones are the known-wrong solutions the sources ship (Kattis "
    "`submissions/wrong_answer` and the like, CodeContests `incorrect_solutions`). Counts are summed over problems, "
    "never averaged.")


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


def _strength_table(label: str, groups: dict[str, Any] | None) -> list[str]:
    if not groups:
        return []
    rows = [[g, _rate(r, "tpr"), _rate(r, "tnr")] for g, r in groups.items() if isinstance(r, dict)]
    return [f"### Test strength by {label}\n" + _md_table([label, "TPR (passing/correct)", "TNR (failing/incorrect)"], rows)]


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
    out = [f"Kept tests (validate stage, over its {s['strength'].get('problems_measured', 0)} kept problems with "
           f"solutions of either kind; this dataset's problems are among them): {strength.describe(kept)}."]
    if before:
        lost = before["incorrect_failing"] - kept["incorrect_failing"]
        freed = kept["correct_passing"] - before["correct_passing"]
        out.append(f"Before the caps on the number and size of tests (`max_tests`, `max_total_bytes`): "
                   f"{strength.describe(before)}; the caps cost {lost} caught known-wrong solution(s) and let "
                   f"{freed} more reference(s) pass.")
    return (out + _strength_table("source", _record(s, "strength", "by_source"))
            + _strength_table("difficulty", _record(s, "strength", "by_difficulty")))


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


def render_card(cfg, stats: dict[str, Any], upstream: dict[str, Any], settings: dict[str, Any],
                revision: str, info: dict[str, Any] | None = None) -> str:
    """The card of build config `cfg` (pipeline.build.BuildConfig) with the build's `stats`."""
    front = {
        "pretty_name": cfg.name,
        "license": cfg.license or card_license(stats["by_license"]),
        "size_categories": [size_category(stats["kept"])],
        "task_categories": list(cfg.task_categories),
        "tags": list(cfg.tags),
        **({"dataset_info": info} if info else {}),
        "configs": [{"config_name": "default", "data_files": [{"split": "train", "path": SHARD_PATTERN}]}],
    }
    s = stats
    parts = [
        "---\n" + yaml.safe_dump(front, sort_keys=False) + "---",
        f"# {cfg.name} v{cfg.version}",
        CARD_SUMMARY,
        "## Contents",
        f"{s['kept']} problems ({s['tests']} test cases, at most {s['max_tests_per_problem']} per problem) in "
        f"{s['shards']} shard(s) under `data/`. {s['with_pass_rate']} problems have a measured pass rate "
        f"(mean {s['mean_pass_rate']}); {s['unsolved']} were never solved by the policy and are marked `unsolved`."
        + (f" {s['rejected']} of the build's {s['read']} input records could not be built (invalid, a duplicate "
           "id, or no training prompt) and are listed in the build's `rejects.jsonl`." if s.get("rejected") else ""),
        "Each row is a full problem record (statement, style, starter code / entry point, tests, checker, "
        "limits, metadata) plus the difficulty columns of the filter (`pass_rate`, `n_samples`, `pass_at_k`, "
        "`unsolved`, `difficulty_scores`, `predicted_difficulty`, `predicted_pass_rate`, `selection_reason`) "
        "and `prompt`, the chat messages used for training (explicit stdin/stdout or function-completion "
        "instructions). Functional tests hold one JSON value per argument line and the JSON of the return value.",
        "```python\nfrom datasets import load_dataset\nds = load_dataset(\"<this repo or folder>\", split=\"train\")\n```",
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
        _counts("Licenses", "license", s["by_license"]),
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
    return "\n\n".join(parts) + "\n"
