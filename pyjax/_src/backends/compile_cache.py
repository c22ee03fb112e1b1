"""The persistent compilation cache: compiled XLA executables on disk, so that a new
process skips XLA's compiler for programs an earlier one compiled. On by default, in
$XDG_CACHE_HOME/pyjax (or ~/.cache/pyjax); see `directory()` for the options.

Entries are opaque bytes here (xla.py serializes and deserializes them); this module
owns the files. Each entry file is a header (magic, the key, the payload's length and
SHA-256) and the payload, written to a temporary file and renamed into place, so readers
and concurrent writers never see half an entry. Whatever goes wrong on disk (a read-only
or full directory, a corrupt, truncated or foreign file) costs a one-time warning and a
normal compile, never a crash or a wrong executable. The directory is kept under
jax_compilation_cache_max_size by evicting the least recently used entries (a hit
refreshes its entry's mtime). Imports config only."""
from __future__ import annotations

import errno
import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
import warnings

from pyjax._src import config

_MAGIC = b"pyjax-xla-cache1"
_HEADER = struct.Struct(f"<{len(_MAGIC)}s64sQ32s")   # magic, key (hex), length, sha256
_SUFFIX = ".xla"
_TEMP_PREFIX = ".tmp-"
_STALE_TEMP_SECONDS = 600     # a temporary file this old was left by a killed writer
_EVICT_TO = 0.8               # eviction frees down to this fraction of the limit

_lock = threading.Lock()
_logger = logging.getLogger("pyjax")
_warned: set[tuple[str, str]] = set()   # (directory, kind) pairs already warned about
_sizes: dict[str, int] = {}   # directory -> estimated bytes of entries in it


def directory() -> str | None:
    """Where the cache lives, or None when it is off (jax_enable_compilation_cache=False
    or jax_compilation_cache_max_size=0). In order: jax_compilation_cache_dir
    (JAX_COMPILATION_CACHE_DIR), PYJAX_CACHE_DIR, $XDG_CACHE_HOME/pyjax, ~/.cache/pyjax."""
    if (not config.enable_compilation_cache.value
            or config.compilation_cache_max_size.value == 0):
        return None
    chosen = config.compilation_cache_dir.value or os.environ.get("PYJAX_CACHE_DIR")
    if chosen:
        return os.path.expanduser(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                             ".cache")
    return os.path.join(base, "pyjax")


def make_key(*parts: str | bytes) -> str:
    """A hex SHA-256 over `parts` (program text, options, versions, devices)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(cache_dir, key):
    return os.path.join(cache_dir, f"pyjax-{key}{_SUFFIX}")


def _warn_once(cache_dir, kind, message):
    with _lock:
        if (cache_dir, kind) in _warned:
            return
        _warned.add((cache_dir, kind))
    warnings.warn(f"pyjax compilation cache: {message}. The program is compiled as usual "
                  "(and a damaged entry rewritten); to use another directory set "
                  "JAX_COMPILATION_CACHE_DIR or PYJAX_CACHE_DIR, to turn the cache off "
                  "JAX_ENABLE_COMPILATION_CACHE=0. (Said once per directory and problem.)",
                  RuntimeWarning, stacklevel=4)


def load(key: str) -> bytes | None:
    """The payload stored under `key`, or None (missing, unreadable, or damaged: a damaged
    entry is removed, with a one-time warning)."""
    cache_dir = directory()
    if cache_dir is None:
        return None
    path = _path(cache_dir, key)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except (FileNotFoundError, NotADirectoryError):   # a bad directory: store() says so
        return None
    except OSError as err:
        _warn_once(cache_dir, "read", f"cannot read {path}: {err}")
        return None
    problem = _check(data, key)
    if problem:
        discard(key, problem)
        return None
    try:   # a hit makes the entry the most recently used one (LRU eviction)
        os.utime(path)
    except OSError:
        pass   # a read-only cache is still worth reading
    return data[_HEADER.size:]


def _check(data, key):
    """What is wrong with an entry's bytes, or None when they are whole and are `key`'s."""
    if len(data) < _HEADER.size:
        return "truncated entry (shorter than its header)"
    magic, stored_key, length, digest = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        return "not a pyjax cache entry (unknown header)"
    if stored_key != key.encode():
        return "entry of another program (its header names another key)"
    payload = memoryview(data)[_HEADER.size:]
    if len(payload) != length:
        return f"truncated entry ({len(payload)} of {length} bytes)"
    if hashlib.sha256(payload).digest() != digest:
        return "corrupt entry (checksum mismatch)"
    return None


def discard(key: str, problem: str) -> None:
    """Removes a damaged or unusable entry, warning once per directory."""
    cache_dir = directory()
    if cache_dir is None:
        return
    path = _path(cache_dir, key)
    _warn_once(cache_dir, "damaged", f"ignoring {path}: {problem}")
    try:
        os.unlink(path)
    except OSError:
        pass


def explain(message: str, *args) -> None:
    """Logs what the cache misses, writes, and why it writes nothing (JAX's messages):
    at WARNING under jax_explain_cache_misses with the cache on, else at DEBUG."""
    on = config.explain_cache_misses.value and directory() is not None
    _logger.log(logging.WARNING if on else logging.DEBUG, message, *args)


def store(key: str, payload: bytes, compile_seconds: float, name: str = "") -> bool:
    """Saves `payload` under `key` (atomically), if the compile took at least
    jax_persistent_cache_min_compile_time_secs and the entry is at least
    jax_persistent_cache_min_entry_size_bytes; whether it did. Failures only warn, once.
    What it decides is logged with JAX's messages (`name`: the program's module)."""
    cache_dir = directory()
    if cache_dir is None:
        return False
    least = config.persistent_cache_min_compile_time_secs.value
    if compile_seconds < least:
        explain("Not writing persistent cache entry for '%s' because it took < %.2f "
                "seconds to compile (%.2fs)", name, least, compile_seconds)
        return False
    data = _HEADER.pack(_MAGIC, key.encode(), len(payload),
                        hashlib.sha256(payload).digest()) + payload
    smallest = config.persistent_cache_min_entry_size_bytes.value
    if len(data) < smallest:
        explain("Not writing persistent cache entry with key %r since its size (%d bytes) "
                "is less than threshold (%d bytes)", key, len(data), smallest)
        return False
    explain("Writing %s to persistent compilation cache with key %r", name, key)
    try:
        os.makedirs(cache_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache_dir, prefix=_TEMP_PREFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, _path(cache_dir, key))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError as err:
        kind = "full" if err.errno in (errno.ENOSPC, errno.EDQUOT) else "write"
        what = "the disk is full" if kind == "full" else "cannot write to it"
        _warn_once(cache_dir, kind, f"{cache_dir}: {what} ({err}); compiled programs are "
                                    "not saved")
        return False
    _account(cache_dir, len(data))
    return True


def _account(cache_dir, added):
    """Adds a write to the directory's estimated size and evicts when over the limit. The
    first write of a process measures the directory; later ones add up (other processes'
    writes show at the next measure, so the bound holds up to their recent writes)."""
    limit = config.compilation_cache_max_size.value
    if limit is None or limit < 0:
        return
    with _lock:
        if cache_dir not in _sizes:
            _sizes[cache_dir] = sum(size for _, size, _ in _entries(cache_dir))
        else:
            _sizes[cache_dir] += added
        if _sizes[cache_dir] > limit:
            _sizes[cache_dir] = _evict(cache_dir, int(limit * _EVICT_TO))


def _entries(cache_dir):
    """(mtime, size, path) of each entry; stale temporary files are removed."""
    found = []
    try:
        names = os.listdir(cache_dir)
    except OSError:
        return found
    now = time.time()
    for name in names:
        path = os.path.join(cache_dir, name)
        try:
            st = os.stat(path)
            if name.startswith(_TEMP_PREFIX):
                if now - st.st_mtime > _STALE_TEMP_SECONDS:
                    os.unlink(path)
            elif name.endswith(_SUFFIX):
                found.append((st.st_mtime, st.st_size, path))
        except OSError:
            pass   # removed by another process meanwhile
    return found


def _evict(cache_dir, target):
    """Removes least recently used entries until at most `target` bytes remain; returns
    the bytes left."""
    entries = sorted(_entries(cache_dir))
    total = sum(size for _, size, _ in entries)
    for _, size, path in entries:
        if total <= target:
            break
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass   # another process evicted it
        except OSError:
            continue
        total -= size
    return total
