"""The persistent compilation cache (backends/compile_cache.py): on by default, where it
lives and how it is turned off, reuse by a new process, LRU eviction, and every fault on
disk (concurrent writers, a read-only or full directory, corrupt, truncated or foreign
entries, another jaxlib version), each ending in a correct result. tests/conftest.py
points the cache of the whole test run at a temporary directory."""
from __future__ import annotations

import collections
import errno
import functools
import hashlib
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import warnings

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax._src import config
from repo_paths import REPO_ROOT

pytest.importorskip("jaxlib")
from pyjax._src.backends import compile_cache, xla  # noqa: E402

# Prints the result, then how many compiles and persistent-cache hits it took.
_PROGRAM = """
    import pyjax as jax, pyjax.numpy as jnp
    from pyjax._src.backends import xla
    f = jax.jit(lambda x: jnp.sin(x) * 3 + jnp.cos(x))
    print(float(f(1.0)), xla.stats["compiles"], xla.stats["persistent_hits"])
"""


@functools.cache
def expected():
    """The program's result, compiled here: what every process must print."""
    with config.executor("xla"):
        out = float(jax.jit(lambda x: jnp.sin(x) * 3 + jnp.cos(x))(1.0))
    assert out == pytest.approx(np.sin(1.0) * 3 + np.cos(1.0), rel=1e-6)
    return str(out)

_CACHE_VARIABLES = ("JAX_COMPILATION_CACHE_DIR", "PYJAX_CACHE_DIR", "XDG_CACHE_HOME",
                    "JAX_ENABLE_COMPILATION_CACHE", "PYJAX_EXECUTOR")


def _env(**env):
    full = {k: v for k, v in os.environ.items() if k not in _CACHE_VARIABLES}
    full.update(PYTHONPATH=str(REPO_ROOT), **env)
    return full


def run_python(code=_PROGRAM, **env):
    """Runs `code` in a fresh interpreter with only the cache settings in `env`; returns
    its stdout split in words (fails on a non-zero exit)."""
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=_env(**env),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def entries(directory):
    return sorted(p for p in os.listdir(directory) if p.endswith(".xla"))


# --- where it lives, reuse ------------------------------------------------------------------

def test_on_by_default_in_xdg_cache_home_then_home(tmp_path):
    assert run_python(XDG_CACHE_HOME=str(tmp_path / "xdg")) == [expected(), "1", "0"]
    assert len(entries(tmp_path / "xdg" / "pyjax")) == 1
    assert run_python(HOME=str(tmp_path / "home")) == [expected(), "1", "0"]
    assert len(entries(tmp_path / "home" / ".cache" / "pyjax")) == 1
    assert run_python(HOME=str(tmp_path / "home")) == [expected(), "0", "1"]


def test_pyjax_cache_dir_jax_option_and_off_switch(tmp_path):
    mine, jaxs = tmp_path / "mine", tmp_path / "jax"
    run_python(PYJAX_CACHE_DIR=str(mine), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    assert len(entries(mine)) == 1 and not (tmp_path / "xdg").exists()
    # jax_compilation_cache_dir wins over PYJAX_CACHE_DIR, from the environment or code.
    run_python(JAX_COMPILATION_CACHE_DIR=str(jaxs), PYJAX_CACHE_DIR=str(mine))
    assert len(entries(jaxs)) == 1
    code = (f"import pyjax\npyjax.config.update('jax_compilation_cache_dir', "
            f"{str(tmp_path / 'c')!r})" + textwrap.dedent(_PROGRAM))
    assert run_python(code, PYJAX_CACHE_DIR=str(mine)) == [expected(), "1", "0"]
    assert len(entries(tmp_path / "c")) == 1
    for off in ({"JAX_ENABLE_COMPILATION_CACHE": "0"}, {"JAX_COMPILATION_CACHE_MAX_SIZE": "0"}):
        out = run_python(PYJAX_CACHE_DIR=str(tmp_path / "off"), **off)
        assert out == [expected(), "1", "0"]
        assert not (tmp_path / "off").exists()


def test_a_new_process_loads_instead_of_compiling(tmp_path):
    first = run_python(JAX_COMPILATION_CACHE_DIR=str(tmp_path))
    assert first == [expected(), "1", "0"] and len(entries(tmp_path)) == 1
    assert run_python(JAX_COMPILATION_CACHE_DIR=str(tmp_path)) == [expected(), "0", "1"]


def test_concurrent_writers_from_four_processes(tmp_path):
    # Each writes the shared program and one of its own, at the same time.
    code = _PROGRAM + "    print(float(jax.jit(lambda x: x * {k} + 1)(2.0)))\n"
    procs = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code.format(k=k))],
                              env=_env(JAX_COMPILATION_CACHE_DIR=str(tmp_path)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for k in range(4)]
    outs = [p.communicate(timeout=180) for p in procs]
    assert all(p.returncode == 0 for p in procs), [err for _, err in outs]
    assert [out.split()[0] for out, _ in outs] == [expected()] * 4
    assert [out.split()[3] for out, _ in outs] == [str(2.0 * k + 1) for k in range(4)]
    assert all("compilation cache" not in err for _, err in outs)
    assert len(entries(tmp_path)) == 5 and len(os.listdir(tmp_path)) == 5   # no temp files
    assert run_python(JAX_COMPILATION_CACHE_DIR=str(tmp_path)) == [expected(), "0", "1"]


# --- faults, in this process -------------------------------------------------------------------

@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory and an empty in-memory cache, so compiles reach the disk."""
    monkeypatch.setattr(xla, "_memory_cache", collections.OrderedDict())
    monkeypatch.setattr(compile_cache, "_warned", set())
    monkeypatch.setattr(compile_cache, "_sizes", {})
    with config.compilation_cache_dir(str(tmp_path)), config.executor("xla"):
        yield tmp_path


def forget_in_memory(monkeypatch):
    monkeypatch.setattr(xla, "_memory_cache", collections.OrderedDict())


def run_fresh(scale=3.0):
    """Compiles (a new jit object each time) and runs a small program; returns
    (its result, compiles, persistent hits) for this call."""
    compiles, hits = xla.stats["compiles"], xla.stats["persistent_hits"]
    out = float(jax.jit(lambda x: jnp.sin(x) * scale + jnp.cos(x))(1.0))
    assert out == pytest.approx(np.sin(1.0) * scale + np.cos(1.0), rel=1e-6)
    return xla.stats["compiles"] - compiles, xla.stats["persistent_hits"] - hits


def caught_warnings(fn, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(*args)
    return result, [str(w.message) for w in caught if "compilation cache" in str(w.message)]


def test_hit_and_lru_eviction(cache, monkeypatch):
    assert run_fresh(1.0) == (1, 0)
    size = os.path.getsize(cache / entries(cache)[0])
    forget_in_memory(monkeypatch)
    assert run_fresh(1.0) == (0, 1)
    monkeypatch.setattr(compile_cache, "_sizes", {})
    with config.compilation_cache_max_size(int(size * 2.5)):
        os.utime(cache / entries(cache)[0], (1, 1))     # program 1.0: long unused
        assert run_fresh(2.0) == (1, 0)                 # two entries fit
        assert len(entries(cache)) == 2
        assert run_fresh(3.0) == (1, 0)                 # a third does not: 1.0 goes
        assert len(entries(cache)) <= 2
        forget_in_memory(monkeypatch)
        assert run_fresh(3.0) == (0, 1)                 # the newest one stayed
        assert run_fresh(1.0) == (1, 0)                 # the evicted one compiles again


def test_min_compile_time_and_entry_size(cache):
    with config.persistent_cache_min_compile_time_secs(1e9):
        assert run_fresh(4.0) == (1, 0)
    with config.persistent_cache_min_entry_size_bytes(2**40):
        assert run_fresh(5.0) == (1, 0)
    assert entries(cache) == []


@pytest.mark.parametrize("damage", ["corrupt", "truncated", "header", "empty", "foreign"])
def test_damaged_entry_warns_once_and_recompiles(cache, monkeypatch, damage):
    assert run_fresh() == (1, 0)
    path = cache / entries(cache)[0]
    data = bytearray(path.read_bytes())
    if damage == "corrupt":
        data[len(data) // 2] ^= 0xFF
    elif damage == "truncated":
        data = data[: len(data) // 2]
    elif damage == "header":
        data[:8] = b"garbage!"
    elif damage == "empty":
        data = b""
    else:   # whole and checksummed, but not an executable XLA can load
        payload = b"not an executable" * 10
        data = compile_cache._HEADER.pack(
            compile_cache._MAGIC, path.name[6:-4].encode(), len(payload),
            hashlib.sha256(payload).digest()) + payload
    path.write_bytes(bytes(data))
    forget_in_memory(monkeypatch)
    counts, messages = caught_warnings(run_fresh)
    assert counts == (1, 0)                                  # compiled afresh ...
    assert len(messages) == 1 and str(path) in messages[0]
    expected = {"corrupt": "checksum", "truncated": "truncated", "header": "unknown header",
                "empty": "truncated", "foreign": "XLA could not load it"}[damage]
    assert expected in messages[0]
    forget_in_memory(monkeypatch)
    assert run_fresh() == (0, 1)                             # ... and rewrote the entry


def test_entry_under_another_key_is_refused(cache, monkeypatch):
    assert run_fresh(1.0) == (1, 0)
    assert run_fresh(2.0) == (1, 0)
    first, second = [cache / name for name in entries(cache)]
    first.write_bytes(second.read_bytes())   # a misplaced file: never run the other program
    forget_in_memory(monkeypatch)
    counts, messages = caught_warnings(lambda: (run_fresh(1.0), run_fresh(2.0)))
    assert sorted(counts) == [(0, 1), (1, 0)]
    assert len(messages) == 1 and "another key" in messages[0]


def test_another_jaxlib_version_misses(cache, monkeypatch):
    assert run_fresh() == (1, 0)
    forget_in_memory(monkeypatch)
    monkeypatch.setattr(xla, "JAXLIB_VERSION", "0.0.1-other")
    assert run_fresh() == (1, 0)
    assert len(entries(cache)) == 2           # one entry per version
    forget_in_memory(monkeypatch)
    assert run_fresh() == (0, 1)


def test_read_only_directory_still_reads_and_warns_once_about_writes(cache, monkeypatch):
    assert run_fresh(1.0) == (1, 0)

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(cache))

    # Running as root ignores chmod, so the refusals are patched in (a read-only mount
    # refuses these calls the same way).
    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    monkeypatch.setattr(os, "utime", refuse)
    forget_in_memory(monkeypatch)
    assert run_fresh(1.0) == (0, 1)                          # reading still works
    counts, messages = caught_warnings(lambda: (run_fresh(2.0), run_fresh(3.0)))
    assert counts == ((1, 0), (1, 0))
    assert len(messages) == 1 and "cannot write" in messages[0]
    assert "Permission denied" in messages[0]
    assert len(entries(cache)) == 1


def test_full_disk_warns_once_and_leaves_no_partial_file(cache, monkeypatch):
    real_fdopen = os.fdopen

    class FullDisk:
        def __init__(self, fd, mode):
            self.file = real_fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, data):
            self.file.write(data[:100])
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fdopen", FullDisk)
    counts, messages = caught_warnings(lambda: (run_fresh(1.0), run_fresh(2.0)))
    assert counts == ((1, 0), (1, 0))
    assert len(messages) == 1 and "disk is full" in messages[0]
    assert os.listdir(cache) == []


def test_unwritable_path_is_not_a_crash(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(xla, "_memory_cache", collections.OrderedDict())
    monkeypatch.setattr(compile_cache, "_warned", set())
    with config.compilation_cache_dir(str(tmp_path / "file" / "cache")):
        counts, messages = caught_warnings(run_fresh, 6.0)
    assert counts == (1, 0) and len(messages) == 1 and "cannot write" in messages[0]


def test_threads_compile_and_store_at_once(cache):
    results, errors = {}, []

    def work(k):
        # Config contexts are per-thread (as in JAX): each thread enters the fixture's.
        try:
            with config.compilation_cache_dir(str(cache)), config.executor("xla"):
                results[k] = run_fresh(float(k + 10))
        except Exception as err:   # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and sorted(results) == [0, 1, 2, 3]
    assert len(entries(cache)) == 4 and len(os.listdir(cache)) == 4


def test_explain_cache_misses_says_why_nothing_is_written(tmp_path, caplog):
    # JAX 0.10.2 logs these messages at WARNING (naming its module jit__lambda)
    fn = jnp.array(1, dtype=jnp.int32)
    with config.explain_cache_misses(True), config.compilation_cache_dir(str(tmp_path)), \
            config.persistent_cache_min_compile_time_secs(0), \
            caplog.at_level("DEBUG", logger="pyjax"):
        jax.jit(lambda x: x + jax.pure_callback(
            lambda a: fn, jax.ShapeDtypeStruct((), jnp.int32), x))(1)
        with config.persistent_cache_min_entry_size_bytes(10 ** 9):
            jax.jit(lambda x: x * 7919 + 2)(1)
        with config.persistent_cache_min_entry_size_bytes(1):
            jax.jit(lambda x: x * 7907 - 3)(1)
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any("Not writing persistent cache entry for 'jit__lambda_' because it uses host "
               "callbacks (e.g. from jax.debug.print or breakpoint)" == m for m in warned)
    assert any(m.startswith("PERSISTENT COMPILATION CACHE MISS for 'jit__lambda_' with key")
               for m in warned)
    assert any(m.startswith("Not writing persistent cache entry with key") and
               m.endswith("is less than threshold (1000000000 bytes)") for m in warned)
    assert any(m.startswith("Writing jit__lambda_ to persistent compilation cache with key")
               for m in warned)
