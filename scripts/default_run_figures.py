"""The README's figures of the default run, written from the run's own outputs (issue 37).

    .venv/bin/python scripts/default_run_figures.py          # after `make repro`: rewrite both
    .venv/bin/python scripts/default_run_figures.py --check  # exit 1 when the README disagrees

Reads each stage's stats.json, writes docs/default_run.json (the figures, and the dvc.lock hash
of every stats.json they came from) and the table between the README's markers. A figure typed
by hand drifts from the run (the README said 4,062 generated tests where a rerun made 4,061);
tests/test_readme_figures.py fails when the README's table is not docs/default_run.json's, or
when dvc.lock's hashes of those stats files are not the ones the figures were read from.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FIGURES_FILE = ROOT / "docs" / "default_run.json"
BEGIN, END = "<!-- default-run figures: scripts/default_run_figures.py -->", "<!-- end of default-run figures -->"

# (stage folder under data/, dotted key in its stats.json, what it is)
FIGURES = [
    ("raw", "read", "records read by scrape (seed + HumanEval)"),
    ("raw", "kept", "problems after scrape"),
    ("dedup", "rejected_by_reason.folded_duplicate", "duplicates folded into their cluster (in rejects.jsonl)"),
    ("dedup", "rejected_by_reason.benchmark_contamination", "benchmark copies removed"),
    ("testgen", "problems_augmented", "problems given generated tests"),
    ("testgen", "tests_added", "generated tests"),
    ("testgen", "tests_added_by_tier.edge", "of them edge"),
    ("testgen", "tests_added_by_tier.random", "of them random"),
    ("testgen", "tests_added_by_tier.max", "of them at the stated maxima"),
    ("testgen", "tests_added_by_tier.hack", "of them hack"),
    ("testgen", "mutants.kill_rate_examples", "mutant TNR with the problems' own tests"),
    ("testgen", "mutants.kill_rate_with_generated", "mutant TNR with the generated tests"),
    ("validated", "kept", "problems validated"),
    ("validated", "output_tests", "tests kept"),
    ("validated", "tests.tests_broken", "planted wrong expected outputs dropped"),
    ("validated", "time_limits.derived", "time limits derived from the references' times"),
    ("validated", "time_limits.pinned", "of them pinned (data/seed/time_limits.jsonl)"),
    ("validated", "strength.held_out.tpr", "held-out TPR: references that played no part in choosing the tests"),
    ("validated", "strength.held_out.correct", "held-out references measured (one-reference problems have none)"),
    ("validated", "strength.kept.tpr", "in-sample TPR (the references chose the tests: 100% by construction)"),
    ("validated", "rejected", "problems rejected by validate"),
    ("rollouts", "samples", "rollout samples"),
    ("rollouts", "sample_pass_rate", "share of samples AC"),
    ("rollouts", "problems_solved_any", "problems solved at least once"),
    ("filtered", "rejected", "problems rejected by filter as too easy"),
    ("filtered", "kept", "problems kept by filter (in band or unsolved)"),
    ("curated", "kept", "rows in the release"),
    ("train", "steps", "MicroCoder-GRPO steps"),
]


def value(stats: dict, key: str):
    for part in key.split("."):
        if not isinstance(stats, dict) or part not in stats:
            raise KeyError(key)
        stats = stats[part]
    return stats


def lock_hashes() -> dict[str, str]:
    """dvc.lock's md5 of every stats.json out."""
    lock = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]
    return {o["path"]: o["md5"] for s in lock.values() for o in s.get("outs", []) if o["path"].endswith("/stats.json")}


def read_figures(data: Path) -> dict:
    hashes = lock_hashes()
    rows, sources = [], {}
    for stage, key, label in FIGURES:
        stats = json.loads((data / stage / "stats.json").read_text())
        rows.append({"stage": stage, "key": key, "label": label, "value": value(stats, key)})
        path = f"data/{stage}/stats.json"
        sources[path] = hashes.get(path)
    return {"figures": rows, "dvc_lock_md5": sources}


def shown(v) -> str:
    if isinstance(v, float) and v <= 1.0:
        return f"{100 * v:.1f}%"
    return f"{v:,}" if isinstance(v, int) else str(v)


def table(figures: dict) -> str:
    lines = [BEGIN, "| stage | figure | value |", "|---|---|---|"]
    lines += [f"| {r['stage']} | {r['label']} | {shown(r['value'])} |" for r in figures["figures"]]
    return "\n".join(lines + [END])


def readme_block(text: str) -> str:
    if BEGIN not in text or END not in text:
        raise ValueError(f"README.md has no figures block ({BEGIN} ... {END})")
    return text[text.index(BEGIN):text.index(END) + len(END)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    ap.add_argument("--check", action="store_true", help="only check the README against docs/default_run.json")
    args = ap.parse_args()
    readme = ROOT / "README.md"
    if args.check:
        ok = readme_block(readme.read_text()) == table(json.loads(FIGURES_FILE.read_text()))
        print("README figures match docs/default_run.json" if ok else "README figures differ: rerun this script")
        return 0 if ok else 1
    figures = read_figures(args.data)
    FIGURES_FILE.write_text(json.dumps(figures, indent=2) + "\n")
    text = readme.read_text()
    readme.write_text(text.replace(readme_block(text), table(figures)))
    print(f"wrote {FIGURES_FILE.relative_to(ROOT)} and README.md's figures ({len(figures['figures'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
