"""APPS in its original release layout (the `APPS.tar.gz` folders), as rows for the `apps` adapter.

    APPS/train/0000/question.txt        the statement
                    input_output.json   {"inputs": [...], "outputs": [...], "fn_name"?: "..."}
                    solutions.json      ["code", ...]
                    metadata.json       {"difficulty": "interview", "url": "..."}
                    starter_code.py     (call-based problems only)

`path` may be one problem folder, a split folder (`APPS/test`) or the release root (`APPS`). Each
problem folder becomes one row shaped like codeparrot/apps' (`problem_id`, `question`, `solutions`,
`input_output`, `difficulty`, `url`, `starter_code`, plus `split` from the folder name), so the
Hub adapter maps both the same way. A folder without `input_output.json` (some train problems)
becomes a row without tests and is rejected there.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

SPLITS = ("train", "test")
MARKER = "question.txt"


def is_folder_layout(path: Path) -> bool:
    """A problem folder, or a folder whose problem folders (at most two levels down) hold question.txt."""
    if not path.is_dir():
        return False
    if (path / MARKER).is_file():
        return True
    return any(path.glob(f"*/{MARKER}")) or any(path.glob(f"*/*/{MARKER}"))


def problem_folders(root: Path) -> list[Path]:
    if (root / MARKER).is_file():
        return [root]
    found = sorted(p.parent for p in root.glob(f"*/{MARKER}"))
    return found or sorted(p.parent for p in root.glob(f"*/*/{MARKER}"))


def iter_rows(root: Path, default_split: str) -> Iterator[dict[str, Any]]:
    for folder in problem_folders(root):
        yield read_problem(folder, default_split)


def read_problem(folder: Path, default_split: str) -> dict[str, Any]:
    """One row; files that are absent stay absent (the adapter says what is missing)."""
    row: dict[str, Any] = {
        "problem_id": int(folder.name) if folder.name.isdigit() else None,
        "split": folder.parent.name if folder.parent.name in SPLITS else default_split,
        "question": (folder / MARKER).read_text(encoding="utf-8", errors="replace"),
        "folder": str(folder),
    }
    for name, key in (("input_output.json", "input_output"), ("solutions.json", "solutions")):
        path = folder / name
        if path.is_file():
            row[key] = path.read_text(encoding="utf-8", errors="replace")  # JSON text, as in the Hub rows
    starter = folder / "starter_code.py"
    row["starter_code"] = starter.read_text(encoding="utf-8", errors="replace") if starter.is_file() else ""
    meta_path = folder / "metadata.json"
    if meta_path.is_file():
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8", errors="replace"))
        except ValueError:
            meta = {}
        if isinstance(meta, dict):
            row["difficulty"], row["url"] = meta.get("difficulty"), meta.get("url")
    return row
