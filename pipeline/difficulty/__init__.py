"""Difficulty: pass rates from rollouts, the pass-rate band, LLM difficulty prediction and its
calibration against measured pass rates, and the filter stage that combines them."""
