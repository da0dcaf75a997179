"""The pass-rate band (METHOD.md section 1): drop too easy, keep unsolved but mark it."""

from __future__ import annotations

from dataclasses import dataclass

IN_BAND = "in_band"
UNSOLVED = "unsolved"
TOO_EASY = "too_easy"
TOO_HARD = "too_hard"
PREDICTED_IN_BAND = "predicted_in_band"
PREDICTED_TOO_EASY = "predicted_too_easy"
PREDICTED_TOO_HARD = "predicted_too_hard"
UNMEASURED = "unmeasured"


@dataclass
class Band:
    min_pass_rate: float = 0.0
    max_pass_rate: float = 0.75

    def __post_init__(self) -> None:
        if not 0.0 <= self.min_pass_rate <= self.max_pass_rate <= 1.0:
            raise ValueError(f"need 0 <= min_pass_rate <= max_pass_rate <= 1, got "
                             f"{self.min_pass_rate}, {self.max_pass_rate}")

    def measured(self, pass_rate: float) -> tuple[bool, str]:
        """(keep, reason) for a measured pass rate. Zero is kept as `unsolved` unless the band's
        lower edge is above zero."""
        if pass_rate > self.max_pass_rate:
            return False, TOO_EASY
        if pass_rate < self.min_pass_rate:
            return False, TOO_HARD
        return True, UNSOLVED if pass_rate == 0 else IN_BAND

    def predicted(self, pass_rate: float) -> tuple[bool, str]:
        """(keep, reason) for a calibrated predicted pass rate (problems without rollouts)."""
        if pass_rate > self.max_pass_rate:
            return False, PREDICTED_TOO_EASY
        if pass_rate < self.min_pass_rate:
            return False, PREDICTED_TOO_HARD
        return True, PREDICTED_IN_BAND
