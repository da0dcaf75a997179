"""The filter stage: pass rate per problem, the band, and the predict-calibrate-select path.

Every input record ends in `problems.parquet` (kept, with `selection_reason`) or in
`rejects.jsonl` (with the reason: out of the band, unmeasured, or an invalid / duplicate record);
`stats.json` holds the counts in the shared vocabulary (`read = kept + rejected`, with
`rejected_by_reason` and `kept_by_reason`), `settings.json` the settings, and `report.json` the
same counts plus the histograms, the prediction and the calibration fit with its error.

Each row's `model_difficulty` lists its measured difficulty per policy model (as Skywork-OR1's
`model_difficulty`): model id and revision, sampling settings, k, samples, passes and per-status
counts. Every rollouts folder given adds its model's entry; entries the input rows already carry
(a release filtered before with another model) are kept, one of the same model and settings is
replaced. The first rollouts folder decides the band (`pass_rate` and the columns beside it).
Problems outside the band leave their full row, difficulty included, in `out_of_band.parquet`
besides their reject, so a built release can be re-banded without new rollouts
(pipeline/reband.py).

The rollouts must be those of this input: a missing rollouts folder, or samples judged against
other tests than the problems have now (the rollout stage was not rerun), is an error.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from microcoder.pipeline.difficulty.band import (
    PREDICTED_TOO_EASY,
    PREDICTED_TOO_HARD,
    TOO_EASY,
    TOO_HARD,
    UNMEASURED,
    Band,
)
from microcoder.pipeline.difficulty.calibrate import CalibrationError, fit_calibration
from microcoder.pipeline.difficulty.passrate import aggregate
from microcoder.pipeline.difficulty.predict import DIMENSIONS, PredictConfig, predict_difficulty
from microcoder.pipeline.inputs import InputError, require_input
from microcoder.pipeline.io import write_json, write_problems
from microcoder.pipeline.schema import Problem
from microcoder.pipeline.stage import Stage, StageContext

log = logging.getLogger(__name__)

OUT_OF_BAND = "out_of_band.parquet"
SCORES_TYPE = pa.struct([(k, pa.int32()) for k in DIMENSIONS])
STATUS_COUNTS_TYPE = pa.list_(pa.struct([("status", pa.string()), ("count", pa.int32())]))
# One policy model's measurement of one problem; the first fields identify the measurement.
MODEL_DIFFICULTY_TYPE = pa.struct([
    ("model", pa.string()),
    ("revision", pa.string()),
    ("backend", pa.string()),
    ("temperature", pa.float64()),
    ("top_p", pa.float64()),
    ("max_tokens", pa.int32()),
    ("seed", pa.int64()),
    ("thinking", pa.bool_()),
    ("k", pa.int32()),
    ("n_samples", pa.int32()),
    ("n_correct", pa.int32()),
    ("n_system_errors", pa.int32()),
    ("pass_rate", pa.float64()),
    ("statuses", STATUS_COUNTS_TYPE),
])
MEASUREMENT_KEY = ("model", "revision", "backend", "temperature", "top_p", "max_tokens", "seed", "thinking", "k")
FILTER_COLUMNS = pa.schema([
    ("pass_rate", pa.float64()),
    ("n_samples", pa.int32()),
    ("n_correct", pa.int32()),
    ("pass_at_k", pa.float64()),
    ("unsolved", pa.bool_()),
    ("difficulty_scores", SCORES_TYPE),
    ("predicted_difficulty", pa.float64()),
    ("predicted_pass_rate", pa.float64()),
    ("prediction_error", pa.string()),
    ("selection_reason", pa.string()),
    ("model_difficulty", pa.list_(MODEL_DIFFICULTY_TYPE)),
])


@dataclass
class FilterConfig:
    min_pass_rate: float = field(default=0.0, metadata={"help": "Drop problems whose pass rate is below this (0 keeps unsolved ones)."})
    max_pass_rate: float = field(default=0.75, metadata={"help": "Drop problems whose pass rate is above this (too easy)."})
    pass_k: int = field(default=4, metadata={"help": "k of the reported unbiased pass@k (null when fewer samples)."})
    predict: PredictConfig = field(default_factory=PredictConfig, metadata={
        "help": "LLM difficulty prediction, calibrated on rolled-out problems (for problems without rollouts)."})

    def __post_init__(self) -> None:
        self.band = Band(self.min_pass_rate, self.max_pass_rate)
        if self.pass_k < 1:
            raise ValueError("filter.pass_k must be >= 1")


def histogram(values: list[float], bins: int = 10) -> dict[str, int]:
    """Counts in [0, 0.1), [0.1, 0.2), ..., [0.9, 1.0] (the last bin closed)."""
    out = {f"{i / bins:.1f}-{(i + 1) / bins:.1f}": 0 for i in range(bins)}
    labels = list(out)
    for v in values:
        out[labels[min(int(v * bins), bins - 1)]] += 1
    return out


OUT_OF_BAND_REASONS = (TOO_EASY, TOO_HARD, PREDICTED_TOO_EASY, PREDICTED_TOO_HARD)


def _read_json(path: Path) -> dict[str, Any] | None:
    import json

    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def measuring_model(rollouts_dir: str | Path) -> dict[str, Any]:
    """Who measured a rollouts folder, and how: the MEASUREMENT_KEY fields from its shards' manifest
    (the generation settings and the model's revision), else its settings.json; None where unknown."""
    rollouts_dir = Path(rollouts_dir)
    manifest = _read_json(rollouts_dir / "shards" / "manifest.json") or {}
    recorded = (manifest.get("fingerprint") or {}).get("generation") or _read_json(rollouts_dir / "settings.json") or {}
    out = {key: recorded.get(key) for key in MEASUREMENT_KEY}
    out["revision"] = (manifest.get("model") or {}).get("revision") or recorded.get("model_revision")
    return out


def model_entries(rollouts: pa.Table, model: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{problem id: its MODEL_DIFFICULTY_TYPE entry} from one model's rollout rows."""
    entries: dict[str, dict[str, Any]] = {}
    for pid, status in zip(rollouts.column("problem_id").to_pylist(), rollouts.column("status").to_pylist(),
                           strict=True):
        entries.setdefault(pid, Counter())[status] += 1
    out = {}
    for pid, statuses in entries.items():
        judged = sum(n for st, n in statuses.items() if st != "SE")
        out[pid] = {**model, "k": model.get("k") or sum(statuses.values()), "n_samples": judged,
                    "n_correct": statuses.get("AC", 0), "n_system_errors": statuses.get("SE", 0),
                    "pass_rate": statuses.get("AC", 0) / judged if judged else None,
                    "statuses": [{"status": st, "count": n} for st, n in sorted(statuses.items())]}
    return out


def merge_entries(existing: list[dict[str, Any]] | None, new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries a row carries plus `new`: an entry of the same model and settings is replaced
    (a rerun measures it again), another model's is kept."""
    def key(e: dict[str, Any]) -> tuple:
        return tuple(e.get(k) for k in MEASUREMENT_KEY)

    fresh = {key(e) for e in new}
    return [e for e in existing or [] if key(e) not in fresh] + list(new)


class Filter(Stage):
    """Filter the problems by the pass rates of the `rollouts` folders (one, or several: the first
    decides the band, each adds its model's `model_difficulty` entry); `predict_backend` replaces
    the predictor's backend (tests)."""

    name = "filter"
    config = FilterConfig
    problems_schema = FILTER_COLUMNS

    def process(self, problems: list[Problem], ctx: StageContext) -> list[Problem]:
        from microcoder.pipeline.rollout.runner import read_rollouts

        cfg, rollouts_dir = ctx.cfg, ctx.inputs["rollouts"]
        folders = [Path(d) for d in (rollouts_dir if isinstance(rollouts_dir, (list, tuple)) else [rollouts_dir])]
        if not folders:
            raise InputError("no rollouts folder given")
        ids = {p.id for p in problems}
        measured_by: list[dict[str, dict[str, Any]]] = []
        for i, folder in enumerate(folders):
            table = read_rollouts(require_input(folder, "rollouts folder"), ["problem_id", "status", "judge_hash"])
            _check_fresh(table, problems, folder)
            measured_by.append(model_entries(table, measuring_model(folder)))
            if i == 0:
                rollouts = table
        stats = aggregate(rollouts, cfg.pass_k)
        orphan = sorted(set(stats) - ids)
        if orphan:
            log.warning("%d rolled-out problems are not in %s (ignored)", len(orphan), ctx.problems_path)

        predictions = predict_difficulty(problems, cfg.predict, ctx.inputs.get("predict_backend")) \
            if cfg.predict.enabled else {}
        calibrator, calibration = _calibrate(cfg.predict, problems, stats, predictions)

        kept: list[Problem] = []
        out_of_band: list[Problem] = []
        kept_by_reason: Counter[str] = Counter()
        for p in problems:
            s = stats.get(p.id)
            pred = predictions.get(p.id)
            measured = s is not None and s.pass_rate is not None
            cols: dict[str, Any] = {
                "pass_rate": s.pass_rate if s else None,
                "n_samples": s.n_samples if s else 0,
                "n_correct": s.n_correct if s else 0,
                "pass_at_k": s.pass_at_k if s else None,
                "unsolved": (s.pass_rate == 0) if measured else None,
                "difficulty_scores": pred.scores if pred else None,
                "predicted_difficulty": pred.score if pred else None,
                "predicted_pass_rate": None,
                "prediction_error": pred.error if pred else None,
                "model_difficulty": merge_entries(p.extra.get("model_difficulty"),
                                                  [m[p.id] for m in measured_by if p.id in m]) or None,
            }
            if calibrator is not None and pred is not None and pred.score is not None:
                cols["predicted_pass_rate"] = float(calibrator.predict([pred.score])[0])
            if measured:
                keep, reason = cfg.band.measured(s.pass_rate)
                detail = f"pass rate {s.pass_rate:.3f} ({s.n_correct}/{s.n_samples} samples)"
            elif cols["predicted_pass_rate"] is not None:
                keep, reason = cfg.band.predicted(cols["predicted_pass_rate"])
                detail = f"calibrated predicted pass rate {cols['predicted_pass_rate']:.3f} (no rollouts)"
            else:
                keep, reason = False, UNMEASURED
                judged = "no rollouts" if s is None else f"all {s.n_system_errors} samples were system errors (SE)"
                detail = f"{judged} and no calibrated prediction" + (
                    f" (prediction missing: {pred.error})" if pred and pred.error else "")
            cols["selection_reason"] = reason
            p.extra.update(cols)
            if keep:
                kept.append(p)
                kept_by_reason[reason] += 1
            else:
                ctx.reject(p.id, f"{reason}: {detail}; band [{cfg.min_pass_rate}, {cfg.max_pass_rate}]", p)
                if reason in OUT_OF_BAND_REASONS:
                    out_of_band.append(p)
        write_problems(ctx.out_dir / OUT_OF_BAND, out_of_band, extra_schema=FILTER_COLUMNS)

        measured_rates = [s.pass_rate for pid, s in stats.items() if pid in ids and s.pass_rate is not None]
        missing = [pid for pid, pr in predictions.items() if pr.scores is None]
        ctx.stats.figures = {
            "kept_by_reason": dict(sorted(kept_by_reason.items())),
            "measured": len(measured_rates),
            "system_errors": sum(s.n_system_errors for pid, s in stats.items() if pid in ids),
            "rollouts_not_in_problems": len(orphan),
            "out_of_band": len(out_of_band),
        }
        ctx.result["report"] = {  # report.json beside the stats (see `finish`)
            "pass_rate_histogram_in": histogram(measured_rates),
            "pass_rate_histogram_kept": histogram([p.extra["pass_rate"] for p in kept
                                                   if p.extra["pass_rate"] is not None]),
            "prediction": {
                "enabled": cfg.predict.enabled,
                "scored": len(predictions) - len(missing),
                "missing": len(missing),
                "missing_ids": missing[:100],
                "attempts": dict(sorted(Counter(pr.attempts for pr in predictions.values()).items())),
            },
            "calibration": calibration,
        }
        return kept

    def finish(self, stats: dict[str, Any], ctx: StageContext) -> dict[str, Any]:
        by_reason = Counter(stats["rejected_by_reason"]) + Counter(stats["kept_by_reason"])
        report = {**stats, "by_reason": dict(sorted(by_reason.items())), **ctx.result["report"]}  # by_reason sums to read
        write_json(ctx.out_dir / "report.json", report)
        return report


def _check_fresh(rollouts: pa.Table, problems: list[Problem], rollouts_dir: str | Path) -> None:
    """Samples judged against other tests, checker or limits than the problems have now mean the
    rollout stage was not rerun after its input changed: their pass rates would be stale."""
    from microcoder.pipeline.rollout.runner import judge_hash

    current = {p.id: judge_hash(p) for p in problems}
    stale = sorted({pid for pid, h in zip(rollouts.column("problem_id").to_pylist(),
                                          rollouts.column("judge_hash").to_pylist(), strict=True)
                    if h is not None and pid in current and h != current[pid]})
    if stale:
        raise InputError(f"{rollouts_dir}: the samples of {len(stale)} problems (e.g. {stale[:3]}) were judged against "
                         "other tests than these problems have: rerun `microcoder rollout` on this input first")


def _calibrate(pcfg: PredictConfig, problems: list[Problem], stats, predictions):
    """Fit predicted score -> measured pass rate on problems that have both."""
    if not pcfg.enabled:
        return None, {"fitted": False, "reason": "predictor disabled"}
    pairs = [(predictions[p.id].score, stats[p.id].pass_rate, stats[p.id].n_samples) for p in problems
             if p.id in stats and stats[p.id].pass_rate is not None and predictions[p.id].score is not None]
    if len(pairs) < pcfg.min_calibration_problems:
        return None, {"fitted": False, "reason": f"{len(pairs)} problems with both a measured pass rate and a "
                                                 f"prediction; need {pcfg.min_calibration_problems}"}
    x, y, n = zip(*pairs, strict=True)
    try:
        cal = fit_calibration(x, y, n, method=pcfg.calibration, folds=pcfg.cv_folds, seed=pcfg.seed)
    except CalibrationError as e:
        return None, {"fitted": False, "reason": str(e)}
    log.info("calibration %s: %s", pcfg.calibration, cal.report)
    return cal, {"fitted": True, **cal.report}
