"""`MicroCoderGRPOTrainer`: TRL's GRPOTrainer plus the three MicroCoder-GRPO changes.

The override surface is two methods:
- `_calculate_rewards`: unchanged, it only remembers this batch's completion token ids and rewards;
- `_generate_and_score_completions`: before generation, the temperature controller may change the
  temperature (a generation boundary); after TRL computed the group-normalised advantages, the
  conditional truncation mask zeroes some of them (masked samples stay in the group mean and std,
  as METHOD.md's formula says), and per-generation metrics are logged. With online difficulty
  filtering on (`dynamic_sampling`, difficulty pools: `training/pools.py`), it calls TRL's own
  generation and scoring once per round instead, drops groups whose rewards are all equal,
  generates more up to the cap and merges the kept groups into one batch (`_online_generation`).

With `truncation_mask_rho=0`, no probe, no schedule and no guard, nothing here touches the
advantages, the temperature or any random stream TRL uses, so training equals plain GRPOTrainer
(tests/test_training_trainer.py proves it on the tiny model).

Checkpoints: every TRL checkpoint also holds this trainer's own state, one file per process
(`microcoder_state_<rank>.json`: the mask's random stream, the temperature controller, the probe's
result, the generation log, the reward's status counts, the groups' learning-signal outcomes, the
difficulty pools and their draw stream), written after TRL's files and read back on resume
(`train(resume_from_checkpoint=...)`), so a resumed run continues exactly as an uninterrupted one
would (tests/test_training_resume.py).
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from accelerate.utils import gather_object
from trl import GRPOTrainer

from microcoder.training.config import MicroCoderGRPOConfig
from microcoder.training.diversity import batch_diversity
from microcoder.training.learning_signal import (
    group_outcomes,
    no_signal_frac,
    no_signal_message,
    streak_without_signal,
    without_signal,
)
from microcoder.training.masking import conditional_truncation_mask
from microcoder.training.pools import DifficultyPools, merge_batches, select_rows, varied_groups
from microcoder.training.temperature import (
    TemperatureController,
    pick_probe_temperature,
    set_temperature,
    temperature_cells,
)

log = logging.getLogger(__name__)

# Columns of `generation_log` (one row per generation step), in order: also the curves.csv header.
GENERATION_FIELDS = (
    "step", "generation", "temperature", "reward_mean", "pass_rate", "fail_rate", "no_code_rate", "error_rate",
    "mean_length", "max_length", "truncated_frac", "masked_frac", "mask_candidates_frac", "diversity",
    "deadline_frac", "no_signal_frac", "filtered_frac", "extra_rounds", "unfilled_frac", "easy_pool", "hard_pool",
)
# The online-filtering columns (NaN when that part is off).
ONLINE_FIELDS = ("filtered_frac", "extra_rounds", "unfilled_frac", "easy_pool", "hard_pool")
# Columns a checkpoint written before they existed lacks (NaN on resume: not known).
LATER_FIELDS = (*ONLINE_FIELDS, "no_signal_frac")
# This trainer's own state in each TRL checkpoint folder, one file per process.
STATE_FILE = "microcoder_state_{rank}.json"
STATE_VERSION = 1


class UnjudgedSamplesError(RuntimeError):
    """Too many samples of a generation were left unjudged at the reward batch deadline."""


class MicroCoderGRPOTrainer(GRPOTrainer):
    """GRPOTrainer with conditional truncation masking and diversity-driven staged temperature.

    Per-sample statuses come from the first reward function with a `last_statuses` attribute
    (`microcoder.training.rewards.EvaluatorReward`); `truncation_mask_rho > 0` requires one.
    `generation_log` holds one row per generation step (GENERATION_FIELDS).
    """

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        if not isinstance(self.args, MicroCoderGRPOConfig):
            raise TypeError(f"MicroCoderGRPOTrainer needs a MicroCoderGRPOConfig, got {type(self.args).__name__}")
        cfg = self.args
        self._status_source = next((f for f in self.reward_funcs if hasattr(f, "last_statuses")), None)
        if cfg.truncation_mask_rho > 0 and self._status_source is None:
            raise ValueError("truncation_mask_rho > 0 needs a reward function that reports per-sample statuses "
                             "(a `last_statuses` attribute, e.g. microcoder.training.rewards.EvaluatorReward)")
        # Python's own generator: the mask's draws never move torch's or numpy's random streams.
        self._mask_rng = random.Random(f"microcoder-mask-{cfg.seed}-{self.accelerator.process_index}")
        self._temperature_cells = temperature_cells(self)
        self.temperature_controller = TemperatureController(
            initial=cfg.temperature, schedule=cfg.schedule(), floor=cfg.diversity_floor,
            patience=cfg.diversity_patience,
        )
        if self.temperature_controller.temperature_at(0) != self.temperature:
            # A schedule that starts at step 0 sets the starting temperature: not a change to log.
            set_temperature(self, self.temperature_controller.temperature_at(0))
        self._needs_probe = bool(cfg.temperature_probe)
        self._last_completion_ids: list[list[int]] | None = None
        self.generation_log: list[dict[str, float]] = []
        self.probe_results: dict[float, float] = {}
        self.temperature_changes: list[dict[str, Any]] = []
        self.status_counts: Counter[str] = Counter()  # gathered over every process and generation
        self.group_outcomes: Counter[str] = Counter()  # learning_signal's group outcomes, every generation
        self.stop_reason: str | None = None  # why training stopped before max_steps (None: it did not)
        self._last_rewards_per_func: torch.Tensor | None = None
        self.pools = DifficultyPools(cfg.easy_threshold, cfg.hard_threshold, cfg.easy_fraction, cfg.hard_fraction)
        self._online = cfg.dynamic_sampling or self.pools.enabled
        # Draws of replacement / extra prompts and of pool readmissions: their own stream, like the mask's.
        self._online_rng = random.Random(f"microcoder-online-{cfg.seed}-{self.accelerator.process_index}")
        self._problem_ids = self._dataset_problem_ids() if self._online else None

    # --- checkpoints -----------------------------------------------------------------------------
    def _save_checkpoint(self, model, trial):
        super()._save_checkpoint(model, trial)  # TRL's files first: ours marks the folder complete
        folder = Path(self._get_output_dir(trial=trial)) / f"checkpoint-{self.state.global_step}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / STATE_FILE.format(rank=self.accelerator.process_index)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.microcoder_state()), encoding="utf-8")
        os.replace(tmp, path)

    def _load_optimizer_and_scheduler(self, checkpoint):
        super()._load_optimizer_and_scheduler(checkpoint)
        if checkpoint is not None:  # resuming: TRL calls this once, before the first step
            path = Path(checkpoint) / STATE_FILE.format(rank=self.accelerator.process_index)
            if not path.exists():
                raise FileNotFoundError(f"{path} is missing: {checkpoint} was not written by MicroCoderGRPOTrainer "
                                        f"with {self.accelerator.num_processes} processes, or its save was cut short")
            self.load_microcoder_state(json.loads(path.read_text(encoding="utf-8")))

    def microcoder_state(self) -> dict[str, Any]:
        """Everything of this trainer's own that a resumed run needs to continue exactly."""
        version, internal, gauss = self._mask_rng.getstate()
        c = self.temperature_controller
        reward_stats = getattr(self._status_source, "stats", None)
        return {
            "version": STATE_VERSION,
            "global_step": self.state.global_step,
            "mask_rng": [version, list(internal), gauss],
            "temperature": self.temperature,
            "controller": {"schedule": [list(x) for x in c.schedule], "forced_stage": c.forced_stage,
                           "low_streak": c.low_streak},
            "needs_probe": self._needs_probe,
            "probe_results": [[t, d] for t, d in self.probe_results.items()],
            "temperature_changes": self.temperature_changes,
            "generation_log": self.generation_log,
            "status_counts": dict(self.status_counts),
            "group_outcomes": dict(self.group_outcomes),
            "reward_stats": dict(reward_stats) if isinstance(reward_stats, Counter) else None,
            "online_rng": _rng_state(self._online_rng),
            "pools": self.pools.state(),
        }

    def load_microcoder_state(self, state: dict[str, Any]) -> None:
        if state.get("version") != STATE_VERSION:
            raise ValueError(f"unsupported microcoder trainer state version {state.get('version')!r}")
        version, internal, gauss = state["mask_rng"]
        self._mask_rng.setstate((version, tuple(internal), gauss))
        c = self.temperature_controller
        c.schedule = [(int(s), float(t)) for s, t in state["controller"]["schedule"]]
        c.forced_stage = state["controller"]["forced_stage"]
        c.low_streak = state["controller"]["low_streak"]
        self._needs_probe = state["needs_probe"]
        self.probe_results = {float(t): d for t, d in state["probe_results"]}
        self.temperature_changes = list(state["temperature_changes"])
        # Rows from before online filtering existed lack its columns: NaN, as when it is off.
        self.generation_log = [{**dict.fromkeys(LATER_FIELDS, math.nan), **row} for row in state["generation_log"]]
        if "online_rng" in state:
            version, internal, gauss = state["online_rng"]
            self._online_rng.setstate((version, tuple(internal), gauss))
        self.pools.load_state(state.get("pools", {}))
        self.status_counts = Counter(state["status_counts"])
        self.group_outcomes = Counter(state.get("group_outcomes", {}))
        reward_stats = getattr(self._status_source, "stats", None)
        if isinstance(reward_stats, Counter) and state.get("reward_stats") is not None:
            reward_stats.clear()
            reward_stats.update(state["reward_stats"])
        set_temperature(self, state["temperature"])

    # --- TRL hooks -------------------------------------------------------------------------------
    def _calculate_rewards(self, inputs, prompts, completions, completion_ids_list):
        self._last_completion_ids = completion_ids_list
        rewards = super()._calculate_rewards(inputs, prompts, completions, completion_ids_list)
        self._last_rewards_per_func = rewards  # every process's rows (TRL gathers them)
        return rewards

    def _generate_and_score_completions(self, inputs):
        training = self.model.training
        if training:
            self._before_generation(inputs)
        if training and self._online:
            return self._online_generation(inputs)
        output = super()._generate_and_score_completions(inputs)
        if training:
            self._after_scoring(output)
        return output

    # --- temperature -----------------------------------------------------------------------------
    def _before_generation(self, inputs: list[dict[str, Any]]) -> None:
        if self._needs_probe:
            self._needs_probe = False
            self._probe_temperature(inputs)
        step = self.state.global_step
        t = self.temperature_controller.temperature_at(step)
        if t != self.temperature:
            reason = self.temperature_controller.reason_at(step)
            log.info("step %d: temperature %.3g -> %.3g (%s)", step, self.temperature, t, reason)
            self.temperature_changes.append({"step": step, "from": self.temperature, "to": t, "reason": reason})
            set_temperature(self, t)

    def _probe_temperature(self, inputs: list[dict[str, Any]]) -> None:
        """Sample the first generation batch at each candidate temperature; keep the lowest whose
        diversity reaches the target. The probe's generations are not trained on or logged."""
        cfg = self.args
        prompts = [x["prompt"] for x in inputs]
        saved_metrics = {k: list(v) for k, v in self._metrics["train"].items()}
        saved_tokens = self.state.num_input_tokens_seen
        try:
            for t in sorted(cfg.temperature_probe):
                set_temperature(self, t)
                completion_ids = self._generate(prompts)[1]
                all_ids = gather_object(completion_ids)
                self.probe_results[t] = batch_diversity(all_ids, self.num_generations, cfg.diversity_ngram)
        finally:
            self._metrics["train"].clear()
            self._metrics["train"].update(saved_metrics)
            self.state.num_input_tokens_seen = saved_tokens
        chosen, reason = pick_probe_temperature(self.probe_results, cfg.diversity_target)
        log.info("temperature probe %s -> %.3g (%s)",
                 {t: round(d, 3) for t, d in self.probe_results.items()}, chosen, reason)
        self.temperature_controller.set_initial(chosen)
        self.temperature_changes.append({"step": self.state.global_step, "from": cfg.temperature, "to": chosen,
                                         "reason": f"probe: {reason}"})
        set_temperature(self, self.temperature_controller.temperature_at(self.state.global_step))

    # --- masking and metrics ---------------------------------------------------------------------
    def _after_scoring(self, output: dict[str, Any]) -> None:
        self._log_generation(*self._apply_mask(output), rewards=self._combined_rewards(self._last_rewards_per_func))

    def _apply_mask(self, output: dict[str, Any]) -> tuple:
        """The conditional truncation mask on this batch's advantages; returns (ids, statuses, mask,
        candidates, truncated) for the generation log."""
        cfg = self.args
        ids = self._last_completion_ids
        if ids is None or len(ids) != len(output["advantages"]):
            raise RuntimeError("completion ids of this batch were not captured (TRL internals changed?)")
        statuses = self._statuses(len(ids))
        device = output["advantages"].device
        if statuses is not None:
            tm = conditional_truncation_mask(
                ids, statuses, self.max_completion_length, cfg.truncation_mask_rho, cfg.repetition_window,
                self._mask_rng, self.eos_token_ids,
            )
            mask = torch.tensor(tm.mask, dtype=torch.bool, device=device)
            if mask.any():
                output["advantages"] = output["advantages"].masked_fill(mask, 0.0)
            candidates = torch.tensor(tm.candidates, dtype=torch.bool, device=device)
            truncated = torch.tensor(tm.truncated, dtype=torch.bool, device=device)
        else:
            mask = candidates = torch.zeros(len(ids), dtype=torch.bool, device=device)
            eos = set(self.eos_token_ids)
            truncated = torch.tensor([len(x) >= self.max_completion_length and not (x and x[-1] in eos) for x in ids],
                                     dtype=torch.bool, device=device)
        if self.mask_truncated_completions:  # DAPO-style: TRL drops every truncated sample from the loss
            mask = truncated
        return ids, statuses, mask, candidates, truncated

    def _statuses(self, n: int) -> list[str] | None:
        if self._status_source is None:
            return None
        statuses = list(self._status_source.last_statuses)
        if len(statuses) != n:
            raise RuntimeError(f"the reward function reported {len(statuses)} statuses for {n} samples")
        return statuses

    def _log_generation(self, ids, statuses, mask, candidates, truncated, *, rewards: list[float],
                        online: dict[str, float] | None = None, reward: float | None = None) -> None:
        """One generation_log row. `rewards`: every process's rewards of the batch trained on, in
        groups (NaN: unjudged); `online`: the online-filtering columns and `reward` the batch's mean
        reward (online filtering: TRL's logged advantages were masked per round already)."""
        gather = self.accelerator.gather
        mask_all, cand_all, trunc_all = gather(mask), gather(candidates), gather(truncated)
        lengths = gather(torch.tensor([len(x) for x in ids], device=mask.device, dtype=torch.float32))
        all_ids = gather_object(ids)
        diversity = batch_diversity(all_ids, self.num_generations, self.args.diversity_ngram)
        outcomes = group_outcomes(rewards, self.num_generations, self.args.reward_pass,
                                  max(self.args.reward_fail, self.args.reward_no_code))
        rates = dict.fromkeys(("pass", "fail", "no_code", "error", "deadline"), math.nan)
        if statuses is not None:
            all_statuses = gather_object(statuses)
            rates = {s: sum(x == s for x in all_statuses) / len(all_statuses) for s in rates}
            self.status_counts.update(all_statuses)
        if online is None:
            if mask_all.any():  # keep TRL's completions table consistent with the advantages trained on
                self._mask_logged_advantages(mask_all)
            reward = self._metrics["train"]["reward"][-1] if self._metrics["train"]["reward"] else math.nan
        row = {
            "step": self.state.global_step,
            "generation": len(self.generation_log),
            "temperature": self.temperature,
            "reward_mean": reward,
            "pass_rate": rates["pass"],
            "fail_rate": rates["fail"],
            "no_code_rate": rates["no_code"],
            "error_rate": rates["error"],
            "mean_length": lengths.mean().item(),
            "max_length": lengths.max().item(),
            "truncated_frac": trunc_all.float().mean().item(),
            "masked_frac": mask_all.float().mean().item(),
            "mask_candidates_frac": cand_all.float().mean().item(),
            "diversity": diversity,
            "deadline_frac": rates["deadline"],
            "no_signal_frac": no_signal_frac(outcomes),
            **dict.fromkeys(ONLINE_FIELDS, math.nan),
            **(online or {}),
        }
        self.generation_log.append(row)
        for key in ("temperature", "pass_rate", "truncated_frac", "masked_frac", "mask_candidates_frac",
                    "diversity", "no_code_rate", "error_rate", "deadline_frac", "no_signal_frac", *ONLINE_FIELDS):
            if not math.isnan(row[key]):
                self._metrics["train"][f"microcoder/{key}"].append(row[key])
        self.temperature_controller.observe(self.state.global_step, diversity)
        self._check_deadline(row["deadline_frac"])
        self.group_outcomes.update(outcomes)
        self._check_signal(outcomes)

    def _check_deadline(self, frac: float) -> None:
        """Warn, or stop, when the judge left too many samples unjudged (every rank sees the gathered
        share, so every rank stops together)."""
        if math.isnan(frac) or frac <= self.args.reward_deadline_warn_frac:
            return
        message = (f"step {self.state.global_step}: {100 * frac:.1f}% of the samples were not judged before the "
                   f"{self.args.reward_deadline_s:g} s reward deadline (reward None, no learning signal); raise "
                   "evaluator.workers or reward_deadline_s")
        if frac > self.args.reward_deadline_stop_frac:
            raise UnjudgedSamplesError(f"{message}. Stopping: over reward_deadline_stop_frac="
                                       f"{self.args.reward_deadline_stop_frac:g} (resume from the last checkpoint "
                                       "after fixing the judge)")
        log.warning(message)

    def _check_signal(self, outcomes: list[str]) -> None:
        """Warn at the run's first generation step without a learning signal (the rest are counted in
        the log, not repeated), and stop cleanly after `stop_without_signal` of them in a row. Every
        rank sees the same gathered rewards, so every rank stops at the same step."""
        if not without_signal(self.generation_log[-1]):
            return
        step = self.state.global_step
        if sum(map(without_signal, self.generation_log)) == 1 and self.accelerator.is_main_process:
            log.warning(no_signal_message(step, outcomes))
        limit, streak = self.args.stop_without_signal, streak_without_signal(self.generation_log)
        if limit is not None and streak >= limit and self.stop_reason is None and not self._last_generation():
            first = int(self.generation_log[-streak]["step"])
            self.stop_reason = (f"no learning signal in {streak} generation steps in a row (steps {first}-{step}; "
                                f"grpo.stop_without_signal={limit})")
            log.warning("step %d: stopping training: %s", step, self.stop_reason)
            # The Trainer's loop ends after this micro-batch, then saves and returns as at max_steps.
            self.control.should_training_stop = True

    def _last_generation(self) -> bool:
        """Whether this generation feeds the run's last optimizer steps (stopping would change nothing)."""
        cfg = self.args
        micro = (cfg.steps_per_generation or cfg.gradient_accumulation_steps) * cfg.num_iterations
        return self.state.global_step + max(1, micro // cfg.gradient_accumulation_steps) >= self.state.max_steps

    def _mask_logged_advantages(self, mask_all: torch.Tensor) -> None:
        logged = self._logs["advantages"]
        n = len(mask_all)
        if len(logged) < n:
            return
        values = list(logged)
        tail = [0.0 if m else a for a, m in zip(values[-n:], mask_all.tolist(), strict=True)]
        logged.clear()
        logged.extend(values[:-n] + tail)

    # --- online difficulty filtering (dynamic sampling, difficulty pools) ----------------------------
    def _dataset_problem_ids(self) -> list[str] | None:
        data = self.train_dataset
        if not hasattr(data, "__getitem__") or not hasattr(data, "__len__"):
            raise ValueError("dynamic_sampling / difficulty pools draw extra prompts by index: they need a "
                             "map-style train_dataset, not an iterable one")
        names = getattr(data, "column_names", None) or []
        if "problem_id" in names:
            return [str(x) for x in data["problem_id"]]
        if self.pools.enabled:
            raise ValueError("difficulty pools (easy_threshold / hard_threshold) need a `problem_id` column in "
                             "train_dataset to know which problem a group belongs to")
        return None

    def _online_generation(self, inputs: list[dict[str, Any]]) -> dict[str, Any]:
        """Generate and score until the batch holds `len(inputs) / G` groups with a learning signal
        (dynamic sampling; at most dynamic_sampling_max_rounds extra rounds, then the missing groups
        are filled with dropped ones masked out of the loss), with pooled problems readmitted only
        at their pool's fraction. Every process runs the same number of rounds (generation and the
        gathers are collective)."""
        cfg, group = self.args, self.num_generations
        need = len(inputs) // group
        round_inputs = self._admit(inputs)
        taken: list[tuple[dict[str, Any], tuple, list[float]]] = []  # (output, log info, rewards) per part
        # the first round and its dropped groups: fillers for a short batch
        first: tuple[dict[str, Any], tuple, list[float], list[int]] | None = None
        have = generated = dropped = extra_rounds = 0
        while True:
            output, info, rewards = self._score_round(round_inputs)
            self._observe_pools(round_inputs, info[1], rewards)
            varied = varied_groups(rewards, group) if cfg.dynamic_sampling else [True] * need
            generated += len(varied)
            dropped += varied.count(False)
            keep = [g for g, v in enumerate(varied) if v][:need - have]
            have += len(keep)
            taken.append(_group_rows(output, info, rewards, keep, group))
            if first is None:
                first = (output, info, rewards, [g for g, v in enumerate(varied) if not v])
            missing = self.accelerator.gather(torch.tensor([need - have], device=self.accelerator.device))
            if not cfg.dynamic_sampling or missing.max().item() == 0 or extra_rounds >= cfg.dynamic_sampling_max_rounds:
                break
            extra_rounds += 1
            round_inputs = self._admit(self._draw_inputs(need))
        short = need - have
        if short:  # the first round had `need` groups and kept at most `need - short`: enough dropped ones
            taken.append(_masked_out(_group_rows(*first[:3], first[3][:short], group)))
        output = merge_batches([part[0] for part in taken if len(part[2])], self._tokenizer.pad_token_id)
        loss_mask = output["completion_mask"] * output["tool_mask"] if "tool_mask" in output else output["completion_mask"]
        output["num_items_in_batch"] = self.accelerator.gather(loss_mask.sum()).sum()
        self._log_online(taken, generated, dropped, extra_rounds, short, need)
        return output

    def _score_round(self, inputs: list[dict[str, Any]]) -> tuple[dict[str, Any], tuple, list[float]]:
        """One TRL generation + scoring of `inputs`, the mask applied; (batch, log info, local rewards)."""
        output = GRPOTrainer._generate_and_score_completions(self, inputs)
        info = self._apply_mask(output)
        mask_all = self.accelerator.gather(info[2])
        if mask_all.any():  # TRL logged this round's advantages just now: the tail of its table
            self._mask_logged_advantages(mask_all)
        return output, info, self._local_rewards(len(inputs))

    def _local_rewards(self, n: int) -> list[float]:
        """This process's rows of the last scored batch, reward functions combined as TRL does (NaN:
        every function returned None)."""
        start = self.accelerator.process_index * n
        return self._combined_rewards(self._last_rewards_per_func[start:start + n])

    def _combined_rewards(self, per_func: torch.Tensor) -> list[float]:
        """Rows of TRL's rewards_per_func, reward functions combined as TRL does (NaN: every function
        returned None)."""
        combined = (per_func * self.reward_weights.to(per_func.device).unsqueeze(0)).nansum(dim=1)
        combined[torch.isnan(per_func).all(dim=1)] = math.nan
        return combined.tolist()

    def _observe_pools(self, inputs: list[dict[str, Any]], statuses: list[str] | None, rewards: list[float]) -> None:
        """Move every generated group's problem by its pass rate (the same moves on every process)."""
        if not self.pools.enabled:
            return
        group = self.num_generations
        rates = []
        for g in range(len(inputs) // group):
            rows = range(g * group, (g + 1) * group)
            if statuses is not None:
                judged = [statuses[i] for i in rows if statuses[i] != "deadline"]
                passed = [s == "pass" for s in judged]
            else:
                judged = [rewards[i] for i in rows if not math.isnan(rewards[i])]
                passed = [r >= self.args.reward_pass for r in judged]
            rates.append((str(inputs[g * group]["problem_id"]), sum(passed) / len(passed) if passed else math.nan))
        for problem_id, rate in gather_object(rates):
            self.pools.observe(problem_id, rate)

    def _admit(self, inputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The groups of `inputs`, each pooled problem replaced (unless readmitted) by a problem outside
        the pools; when every problem is pooled, the sampled one stays."""
        if not self.pools.enabled:
            return inputs
        group, out = self.num_generations, []
        for g in range(0, len(inputs), group):
            rows = inputs[g:g + group]
            if not self.pools.admits(str(rows[0]["problem_id"]), self._online_rng):
                free = [i for i, p in enumerate(self._problem_ids) if not self.pools.pooled(p)]
                if free:
                    rows = [self.train_dataset[self._online_rng.choice(free)]] * group
            out.extend(dict(r) for r in rows)
        return out

    def _draw_inputs(self, groups: int) -> list[dict[str, Any]]:
        """`groups` prompts drawn from the whole dataset (this process's stream), each repeated G times."""
        n = len(self.train_dataset)
        rows = [self.train_dataset[self._online_rng.randrange(n)] for _ in range(groups)]
        return [dict(row) for row in rows for _ in range(self.num_generations)]

    def _log_online(self, taken, generated: int, dropped: int, extra_rounds: int, short: int, need: int) -> None:
        parts = [p for p in taken if len(p[2])]
        ids = [x for p in parts for x in p[1][0]]
        statuses = None if parts[0][1][1] is None else [x for p in parts for x in p[1][1]]
        mask, candidates, truncated = (torch.cat([p[1][k] for p in parts]) for k in (2, 3, 4))
        counts = self.accelerator.gather(torch.tensor([generated, dropped, short, need], device=mask.device))
        generated, dropped, short, need = counts.view(-1, 4).sum(dim=0).tolist()
        rewards = self.accelerator.gather(torch.tensor([r for p in parts for r in p[2]], device=mask.device))
        reward = torch.nanmean(rewards).item()
        on = self.args.dynamic_sampling
        online = {
            "filtered_frac": dropped / generated if on else math.nan,
            "extra_rounds": float(extra_rounds) if on else math.nan,
            "unfilled_frac": short / need if on else math.nan,
            "easy_pool": float(len(self.pools.easy)) if self.pools.easy_threshold is not None else math.nan,
            "hard_pool": float(len(self.pools.hard)) if self.pools.hard_threshold is not None else math.nan,
        }
        if short:
            log.info("step %d: dynamic sampling left %d of %d groups unfilled after %d extra rounds (their samples "
                     "are masked out of the loss)", self.state.global_step, short, need, extra_rounds)
        self._log_generation(ids, statuses, mask, candidates, truncated, rewards=rewards.tolist(), online=online,
                             reward=reward)


def _rng_state(rng: random.Random) -> list[Any]:
    version, internal, gauss = rng.getstate()
    return [version, list(internal), gauss]


def _group_rows(output: dict[str, Any], info: tuple, rewards: list[float], groups: list[int],
                size: int) -> tuple[dict[str, Any], tuple, list[float]]:
    """The rows of `groups` (indices of groups of `size`) of a scored batch, its log info and rewards."""
    rows = [g * size + i for g in groups for i in range(size)]
    ids, statuses, mask, candidates, truncated = info
    index = torch.tensor(rows, dtype=torch.long, device=mask.device)
    picked = (
        [ids[r] for r in rows], None if statuses is None else [statuses[r] for r in rows],
        mask[index], candidates[index], truncated[index],
    )
    return select_rows(output, rows), picked, [rewards[r] for r in rows]


def _masked_out(part: tuple) -> tuple:
    """Filler groups: no learning signal (zero-std rewards: zero advantage) and out of the loss's
    token count, so they neither move the policy nor dilute the groups trained on."""
    output = dict(part[0])
    output["completion_mask"] = torch.zeros_like(output["completion_mask"])
    output["advantages"] = torch.zeros_like(output["advantages"])
    return output, part[1], part[2]
