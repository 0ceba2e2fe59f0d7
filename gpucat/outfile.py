"""Writing an output file the user named: only a regular file or a new path, atomically.

`--out` may name a symlink, a device node (`/dev/full`) or a folder by mistake or by malice; a
write through it would replace what it points at, or the node itself. So the target must be
missing or a regular file. The bytes go to a hidden temporary file beside it, synced, then
renamed over it: a reader sees the old file or the new one, and any failure (a full disk, a
missing folder) removes the temporary file and is one clear error.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from gpucat.schemas.errors import GpucatError, UserInputError


def check_target(path: Path, option: str = "--out") -> None:
    """Refuse a target that exists and is not a regular file (a symlink is refused, not followed)."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise UserInputError(f"cannot write {option} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(mode):
        kind = "a symlink" if stat.S_ISLNK(mode) else "a folder" if stat.S_ISDIR(mode) else "a device or other special file"
        raise UserInputError(f"{option} {path} is {kind}, not a regular file; give a new path or a regular file")


def write_atomic(path: Path, data: bytes, option: str = "--out") -> Path:
    path = Path(path)
    check_target(path, option)
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, staging = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise UserInputError(f"cannot write {option} {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(staging, 0o666 & ~umask)
        check_target(path, option)  # checked again just before the rename, which never follows a link
        os.replace(staging, path)
    except OSError as exc:
        Path(staging).unlink(missing_ok=True)
        raise GpucatError(f"cannot write {option} {path}: {exc.strerror or exc}") from None
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
    return path
