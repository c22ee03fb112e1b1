"""Test-wide setup, the one conftest of tests/.

- The persistent compilation cache (on by default) goes to a temporary directory of this
  test process, removed at exit, so tests never touch the user's cache and each run starts
  cold. Subprocesses that tests start inherit it through the environment.
- tests/ is on sys.path, so test files in every topic folder import the shared helpers
  (`harness`, `repo_paths`) by name. Test basenames are unique across the folders: pytest
  imports each file by its basename."""
import atexit
import os
import shutil
import sys
import tempfile

_cache_dir = tempfile.mkdtemp(prefix="pyjax-test-cache-")
atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache_dir

_TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
if _TESTS_DIR not in sys.path:
    sys.path.insert(0, _TESTS_DIR)
