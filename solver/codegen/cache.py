"""The codegen cache on disk: a folder writable by this user alone, entries published by renames, and
libraries loaded only from bytes whose SHA-256 is the one recorded when they were built.

A library in the cache is code this process runs (its constructors run at load), so:

- the folder (``$MBS_CODEGEN_CACHE`` or ``~/.cache/mbs-studio/codegen``) and the folders above it that
  this module creates are made 0700 whatever the umask;
- a folder, library or metadata file that is not owned by this user or that group or others may write
  is refused: :class:`CodegenUnavailable` naming it (the run takes the generic path with one notice);
- an entry ``<key>`` is ``<key>.c``, ``<key>.so`` and ``<key>.json`` (its metadata, with the library's
  ``so_sha256``), written 0600 in a temporary folder inside the cache and renamed into it, the metadata
  last (:func:`publish`);
- loading (:func:`load_entry`) opens the folder once and the entry's files relative to it with
  ``O_NOFOLLOW``, checks them on their descriptors, reads the library once, compares the SHA-256 of
  those bytes with the metadata's and hands *those bytes* to dlopen through an anonymous memory file
  (``memfd_create``, mapped as ``/proc/self/fd/N``).  Nothing on disk is opened twice, so a file
  replaced or truncated after the check is never the one that runs (a truncated library mapped from
  the cache used to kill the process with SIGBUS); a missing or damaged entry is None, and the caller
  rebuilds it (:func:`load_or_build`).

The memory file stays open while the process runs: dlopen recognises a library it has loaded by its
path name, and a closed descriptor's number would be reused by the next library.  Each distinct
library (by SHA-256) is therefore loaded once per process (:data:`_LOADED`).  Where ``memfd_create``
does not exist (macOS), the verified bytes are written to a folder of this process's own
(``tempfile.mkdtemp``, 0700, a fresh name) and loaded from there.
"""
from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import stat
import tempfile
import threading
from pathlib import Path

from .derive import CodegenUnavailable

FOLDER_MODE = 0o700          # rwx------ for folders …
FILE_MODE = 0o600            # … rw------- for entries
_OPEN = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_LOADED = {}                 # SHA-256 → (library, descriptor of its private copy), for the process's lifetime
_LOCK = threading.Lock()


def cache_dir() -> Path:
    """The cache folder: ``$MBS_CODEGEN_CACHE``, else ``~/.cache/mbs-studio/codegen``."""
    return Path(os.environ.get("MBS_CODEGEN_CACHE") or Path.home() / ".cache" / "mbs-studio" / "codegen")


def digest(data: bytes) -> str:
    """The SHA-256 (hex) an entry's metadata records for its library."""
    return hashlib.sha256(data).hexdigest()


def make_folder(folder: Path):
    """Create ``folder`` and the missing folders above it, each 0700 whatever the umask, then check
    it (:func:`check`).  Raises CodegenUnavailable when it cannot be created or is refused."""
    missing = []
    path = Path(os.path.abspath(folder))
    while not os.path.lexists(path) and path != path.parent:
        missing.append(path)
        path = path.parent
    try:
        for path in reversed(missing):
            with contextlib.suppress(FileExistsError):      # (made meanwhile by another run: checked below)
                os.mkdir(path, FOLDER_MODE)
                os.chmod(path, FOLDER_MODE)
    except OSError as exc:
        raise CodegenUnavailable(f"cannot create the codegen cache folder {folder}: {exc.strerror or exc}") from None
    fd = _open_folder(folder)
    os.close(fd)


@contextlib.contextmanager
def scratch(folder: Path):
    """A temporary folder (0700) inside the cache folder, made and checked first, for files renamed into it."""
    make_folder(folder)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        yield Path(tmp)


def publish(tmp: Path, folder: Path, key: str, info: dict):
    """Move ``<key>.c`` and ``<key>.so`` from ``tmp`` into ``folder``, then write ``<key>.json``
    (``info``, which names the library's ``so_sha256``): each 0600 and by a rename, the metadata last
    (an entry counts once its metadata exists)."""
    (tmp / f"{key}.json").write_text(json.dumps(info))
    for suffix in (".c", ".so", ".json"):
        os.chmod(tmp / f"{key}{suffix}", FILE_MODE)
        os.replace(tmp / f"{key}{suffix}", folder / f"{key}{suffix}")


def load_entry(folder: Path, key: str):
    """(loaded library, metadata dict) of the entry ``key``, or None when the folder or the entry is
    missing or damaged (unreadable or truncated metadata, a library whose SHA-256 is not the recorded
    one, a link or other non-regular file in its place).  Raises CodegenUnavailable when the folder
    or a file of the entry is not owned by this user or is writable by group or others."""
    try:
        dir_fd = _open_folder(folder)
    except FileNotFoundError:
        return None
    try:
        meta = _read(dir_fd, folder, f"{key}.json")
        if meta is None:
            return None
        try:
            info = json.loads(meta)
        except (ValueError, UnicodeDecodeError):
            return None
        expected = info.get("so_sha256") if isinstance(info, dict) else None
        data = _read(dir_fd, folder, f"{key}.so")
        if data is None or not isinstance(expected, str) or digest(data) != expected:
            return None
        return _load_bytes(data, expected, key), info
    finally:
        os.close(dir_fd)


def load_or_build(folder: Path, key: str, build):
    """(library, metadata, cache hit?) of the entry ``key``: loaded when it is in the cache and sound,
    else built now: ``build(tmp)`` writes ``tmp/<key>.c`` and ``tmp/<key>.so`` and returns the metadata,
    to which the library's SHA-256 is added before :func:`publish`.  Raises CodegenUnavailable (a
    refused folder or entry, a build that fails, a library that does not load)."""
    entry = load_entry(folder, key)
    if entry is not None:
        return (*entry, True)
    with scratch(folder) as tmp:
        info = dict(build(tmp))
        info["so_sha256"] = digest((tmp / f"{key}.so").read_bytes())
        publish(tmp, folder, key, info)
    entry = load_entry(folder, key)
    if entry is None:
        raise CodegenUnavailable(f"the library {folder / key}.so changed between its build and its load")
    return (*entry, False)


# ---- helpers --------------------------------------------------------------------------------------
def _refusal(what, path, st):
    """Why a folder or file of the cache is refused, or None when this user alone may write it."""
    if st.st_uid != os.geteuid():
        why = f"is owned by another user (uid {st.st_uid})"
    elif st.st_mode & 0o022:
        why = f"is writable by group or others (mode {stat.S_IMODE(st.st_mode):04o})"
    else:
        return None
    return (f"the codegen cache {what} {path} {why}; its libraries are not loaded (make the folder yours "
            f"and writable by you alone, e.g. chmod 700, or remove it)")


def _open_folder(folder):
    """A descriptor of the cache folder, checked on the descriptor.  FileNotFoundError when it does
    not exist; CodegenUnavailable when it is not a folder or is refused."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CodegenUnavailable(f"cannot open the codegen cache folder {folder}: {exc.strerror or exc}") from None
    why = _refusal("folder", folder, os.fstat(fd))
    if why is not None:
        os.close(fd)
        raise CodegenUnavailable(why)
    return fd


def _read(dir_fd, folder, name):
    """The bytes of the regular file ``name`` of the cache folder (opened once, without following a
    link), or None when it is missing, a link or not a regular file.  Raises CodegenUnavailable when
    it is refused (:func:`_refusal`)."""
    try:
        fd = os.open(name, _OPEN, dir_fd=dir_fd)
    except OSError:                                  # missing; a link (ELOOP); a device or FIFO that will not open
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return None
        why = _refusal("file", folder / name, st)
        if why is not None:
            raise CodegenUnavailable(why)
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read()
    finally:
        os.close(fd)


def _load_bytes(data, sha, key):
    """dlopen of ``data`` (verified: SHA-256 ``sha``) from a private copy; once per process per library."""
    with _LOCK:
        if sha in _LOADED:
            return _LOADED[sha][0]
        if hasattr(os, "memfd_create"):
            fd = os.memfd_create(f"mbs-{key}", os.MFD_CLOEXEC)
            _write_all(fd, data)
            path = f"/proc/self/fd/{fd}"
        else:
            fd = None
            path = os.path.join(tempfile.mkdtemp(prefix="mbs-codegen-"), f"{key}.so")
            with open(path, "xb") as f:
                f.write(data)
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            if fd is not None:
                os.close(fd)
            raise CodegenUnavailable(f"cannot load the compiled library {key}.so: {exc}") from None
        finally:
            if fd is None:
                os.unlink(path)
                os.rmdir(os.path.dirname(path))
        _LOADED[sha] = lib, fd
        return lib


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
