"""The filter stage: pass rate per problem, the band, and the predict-calibrate-select path.

Every input record ends in `problems.parquet` (kept, with `selection_reason`) or in
`rejects.jsonl` (with the reason: out of the band, unmeasured, or an invalid / duplicate record);
`stats.json` holds the counts in the shared vocabulary (`read = kept + rejected`, with
`rejected_by_reason` and `kept_by_reason`), `settings.json` the settings, and `report.json` the
same counts plus the histograms, the prediction and the calibration fit with its error.

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

from pipeline.difficulty.band import UNMEASURED, Band
from pipeline.difficulty.calibrate import CalibrationError, fit_calibration
from pipeline.difficulty.passrate import aggregate
from pipeline.difficulty.predict import DIMENSIONS, PredictConfig, predict_difficulty
from pipeline.inputs import DUPLICATE, InputError, load_problems, require_input
from pipeline.io import RejectsWriter, write_json, write_problems
from pipeline.schema import Problem
from pipeline.stage import StageStats, write_stats

log = logging.getLogger(__name__)

SCORES_TYPE = pa.struct([(k, pa.int32()) for k in DIMENSIONS])
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


def run_filter(cfg: FilterConfig, problems_path: str | Path, rollouts_dir: str | Path, out_dir: str | Path, *,
               predict_backend=None) -> dict[str, Any]:
    from pipeline.rollout.runner import read_rollouts

    out_dir = Path(out_dir)
    loaded = load_problems(problems_path, "filter input")
    problems = loaded.problems
    ids = {p.id for p in problems}
    rollouts = read_rollouts(require_input(rollouts_dir, "rollouts folder"), ["problem_id", "status", "judge_hash"])
    _check_fresh(rollouts, problems, rollouts_dir)
    stats = aggregate(rollouts, cfg.pass_k)
    orphan = sorted(set(stats) - ids)
    if orphan:
        log.warning("%d rolled-out problems are not in %s (ignored)", len(orphan), problems_path)

    predictions = predict_difficulty(problems, cfg.predict, predict_backend) if cfg.predict.enabled else {}
    calibrator, calibration = _calibrate(cfg.predict, problems, stats, predictions)

    kept: list[Problem] = []
    counts = StageStats(unit="problems", read=loaded.read)
    kept_by_reason: Counter[str] = Counter()
    with RejectsWriter(out_dir / "rejects.jsonl", "filter") as rejects:
        for r in loaded.rejects:
            counts.reject("duplicate_id" if r.reason == DUPLICATE else "invalid_record")
            rejects.add(r.id, r.reason, r.record)
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
                counts.reject(reason)
                rejects.add(p.id, f"{reason}: {detail}; band [{cfg.min_pass_rate}, {cfg.max_pass_rate}]", p)
    counts.kept = len(kept)
    write_problems(out_dir / "problems.parquet", kept, extra_schema=FILTER_COLUMNS)

    measured_rates = [s.pass_rate for pid, s in stats.items() if pid in ids and s.pass_rate is not None]
    missing = [pid for pid, pr in predictions.items() if pr.scores is None]
    counts.figures = {
        "kept_by_reason": dict(sorted(kept_by_reason.items())),
        "measured": len(measured_rates),
        "system_errors": sum(s.n_system_errors for pid, s in stats.items() if pid in ids),
        "rollouts_not_in_problems": len(orphan),
    }
    stage_stats = write_stats(out_dir, counts, settings=cfg, stage="filter")
    report = {
        **stage_stats,
        "by_reason": dict(sorted((counts.rejected_by_reason + kept_by_reason).items())),  # sums to read
        "pass_rate_histogram_in": histogram(measured_rates),
        "pass_rate_histogram_kept": histogram([p.extra["pass_rate"] for p in kept if p.extra["pass_rate"] is not None]),
        "prediction": {
            "enabled": cfg.predict.enabled,
            "scored": len(predictions) - len(missing),
            "missing": len(missing),
            "missing_ids": missing[:100],
            "attempts": dict(sorted(Counter(pr.attempts for pr in predictions.values()).items())),
        },
        "calibration": calibration,
    }
    write_json(out_dir / "report.json", report)
    return report


def _check_fresh(rollouts: pa.Table, problems: list[Problem], rollouts_dir: str | Path) -> None:
    """Samples judged against other tests, checker or limits than the problems have now mean the
    rollout stage was not rerun after its input changed: their pass rates would be stale."""
    from pipeline.rollout.runner import judge_hash

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
