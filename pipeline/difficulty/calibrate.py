"""Calibrate predicted difficulty scores against measured pass rates.

- `isotonic`: a monotone step function score -> pass rate (direction learned from the data),
  weighted by each problem's sample count;
- `logistic`: a binomial logistic regression on the individual samples (each problem contributes
  its correct and incorrect samples as weighted rows), so the fit respects the sample counts.

The report gives the in-sample error and the k-fold cross-validated (out-of-sample) error, which
is the number to trust when deciding whether predictions can select unrolled problems.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

METHODS = ("isotonic", "logistic")


class CalibrationError(ValueError):
    pass


@dataclass
class Calibrator:
    method: str
    model: Any
    report: dict[str, Any] = field(default_factory=dict)

    def predict(self, scores) -> np.ndarray:
        x = np.asarray(scores, dtype=float).reshape(-1)
        if self.method == "isotonic":
            y = self.model.predict(x)
        else:
            y = self.model.predict_proba(x.reshape(-1, 1))[:, 1]
        return np.clip(y, 0.0, 1.0)


def _fit(method: str, x: np.ndarray, y: np.ndarray, n: np.ndarray) -> Calibrator:
    if method == "isotonic":
        from sklearn.isotonic import IsotonicRegression

        model = IsotonicRegression(increasing="auto", y_min=0.0, y_max=1.0, out_of_bounds="clip")
        model.fit(x, y, sample_weight=n)
        return Calibrator(method, model)
    if method == "logistic":
        from sklearn.linear_model import LogisticRegression

        correct = y * n
        xs = np.concatenate([x, x]).reshape(-1, 1)
        labels = np.concatenate([np.ones_like(x), np.zeros_like(x)])
        weights = np.concatenate([correct, n - correct])
        keep = weights > 0
        if len(set(labels[keep])) < 2:
            raise CalibrationError("logistic calibration needs both correct and incorrect samples")
        model = LogisticRegression(C=1e4, max_iter=1000)
        model.fit(xs[keep], labels[keep], sample_weight=weights[keep])
        return Calibrator(method, model)
    raise CalibrationError(f"unknown calibration method {method!r}; choose one of {list(METHODS)}")


def _errors(pred: np.ndarray, y: np.ndarray, n: np.ndarray) -> tuple[float, float]:
    w = n / n.sum()
    err = pred - y
    return float(np.sum(w * np.abs(err))), float(np.sqrt(np.sum(w * err ** 2)))


def fit_calibration(scores, pass_rates, n_samples=None, *, method: str = "isotonic", folds: int = 5,
                    seed: int = 0) -> Calibrator:
    """Fit pass_rate ~ score; errors are weighted by sample count (mean absolute, root mean square)."""
    x = np.asarray(scores, dtype=float).reshape(-1)
    y = np.asarray(pass_rates, dtype=float).reshape(-1)
    n = np.ones_like(x) if n_samples is None else np.asarray(n_samples, dtype=float).reshape(-1)
    if not (len(x) == len(y) == len(n)):
        raise CalibrationError("scores, pass_rates and n_samples must have the same length")
    if len(x) < 2 or len(set(x.tolist())) < 2:
        raise CalibrationError(f"need at least two distinct scores to calibrate, got {len(set(x.tolist()))}")
    if np.any((y < 0) | (y > 1)) or np.any(n <= 0):
        raise CalibrationError("pass rates must lie in [0, 1] and sample counts be positive")
    cal = _fit(method, x, y, n)
    mae, rmse = _errors(cal.predict(x), y, n)
    cv_mae = cv_rmse = None
    if folds >= 2 and len(x) >= 2 * folds:
        rng = np.random.default_rng(seed)
        fold_of = rng.permutation(len(x)) % folds
        pred = np.empty_like(y)
        for f in range(folds):
            test = fold_of == f
            train = ~test
            try:
                pred[test] = _fit(method, x[train], y[train], n[train]).predict(x[test])
            except (CalibrationError, ValueError):  # a fold without spread: predict its training mean
                pred[test] = np.average(y[train], weights=n[train])
        cv_mae, cv_rmse = _errors(pred, y, n)
    baseline = np.average(y, weights=n)
    base_mae, _ = _errors(np.full_like(y, baseline), y, n)
    from scipy.stats import spearmanr

    rho = spearmanr(x, y).statistic if len(set(y.tolist())) > 1 else float("nan")
    cal.report = {
        "method": method,
        "n_problems": int(len(x)),
        "n_samples": int(n.sum()),
        "mae": round(mae, 4),
        "rmse": round(rmse, 4),
        "cv_folds": folds if cv_mae is not None else None,
        "cv_mae": None if cv_mae is None else round(cv_mae, 4),
        "cv_rmse": None if cv_rmse is None else round(cv_rmse, 4),
        "baseline_mae": round(base_mae, 4),  # predicting the mean pass rate for every problem
        "spearman": None if np.isnan(rho) else round(float(rho), 4),
    }
    return cal
