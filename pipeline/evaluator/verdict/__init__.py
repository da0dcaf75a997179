"""Verdict logic on the host: limits and verdict rules per run (`judge.py`), the comparison
cascade (`compare.py`), checker programs (`checkers.py`), C++ compilation and its cache
(`compile.py`) and the pinned testlib.h (`testlib.py`). Programs themselves only ever run in a
box (`sandbox/`, `inside/`)."""
