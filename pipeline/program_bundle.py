"""A program directory (Kattis problem package format) as a record holds it.

A Kattis output validator may be a directory rather than one file. The schema keeps it as
`Checker(language="bundle", program=<JSON>)`, the JSON being `{"files": {relative path: text},
"executable": [relative paths]}`: `pack_program_dir` makes it from a folder (scrape), `load` reads
and checks it, `unpack` writes it back. How the evaluator builds and runs one:
pipeline/evaluator/verdict/bundle.py, which writes the files into its sandbox's folders with the
same `write_files` (each folder opened without following a link, each file made anew).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

MB = 1 << 20
NAME = re.compile(r"^[a-zA-Z0-9_][a-zA-Z0-9_.-]{0,254}$")  # the format's file names; others are ignored
SKIPPED_DIRS = {"__pycache__"}  # an interpreter's leftovers, not part of the program
MAX_FILES = 1000
MAX_FILE_BYTES = 4 * MB
MAX_TOTAL_BYTES = 16 * MB
MAX_DEPTH = 32  # folders nested in a program (and in what its build leaves)
SCRIPTS = ("build", "run")  # the format's scripts: always executable
DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


# --- packing (scrape) ---------------------------------------------------------------------------------
def pack_program_dir(folder: Path) -> str:
    """The program directory `folder` as the schema's JSON (files as text, executable bits kept).
    Files the format says to ignore (names beginning with a dot or a dash, or with other
    characters) are left out; a binary file, a link out of the folder or too much data is a
    ValueError saying which."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a directory")
    root = folder.resolve()
    files: dict[str, str] = {}
    executable: list[str] = []
    total = 0
    for path in sorted(_walk(folder, {root})):
        rel = path.relative_to(folder).as_posix()
        real = path.resolve()
        if real != root and root not in real.parents:
            raise ValueError(f"{rel}: a link out of the program directory")
        if not real.is_file():
            continue
        size = real.stat().st_size
        if size > MAX_FILE_BYTES:
            raise ValueError(f"{rel}: {size / MB:.1f} MB, over the {MAX_FILE_BYTES // MB} MB limit on a file")
        total += size
        if total > MAX_TOTAL_BYTES:
            raise ValueError(f"the program directory holds over {MAX_TOTAL_BYTES // MB} MB")
        if len(files) >= MAX_FILES:
            raise ValueError(f"the program directory holds over {MAX_FILES} files")
        files[rel] = _text(real.read_bytes(), rel)
        if real.stat().st_mode & 0o111:
            executable.append(rel)
    if not files:
        raise ValueError(f"{folder}: no files")
    return json.dumps({"files": files, "executable": executable}, sort_keys=True, ensure_ascii=False)


def _walk(folder: Path, seen: set[Path]) -> Iterable[Path]:
    """The files under `folder`; a link to a folder inside is followed (the format allows links),
    once (`seen`: the real folders walked, so a link to an ancestor ends)."""
    for entry in sorted(os.scandir(folder), key=lambda e: e.name):
        if not NAME.match(entry.name) or entry.name in SKIPPED_DIRS:
            continue
        path = Path(entry.path)
        if entry.is_dir():
            real = path.resolve()
            if real not in seen:
                seen.add(real)
                yield from _walk(path, seen)
        else:
            yield path


def _text(data: bytes, rel: str) -> str:
    if b"\0" in data:
        raise ValueError(f"{rel}: a binary file (a program directory is packed as source text only)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{rel}: not UTF-8 text (a binary file?): {e}") from None


# --- reading and writing back -------------------------------------------------------------------------
def load(program: str) -> tuple[dict[str, str], set[str]]:
    """(files by relative path, executable paths) of a packed program; ValueError when malformed."""
    try:
        data = json.loads(program)
    except (TypeError, json.JSONDecodeError) as e:
        raise ValueError(f"a bundle program must be JSON: {e}") from None
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict) or not files:
        raise ValueError('a bundle program must be {"files": {path: text}, "executable": [path]}')
    if len(files) > MAX_FILES:
        raise ValueError(f"a bundle program holds over {MAX_FILES} files")
    total = 0
    for rel, text in files.items():
        _check_path(rel)
        if not isinstance(text, str):
            raise ValueError(f"{rel}: expected text, got {type(text).__name__}")
        total += len(text.encode("utf-8", "surrogatepass"))
    if total > MAX_TOTAL_BYTES:
        raise ValueError(f"a bundle program holds over {MAX_TOTAL_BYTES // MB} MB")
    _check_folders(files)
    executable = data.get("executable") or []
    if not isinstance(executable, list) or not all(isinstance(p, str) for p in executable):
        raise ValueError("bundle executable: expected a list of paths")
    return files, set(executable)


def _check_path(rel: object) -> None:
    parts = PurePosixPath(rel).parts if isinstance(rel, str) else ()
    if not isinstance(rel, str) or not parts or rel.startswith("/") or not all(NAME.match(p) for p in parts):
        raise ValueError(f"bundle file name {rel!r}: must be a relative path of letters, digits, '_', '.' "
                         "and '-', no part beginning with '.' or '-'")
    if len(parts) > MAX_DEPTH:
        raise ValueError(f"bundle file name {rel!r}: nested over {MAX_DEPTH} folders deep")


def _check_folders(files: Iterable[str]) -> None:
    """A name that is both a file and a folder (`a` and `a/b`) cannot be written."""
    folders = {"/".join(PurePosixPath(rel).parts[:i]) for rel in files for i in range(1, len(PurePosixPath(rel).parts))}
    both = sorted(folders.intersection(files))
    if both:
        raise ValueError(f"bundle file name {both[0]!r}: both a file and a folder")


def unpack(program: str, into: Path) -> None:
    """Write a packed program's files under `into` (created), readable by any uid; `build`,
    `run` and the files packed as executable get the executable bit."""
    files, executable = load(program)
    into = Path(into)
    into.mkdir(mode=0o755, parents=True, exist_ok=True)
    fd = open_dir(into)
    try:
        write_files(files, executable, fd)
    finally:
        os.close(fd)


def write_files(files: dict[str, str], executable: set[str], top: int, owner: int | None = None) -> None:
    """Write `files` under the folder open as `top`, each one made anew and every folder opened
    without following a link; with `owner`, what is made is given to that uid."""
    for rel, text in files.items():
        *folders, name = PurePosixPath(rel).parts
        opened: list[int] = []
        try:
            here = top
            for folder in folders:
                try:
                    os.mkdir(folder, 0o755, dir_fd=here)
                except FileExistsError:
                    pass
                here = open_dir(folder, here)
                opened.append(here)
                os.fchmod(here, 0o755)  # not masked by the umask
                if owner is not None:
                    os.fchown(here, owner, owner)
            mode = 0o755 if rel in executable or rel in SCRIPTS else 0o644
            write_new(name, text.encode("utf-8", "surrogatepass"), mode, here, owner)
        finally:
            for fd in opened:
                os.close(fd)


def open_dir(name: str | os.PathLike, dir_fd: int | None = None) -> int:
    """A descriptor of the folder `name` (relative to `dir_fd`); OSError when it is anything else,
    a link to a folder included."""
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def write_new(name: str, data: bytes, mode: int, dir_fd: int, owner: int | None = None) -> None:
    """Write `name` in the folder open as `dir_fd` as a new file (what was there is unlinked, never
    written through)."""
    try:
        os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    fd = os.open(name, NEW_FILE_FLAGS, 0o600, dir_fd=dir_fd)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        os.fchmod(fd, mode)
        if owner is not None:
            os.fchown(fd, owner, owner)
    finally:
        os.close(fd)
