"""CPU numerics on one code path, whatever x86-64 CPU runs them (issue 37).

torch picks its CPU kernels by the instruction sets the CPU has (ATen's AVX2 / AVX-512 kernels,
MKL's and oneDNN's branches), and each sums in its own order: the warm start's weights, hence the
policy's samples, the rollouts, the bands and the release, differ in their last bits from one CPU
model to the next. Measured here (AMD EPYC, AVX2; 20 warm-start steps on the seed): the weights'
digest changes with ATen's capability alone and with MKL's branch alone. With ATen's baseline
kernels (`ATEN_CPU_CAPABILITY=default`), MKL's conditional numerical reproducibility
(`MKL_CBWR=COMPATIBLE`, the branch every x86-64 CPU runs) and oneDNN held to SSE4.1, every CPU runs
the same instructions in the same order. Set before torch loads (the CLI does it first); a value
the user set wins. The cost on the tiny default run is within noise; real models train on GPUs,
which these settings do not touch.
"""

from __future__ import annotations

import os

PINNED = {"ATEN_CPU_CAPABILITY": "default", "MKL_CBWR": "COMPATIBLE", "ONEDNN_MAX_CPU_ISA": "SSE41"}


def pin_cpu_numerics() -> None:
    for name, value in PINNED.items():
        os.environ.setdefault(name, value)
