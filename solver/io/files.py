"""Safe file access for files people send each other (docs/reliability.md).

Reading: :func:`read_regular` opens without blocking (a FIFO never hangs the open), checks on the
open descriptor that it is a regular file (``/dev/zero``, FIFOs, sockets and folders are refused)
and reads at most ``limit`` bytes, so the size cap holds for what is actually read.

Writing: :func:`atomic_write` and :func:`atomic_copy` write a temporary file beside the target
(``.tmp-<pid>-<random>-<name>``, created with ``O_EXCL | O_NOFOLLOW``), fsync it and rename it over
the target.  A target that exists and is not a regular file (a symbolic link, a device, a folder)
is refused with ModelError, so a planted link is never written through.  The previous file is kept
as ``<name>.bak`` by a hard link renamed onto the backup name (or a fresh copy when the file system
has no hard links): the rename replaces whatever is at ``.bak``, a link included, and never writes
through it.  The new file keeps the mode of the file it replaces (the umask's default for a new
file), and temporary files left by a killed save (their process no longer runs, ten minutes old)
are removed.
"""
from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import time

from ..errors import ModelError

TMP_PREFIX = ".tmp-"
STALE_S = 600.0         # a temporary file this old whose process is gone is left by a killed save
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
_NO_HARD_LINKS = {errno.EPERM, errno.EMLINK, errno.EXDEV, errno.EACCES, errno.ENOTSUP,
                  getattr(errno, "EOPNOTSUPP", errno.ENOTSUP)}


# ---- public API: reading --------------------------------------------------------------------------
def open_regular(path, limit, what="file"):
    """A binary file object of the regular file ``path`` whose size is at most ``limit`` bytes;
    raises ModelError naming ``path`` otherwise (missing, unreadable, special file, too large)."""
    path = os.fspath(path)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise ModelError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    except ValueError:                         # a NUL byte in the path
        raise ModelError(f"{path!r}: a file name cannot contain a NUL character") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ModelError(f"{path}: the {what} is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise ModelError(f"{path}: the {what} is too large ({st.st_size} bytes; limit {limit})")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path, limit, what="file") -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them (see :func:`open_regular`;
    a file that grows past the limit while it is read is refused too)."""
    with open_regular(path, limit, what) as fh:
        try:
            raw = fh.read(limit + 1)
        except OSError as exc:
            raise ModelError(f"{path}: cannot read the {what} ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise ModelError(f"{path}: the {what} is too large (more than {limit} bytes)")
    return raw


# ---- public API: writing --------------------------------------------------------------------------
def check_target(path) -> os.stat_result | None:
    """The lstat of a write target (None when nothing is there); ModelError when something other
    than a regular file is there (a symbolic link, a device, a FIFO, a folder)."""
    path = os.fspath(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ModelError(f"{path}: cannot write ({exc.strerror or exc})") from None
    if not stat.S_ISREG(st.st_mode):
        raise ModelError(f"{path}: is {_kind(st.st_mode)}; refusing to replace it (only a regular "
                         "file is overwritten)")
    return st


def atomic_write(path, data: bytes, keep_backup=True) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (module docstring)."""
    path = os.fspath(path)
    fd, tmp, old = create_temp(path)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        replace(tmp, path, old, keep_backup)
    except BaseException:
        _remove(tmp)
        raise


def atomic_copy(src, dst) -> None:
    """Copy the regular file ``src`` onto ``dst`` through a temporary file and a rename."""
    dst = os.fspath(dst)
    fd, tmp, old = create_temp(dst)
    try:
        with os.fdopen(fd, "wb") as out, open_regular(src, float("inf"), "results file") as inp:
            shutil.copyfileobj(inp, out)
            out.flush()
            os.fsync(out.fileno())
        replace(tmp, dst, old, keep_backup=False)
    except BaseException:
        _remove(tmp)
        raise


def create_temp(path, part=False):
    """``(fd, temporary path, lstat of the target or None)``: a new temporary file beside ``path``
    with the mode the target has (or the default mode of a new file); stale ones are removed first.
    ``part``: named ``<name>.<random>.part`` instead (a streamed results file, kept readable when
    its run is killed).  ModelError when the target is not a regular file or the folder is not
    writable."""
    old = check_target(path)
    folder, name = os.path.split(os.path.abspath(path))
    if part:
        tmp = os.path.join(folder, f"{name}.{secrets.token_hex(4)}.part")
    else:
        remove_stale_temps(folder, name)
        tmp = _temp_name(path)
    try:
        fd = os.open(tmp, _CREATE, 0o666)            # the umask applies, as for any new file
    except OSError as exc:
        raise ModelError(f"cannot write a file beside {path} ({exc.strerror or exc})") from None
    if old is not None:
        try:
            os.fchmod(fd, stat.S_IMODE(old.st_mode))
        except (OSError, AttributeError):       # not the owner (or no fchmod): the default mode
            pass
    return fd, tmp, old


def replace(tmp, path, old, keep_backup=True) -> None:
    """Rename the finished temporary file onto ``path`` (a rename replaces a link planted there
    meanwhile instead of writing through it); with ``keep_backup`` the file that was there
    (``old``: its lstat from :func:`create_temp`) becomes ``path + '.bak'`` first."""
    if keep_backup and old is not None:
        _backup(path)
    os.replace(tmp, path)


def remove_stale_temps(folder, name) -> None:
    """Delete ``.tmp-<pid>-<random>-<name>`` (and ``…-<name>.bak``) files in ``folder`` left by a
    save that was killed: its process no longer runs and the file is older than ``STALE_S`` (a
    save from another machine into a shared folder is never that slow).  Links and other special
    files of that name are unlinked, not followed."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return
    now = time.time()
    for entry in entries:
        if not (entry.startswith(TMP_PREFIX) and entry.endswith((f"-{name}", f"-{name}.bak"))):
            continue
        pid = entry[len(TMP_PREFIX):].split("-", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _running(int(pid)):
            continue
        try:
            old = now - os.lstat(os.path.join(folder, entry)).st_mtime > STALE_S
        except OSError:
            continue
        if old:
            _remove(os.path.join(folder, entry))


# ---- helpers --------------------------------------------------------------------------------------
def _backup(path):
    """``path`` → ``path.bak`` without following a link at either name: a hard link of the file
    renamed onto the backup name (a copy when the file system has no hard links).  A folder at the
    backup name is refused (ModelError)."""
    bak = path + ".bak"
    if os.path.isdir(bak) and not os.path.islink(bak):
        raise ModelError(f"{bak}: is a folder; the backup of {os.path.basename(path)} cannot be kept")
    tmp = _temp_name(bak)
    try:
        try:
            os.link(path, tmp, follow_symlinks=False)
        except OSError as exc:
            if exc.errno not in _NO_HARD_LINKS:
                raise
            with os.fdopen(os.open(tmp, _CREATE, 0o600), "wb") as out, open(path, "rb") as inp:
                shutil.copyfileobj(inp, out)
            shutil.copymode(path, tmp)
        os.replace(tmp, bak)
    except BaseException:
        _remove(tmp)
        raise


def _temp_name(path):
    folder, name = os.path.split(os.path.abspath(path))
    return os.path.join(folder, f"{TMP_PREFIX}{os.getpid()}-{secrets.token_hex(4)}-{name}")


def _running(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # e.g. EPERM: it runs under another user
        return True
    return True


def _remove(path):
    try:
        os.unlink(path)
    except OSError:
        pass


def _kind(mode):
    for test, text in ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISDIR, "a folder"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return text
    return "not a regular file"
