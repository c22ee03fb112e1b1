"""jax.config covers JAX 0.10.2's options (recorded in data/jax-config-options.json): every
one is accepted with JAX's default, the ones that only concern JAX-internal choices or
missing features are documented in docs/config.md, unknown names raise, and the options
that take effect do what JAX's do."""
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
import threading

import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax
from pyjax._src import config as config_mod
from repo_paths import DATA_DIR, REPO_ROOT

JAX_OPTIONS = json.loads((DATA_DIR / "jax-config-options.json").read_text())["options"]
# pyjax's defaults that differ from JAX's on purpose (docs/config.md says why).
DIFFERENT_DEFAULTS = {
    "jax_compilation_cache_max_size": 256 * 2**20,   # JAX: -1 (no limit)
    "jax_persistent_cache_min_compile_time_secs": 0.0,   # JAX: 1.0
    "jax_transfer_guard": "allow", "jax_transfer_guard_host_to_device": "allow",
    "jax_transfer_guard_device_to_device": "allow",
    "jax_transfer_guard_device_to_host": "allow",   # JAX: None, which means allow
}


# Set by the environment this suite runs in (conftest.py), not by pyjax.
SET_BY_THE_TESTS = {"jax_compilation_cache_dir"}


@pytest.mark.parametrize("name", sorted(JAX_OPTIONS))
def test_every_jax_option_is_accepted_with_jax_default(name):
    assert name in jax.config._flags, f"JAX 0.10.2's option {name} is missing"
    value = getattr(jax.config, name)
    if name in SET_BY_THE_TESTS:
        return
    assert value == DIFFERENT_DEFAULTS.get(name, JAX_OPTIONS[name])


def test_no_effect_options_are_documented():
    docs = (REPO_ROOT / "docs" / "config.md").read_text()
    assert set(config_mod.NO_EFFECT) <= set(JAX_OPTIONS)
    for name, why in config_mod.NO_EFFECT.items():
        assert f"| `{name}` |" in docs and why in docs, name
        assert "no effect in pyjax" in jax.config._flags[name].help
    effective = set(JAX_OPTIONS) - set(config_mod.NO_EFFECT)
    assert {"jax_numpy_rank_promotion", "jax_default_matmul_precision",
            "jax_persistent_cache_min_compile_time_secs", "jax_no_execution",
            "jax_allow_f16_reductions"} <= effective


def test_unknown_and_removed_options_raise():
    with pytest.raises(AttributeError, match="Unrecognized config option: 'jax_no_such'"):
        jax.config.update("jax_no_such", 1)
    with pytest.raises(AttributeError, match="JAX removed dynamic shapes"):
        jax.config.update("jax_dynamic_shapes", True)
    with pytest.raises(ValueError, match="must be one of"):
        jax.config.update("jax_optimization_level", "O7")


def test_allow_f16_reductions():
    with jax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[4\] is not allowed "
                                             "when jax_allow_f16_reductions=False."):
            lax.reduce_sum(jnp.ones(4, jnp.float16), (0,))
        with pytest.raises(ValueError, match="jax_allow_f16_reductions"):
            jax.jit(lambda a: lax.reduce_sum(a, (0,)))(jnp.ones(4, jnp.bfloat16))
        assert lax.reduce_sum(jnp.ones((4, 1), jnp.float16), (1,)).tolist() == [1.0] * 4
        assert jnp.ones(4, jnp.float16).sum() == 4.0   # jnp.sum accumulates in float32
    assert lax.reduce_sum(jnp.ones(4, jnp.float16), (0,)) == 4.0


def test_no_execution():
    f = jax.jit(lambda a: a + 1)
    assert f(1.0) == 2.0
    with jax.no_execution(True):
        with pytest.raises(RuntimeError, match="JAX tried to execute function <lambda>, but "
                                               "the no_execution config option is set"):
            f(1.0)
        compiled = f.lower(1.0).compile()   # tracing, lowering and compiling still work
        with pytest.raises(RuntimeError, match="no_execution"):
            compiled(1.0)
    assert f(1.0) == 2.0


def test_user_context_keys_jit_caches():
    ctx = jax.make_user_context(0)
    traces = []

    @jax.jit
    def g(a):
        traces.append(ctx.value)
        return a * 2
    g(1.0)
    with ctx(1):
        g(1.0)
    g(1.0)
    assert traces == [0, 1]


def test_user_context_block_holds_in_its_own_thread_only():
    # Recorded from JAX 0.10.2: another thread reads 0 while this one reads 5.
    ctx = jax.make_user_context(0)
    seen = []
    asked, answered = threading.Event(), threading.Event()

    def other():
        asked.wait()
        seen.append(ctx.value)
        answered.set()
    t = threading.Thread(target=other)
    t.start()
    with ctx(5):
        asked.set()
        answered.wait()
        seen.append(ctx.value)
    t.join()
    assert seen == [0, 5] and ctx.value == 0


def test_thread_guard():
    with jax.thread_guard(True):
        config_mod.check_thread_guard("here")   # the thread that set it
        errors = []

        def other():
            try:
                config_mod.check_thread_guard("a multi-process program")
            except RuntimeError as e:
                errors.append(str(e))
        t = threading.Thread(target=other)
        t.start()
        t.join()
    assert errors and "thread other than the one that set jax_thread_guard" in errors[0]


def test_logging_and_platform_options():
    loggers = [logging.getLogger("jax"), logging.getLogger("jaxlib")]
    old = [logger.level for logger in loggers]
    try:
        jax.config.update("jax_logging_level", "DEBUG")
        assert [logger.level for logger in loggers] == [logging.DEBUG] * 2
        assert all(config_mod._level_handler in logger.handlers for logger in loggers)
        # None takes the handlers off and leaves the levels as the last value set them
        # (JAX 0.10.2 records each logger's level after setting it)
        jax.config.update("jax_logging_level", None)
        assert [logger.level for logger in loggers] == [logging.DEBUG] * 2
        assert not any(config_mod._level_handler in logger.handlers for logger in loggers)
    finally:
        jax.config.update("jax_logging_level", "NOTSET")
        jax.config.update("jax_logging_level", None)
        for logger, level in zip(loggers, old):
            logger.setLevel(level)
    with pytest.raises(NotImplementedError, match="Gloo only"):
        jax.config.update("jax_cpu_collectives_implementation", "mpi")
    assert jax.config.jax_cpu_collectives_implementation == "gloo"


def test_default_device_option():
    device = jax.devices()[0]
    try:
        jax.config.update("jax_default_device", device)
        assert (jnp.ones(2) + 1).devices() == {device}
        jax.config.update("jax_default_device", "cpu")
        assert (jnp.ones(2) + 1).devices() == {device}
    finally:
        jax.config.update("jax_default_device", None)


def test_no_effect_options_keep_their_values():
    with jax.auto_pcast(False):
        assert jax.config.jax_auto_pcast is False
    assert jax.config.jax_auto_pcast is True
    for name in ("jax2tf_associative_scan_reductions", "jax_remove_size_one_mesh_axis_from_type"):
        assert getattr(jax, name.removeprefix("jax_")).value is False


class _Records(logging.Handler):
    def __init__(self):
        super().__init__()
        self.records = []

    def emit(self, record):
        self.records.append((record.name, record.getMessage()))


def _jit_log_records(modules):
    """(logger, message) of the records a fresh jit's first call gives the "jax" logger
    while jax_debug_log_modules is `modules`."""
    handler = _Records()
    logging.getLogger("jax").addHandler(handler)
    try:
        jax.config.update("jax_debug_log_modules", modules)
        jax.jit(lambda x: x + 1)(1)
    finally:
        jax.config.update("jax_debug_log_modules", "")
        logging.getLogger("jax").removeHandler(handler)
    return handler.records


def test_debug_log_modules_name_jax_loggers():
    # JAX 0.10.2 logs tracing and compile times under jax._src.dispatch and "Compiling
    # ..." under jax._src.interpreters.pxla; jax_debug_log_modules names those loggers.
    records = _jit_log_records("jax")
    assert any(name == "jax._src.dispatch"
               and message.startswith("Finished tracing <lambda> for jit in ")
               for name, message in records), records
    assert ("jax._src.interpreters.pxla",
            "Compiling jit(<lambda>) with global shapes and types (ShapedArray(int32[], "
            "weak_type=True),). Argument mapping: (UnspecifiedValue,).") in records, records
    assert any(message.startswith("Finished XLA compilation of jit(<lambda>) in ")
               for _, message in records)
    only_dispatch = _jit_log_records("jax._src.dispatch")
    assert {name for name, _ in only_dispatch} == {"jax._src.dispatch"}
    assert _jit_log_records("") == []
    assert logging.getLogger("jax").level == logging.NOTSET
    assert config_mod._debug_handler not in logging.getLogger("jax").handlers


def test_logging_level_from_the_environment_logs_to_stderr():
    program = textwrap.dedent("""
        import sys
        import pyjax as jax
        jax.jit(lambda x: x)(1)
        jax.config.update("jax_logging_level", None)
        sys.stderr.write("-----")
        jax.jit(lambda x: x)(1)
    """)
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT), JAX_LOGGING_LEVEL="DEBUG")
    err = subprocess.run([sys.executable, "-c", program], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stderr
    verbose, silent = err.split("-----")
    # JAX's format: {levelname}:{asctime}:{name}:{lineno}: {message}
    assert re.search(r"DEBUG:[-\d :,]+:jax\._src\.dispatch:\d+: Finished tracing <lambda> "
                     r"for jit in ", verbose), verbose
    assert silent == ""
