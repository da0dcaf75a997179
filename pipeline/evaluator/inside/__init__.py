"""What runs inside a box: the judge process (`harness.py`), the fork server every program is
forked from (`harness_zygote.py`) and the programs' own start-up (`harness_child.py`).

Standard library only, and the only folder bound into a box. The modules import each other as
top-level siblings (the judge puts this folder first on its path), so the host imports just the
leaf modules that import no sibling (`harness_types`, `harness_state`), for tests. The protocol
between the parent process and the judge, and between the judge and the fork server, is in
PROTOCOL.md beside this file.
"""
