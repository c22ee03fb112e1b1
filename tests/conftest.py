"""Test-wide setup, the one conftest of tests/.

- The persistent compilation cache (on by default) goes to a temporary directory of this
  test process, removed at exit, so tests never touch the user's cache and each run starts
  cold. Subprocesses that tests start inherit it through the environment.
- tests/ is on sys.path, so test files in every topic folder import the shared helpers
  (`harness`, `repo_paths`) by name. Test basenames are unique across the folders: pytest
  imports each file by its basename.
- `executor`: a fixture running a test once per executor this process can run (XLA only
  when it is the default, that is when jaxlib is there)."""
import atexit
import os
import shutil
import sys
import tempfile

import pytest

_cache_dir = tempfile.mkdtemp(prefix="pyjax-test-cache-")
atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache_dir

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)

from pyjax._src import config  # noqa: E402  (after the cache directory is set)

RUNNABLE_EXECUTORS = ["xla", "numpy"] if config.executor.value == "xla" else ["numpy"]


@pytest.fixture(params=RUNNABLE_EXECUTORS)
def executor(request):
    with config.executor(request.param):
        yield request.param
