"""Test-wide setup: the persistent compilation cache (on by default) goes to a temporary
directory of this test process, removed at exit, so tests never touch the user's cache
and each run starts cold. Subprocesses that tests start inherit it through the
environment."""
import atexit
import os
import shutil
import tempfile

_cache_dir = tempfile.mkdtemp(prefix="pyjax-test-cache-")
atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
os.environ["JAX_COMPILATION_CACHE_DIR"] = _cache_dir
