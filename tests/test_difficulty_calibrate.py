from __future__ import annotations

import numpy as np
import pytest

from microcoder.pipeline.difficulty.calibrate import CalibrationError, fit_calibration


def synthetic(seed: int = 0, size: int = 120, samples: int = 16):
    """Pass rates drawn from a known decreasing relation p = sigmoid(-1.2 (score - 5))."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(1, 10, size)
    p = 1 / (1 + np.exp(1.2 * (x - 5)))
    y = rng.binomial(samples, p) / samples
    return x, y, np.full(size, samples), p


@pytest.mark.parametrize("method", ["isotonic", "logistic"])
def test_calibration_recovers_a_known_monotone_relation(method):
    x, y, n, _ = synthetic()
    cal = fit_calibration(x, y, n, method=method)
    grid = np.linspace(1, 10, 19)
    pred = cal.predict(grid)
    truth = 1 / (1 + np.exp(1.2 * (grid - 5)))
    assert np.all(np.diff(pred) <= 1e-12)  # monotone, in the data's direction
    assert np.max(np.abs(pred - truth)) < 0.2
    assert np.all((pred >= 0) & (pred <= 1))
    r = cal.report
    assert r["method"] == method and r["n_problems"] == 120 and r["n_samples"] == 1920
    assert r["cv_folds"] == 5 and r["cv_mae"] < 0.1 < r["baseline_mae"]  # far better than the mean
    assert r["mae"] <= r["cv_mae"] + 0.02
    assert r["spearman"] < -0.8


def test_logistic_slope_has_the_sign_of_the_relation():
    x, y, n, _ = synthetic(seed=1)
    cal = fit_calibration(x, y, n, method="logistic")
    assert cal.model.coef_[0][0] == pytest.approx(-1.2, abs=0.3)


def test_calibration_refuses_degenerate_input():
    with pytest.raises(CalibrationError, match="two distinct scores"):
        fit_calibration([3, 3, 3], [0.1, 0.2, 0.3])
    with pytest.raises(CalibrationError, match="both correct and incorrect"):
        fit_calibration([1, 2, 3], [0.0, 0.0, 0.0], method="logistic")
    with pytest.raises(CalibrationError, match="unknown calibration"):
        fit_calibration([1, 2], [0.1, 0.2], method="spline")
    small = fit_calibration([1, 2, 3], [0.9, 0.5, 0.1])
    assert small.report["cv_mae"] is None  # too few problems for cross-validation
