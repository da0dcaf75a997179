"""Stand-ins for packages the CPU machine cannot run (see README.md). A test module makes its fixture:

    @pytest.fixture
    def stand_in_vllm(monkeypatch):
        yield from use_stand_in_vllm(monkeypatch)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

STAND_IN = Path(__file__).resolve().parent


def _forget_vllm() -> None:
    for name in [m for m in sys.modules if m == "vllm" or m.startswith("vllm.")]:
        del sys.modules[name]


def use_stand_in_vllm(monkeypatch):
    """`import vllm` gives the stand-in, here and in processes started from here (PYTHONPATH)."""
    _forget_vllm()
    monkeypatch.syspath_prepend(str(STAND_IN))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(STAND_IN), os.environ.get("PYTHONPATH")) if p))
    import vllm

    assert Path(vllm.__file__).parent.parent == STAND_IN, vllm.__file__
    vllm.reset()
    yield vllm
    _forget_vllm()
