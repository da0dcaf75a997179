"""Every `microcoder` command runs torch's CPU numerics on one code path (pipeline/numerics.py):
the same weights on any x86-64 CPU model. A value the user set wins."""

from __future__ import annotations

import os
import subprocess
import sys

from microcoder.pipeline.numerics import PINNED

PROBE = """
import json, os, sys
from microcoder.pipeline.cli import app
sys.argv = ["microcoder", "stats", "--help"]
try:
    app()
except SystemExit:
    pass
import torch
print(json.dumps({**{k: os.environ.get(k) for k in %r}, "capability": torch.backends.cpu.get_cpu_capability()}))
"""


def probe(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE % (list(PINNED),)], env=env, capture_output=True, text=True,
                         check=True).stdout
    import json

    return json.loads(out.splitlines()[-1])


def test_the_cli_pins_cpu_numerics_before_torch_loads_and_a_users_value_wins():
    clean = {k: v for k, v in os.environ.items() if k not in PINNED}
    got = probe(clean)
    assert {k: got[k] for k in PINNED} == PINNED
    assert got["capability"] in ("AVX2", "DEFAULT")  # never AVX-512 kernels (DEFAULT: a CPU without AVX2)
    mine = probe({**clean, "MKL_CBWR": "AUTO"})
    assert mine["MKL_CBWR"] == "AUTO" and mine["ATEN_CPU_CAPABILITY"] == "avx2"
