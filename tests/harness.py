"""Pieces the test files share: the uniform rule harness's every registered primitive with
its samples and tolerances per dtype (each rule family -- core, autodiff, batching, XLA --
has a test file that iterates these), and small helpers: jit on a chosen executor, random
inputs, closeness checks, the bad-input table check, checks run in a fresh process."""
from __future__ import annotations

import importlib
import pkgutil

import numpy as np
import pytest

import pyjax
from pyjax._src import config
from pyjax._src.core.trace import (NO_BATCHING, NOT_DIFFERENTIABLE, _Declared, is_missing,
                                   registered_primitives)
from repo_paths import REPO_ROOT, TESTS_DIR

EXECUTORS = ["numpy", "xla"]


def import_every_module(package):
    """Imports `package` and every module below it, so that the primitives of families
    pyjax loads lazily (on first use of a public name) are registered too. Returns the
    names of the modules imported."""
    root = importlib.import_module(package)
    names = [package]
    for info in pkgutil.walk_packages(root.__path__, prefix=package + "."):
        importlib.import_module(info.name)
        names.append(info.name)
    return names


SRC_MODULES = import_every_module("pyjax._src")


def rule_gaps(slot, prims=None):
    """Primitives (all registered ones by default) whose rule `slot` is neither written nor
    declared absent, as readable lines: what the rule-completeness tests assert is empty.
    `samples` and `transpose` follow their own rules: collectives run only under an axis
    binding (the batching tests cover them), and only linear primitives need a transpose."""
    prims = registered_primitives() if prims is None else prims
    gaps = []
    for name, p in sorted(prims.items()):
        rule = getattr(p, slot)
        if slot == "jvp":
            gap = is_missing(rule) or not callable(rule) and rule is not NOT_DIFFERENTIABLE
        elif slot == "batch":
            gap = not rule and rule is not NO_BATCHING
        elif slot == "transpose":
            gap = p.is_linear and (is_missing(rule) or not callable(rule))
        elif slot == "samples":
            gap = not p.is_collective and not isinstance(rule, _Declared) and not (
                rule() if callable(rule) else rule)
        else:
            gap = is_missing(rule)
        if gap:
            gaps.append(f"{name}: no {slot} rule (write one, or declare its absence)")
    return gaps


COMPLETENESS_SLOTS = ("impl", "abstract_eval", "jvp", "transpose", "batch", "lower",
                      "samples")


def jit_on(executor, f, **kwargs):
    """jax.jit(f, **kwargs) run on the given executor."""
    jitted = pyjax.jit(f, **kwargs)

    def run(*args):
        with config.executor(executor):
            return jitted(*args)
    return run


def rand(shape, seed=0, dtype=np.float32):
    """Standard normal values of `shape`, the same for the same seed."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def close(a, b, tol=1e-5):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def bind_as_list(prim, params):
    """A function binding prim with params that returns its outputs as a list."""
    def f(*args):
        out = prim.bind(*args, **params)
        return list(out) if prim.multiple_results else [out]
    return f


def primitives_with_samples():
    """(primitive, samples) for every registered primitive, sorted by name. A primitive
    whose samples need tracing (higher-order ones) gives a callable that builds them."""
    return [(p, [] if isinstance(p.samples, _Declared) else
             list(p.samples() if callable(p.samples) else p.samples))
            for _, p in sorted(registered_primitives().items())]


def sample_cases():
    """pytest params: one (primitive, sample) per sample, with a readable id."""
    cases = []
    for prim, samples in primitives_with_samples():
        for i, sample in enumerate(samples):
            cases.append(pytest.param(prim, sample, id=f"{prim.name}-{i}"))
    return cases


def tolerance(dtype):
    dtype = np.dtype(dtype)
    if dtype.kind in "biu" or dtype.kind == "V":
        return 0, 0
    if dtype.itemsize <= 2:
        return 1e-2, 1e-2
    if dtype in (np.float32, np.complex64):
        return 1e-5, 1e-5
    return 1e-12, 1e-12


def assert_close(actual, expected, dtype=None, factor=1.0):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    rtol, atol = tolerance(dtype or expected.dtype)
    np.testing.assert_allclose(actual.astype(np.float64) if actual.dtype.kind != "c"
                               else actual, expected.astype(np.float64)
                               if expected.dtype.kind != "c" else expected,
                               rtol=rtol * factor, atol=atol * factor, equal_nan=True)


# Exception types that only ever mean "an internal bug leaked": never acceptable.
LEAKS = (AttributeError, KeyError, AssertionError, ZeroDivisionError, UnboundLocalError)


def bad_input_case(name, exc, match, fn):
    """One row of a bad-input table (the `test_*_bad_input.py` files): calling `fn` must
    raise `exc` with a message matching `match`."""
    return pytest.param(fn, exc, match, id=name)


def assert_named_error(fn, exc, match):
    """fn() raises `exc` matching `match`, a builtin or pyjax exception, never one of LEAKS
    unless the case names that type itself: where JAX raises it too (config's unknown-name
    AttributeError, str.format's KeyError/IndexError from jax.debug.print), pyjax must
    match JAX rather than rename it."""
    with pytest.raises(exc, match=match) as info:
        fn()
    if not issubclass(exc, LEAKS):
        assert not isinstance(info.value, LEAKS), repr(info.value)
    module = type(info.value).__module__
    assert module == "builtins" or module.startswith("pyjax"), type(info.value)


def raises_with(exc, fragment, fn, *args):
    """fn(*args) raises `exc` with `fragment` in its message (for check_* functions run
    in a subprocess, where the message is shown when it differs)."""
    try:
        fn(*args)
    except exc as e:
        assert fragment in str(e), str(e)
    else:
        raise AssertionError(f"{exc.__name__} not raised")


def run_checks(namespace):
    """Subprocess side of checks_in_process: runs every `check_*` function of a test
    module's namespace and prints {name: 'ok' | traceback} as JSON."""
    import json
    import traceback
    results = {}
    for name in sorted(n for n in namespace if n.startswith("check_")):
        try:
            namespace[name]()
            results[name] = "ok"
        except Exception:   # noqa: BLE001 - reported to the parent test, which fails
            results[name] = traceback.format_exc()
    print(json.dumps(results))


def checks_in_process(module, devices):
    """Runs the `check_*` functions of test module `module` (its name; test basenames are
    unique under tests/) in a fresh interpreter with `devices` CPU devices (a process's
    device count is fixed once XLA starts). Returns {check name: 'ok' | traceback}."""
    import json
    import os
    import subprocess
    import sys
    [path] = TESTS_DIR.rglob(f"{module}.py")
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT),
               XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    env.pop("PYJAX_EXECUTOR", None)
    code = (f"import sys; sys.path[:0] = [{str(TESTS_DIR)!r}, {str(path.parent)!r}]; "
            f"import harness, {module}; harness.run_checks(vars({module}))")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def checks_on_devices(namespace, devices):
    """The test of a module whose checks (its `check_*` functions, in `namespace`) need
    `devices` CPU devices: one case per check, all run in one fresh interpreter
    (checks_in_process) when the first case runs. Assign it to a `test_*` name after
    the checks."""
    module = namespace["__name__"].rsplit(".", 1)[-1]
    names = [n for n in namespace if n.startswith("check_")]
    results = {}

    @pytest.mark.parametrize("name", names)
    def test(name):
        if not results:
            try:
                results.update(checks_in_process(module, devices))
            except AssertionError as failure:   # the interpreter failed: so does each check
                results.update(dict.fromkeys(names, str(failure)))
        assert results[name] == "ok", results[name]
    return test
