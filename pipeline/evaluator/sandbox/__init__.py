"""The sandbox around a judge process: how a box is launched (`launch.py`: bubblewrap, the unshare
fallback, the explicit `none`), its lifecycle and the parent's side of the judge's protocol
(`box.py`), its control group (`cgroups.py`) and its files (`workspace.py`: the pool slot's
boxes and the host-side input store). Nothing here decides a verdict (`verdict/`)."""
