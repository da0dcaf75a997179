"""CPU numerics on one code path, whatever x86-64 CPU runs them (issue 37).

torch picks its CPU kernels by the instruction sets the CPU has (ATen's AVX2 / AVX-512 kernels,
MKL's and oneDNN's branches), and each sums in its own order: the warm start's weights, hence the
policy's samples, the rollouts, the bands and the release, differ in their last bits from one CPU
model to the next. Measured here (AMD EPYC, AVX2; 20 warm-start steps on the seed): the weights'
digest changes with ATen's capability alone and with MKL's branch alone. Held to AVX2 (ATen's
AVX2 kernels, MKL's conditional numerical reproducibility on its AVX2 branch, strict; oneDNN up to
AVX2), every x86-64 CPU with AVX2 (Intel since 2013, every AMD Zen) runs the same instructions in
the same order: an AVX-512 machine gives this one's weights. The baseline branches
(`ATEN_CPU_CAPABILITY=default`, `MKL_CBWR=COMPATIBLE`) would cover older CPUs too, at 2.8x the
time of a training step here; AVX2 costs within noise (0.19 vs 0.17 s a step) and gives the
digests of an unpinned run on this machine. Set before torch loads (the CLI does it first); a
value the user set wins. Real models train on GPUs, which these settings do not touch.
"""

from __future__ import annotations

import os

PINNED = {"ATEN_CPU_CAPABILITY": "avx2", "MKL_CBWR": "AVX2,STRICT", "ONEDNN_MAX_CPU_ISA": "AVX2"}


def pin_cpu_numerics() -> None:
    for name, value in PINNED.items():
        os.environ.setdefault(name, value)
