"""Configuration flags (level 0): read from the environment at import, changed with
`config.update(name, value)` or a flag's context manager. Imports nothing from pyjax."""
from __future__ import annotations

import contextlib
import os


def _parse_bool(text):
    return text.strip().lower() in ("1", "true", "yes", "on")


class Flag:
    """One option. `.value` is read on hot paths, so it is a plain attribute."""

    def __init__(self, name, default, parse, help, affects_tracing=False, on_change=None):
        self.name, self.parse, self.help = name, parse, help
        self.affects_tracing = affects_tracing
        self.on_change = on_change
        env = os.environ.get(name.upper())
        self.value = parse(env) if env is not None else default

    def set(self, value):
        self.value = value
        config.version += 1
        if self.on_change:
            self.on_change(value)

    @contextlib.contextmanager
    def __call__(self, value=True):
        """Use as `with config.enable_x64(True): ...`; restores the old value on exit."""
        old = self.value
        self.set(value)
        try:
            yield
        finally:
            self.set(old)

    def __bool__(self):
        return bool(self.value)

    def __repr__(self):
        return f"Flag({self.name}={self.value!r})"


def _optional_str(text):
    return text or None


class Config:
    def __init__(self):
        self._flags = {}
        # Bumped on every change of any option: fast paths cache against it.
        self.version = 0
        self._tracing_flags = []     # read on every jit call: kept as a list

    def define(self, name, default, parse, help, **kwargs):
        flag = Flag(name, default, parse, help, **kwargs)
        self._flags[name] = flag
        if flag.affects_tracing:
            self._tracing_flags.append(flag)
        return flag

    def update(self, name, value):
        """Sets the option `name` (e.g. "jax_enable_x64") for the rest of the process."""
        try:
            flag = self._flags[name]
        except KeyError:
            raise AttributeError(
                f"Unrecognized config option: {name!r}. Known options: "
                f"{', '.join(sorted(self._flags))}") from None
        flag.set(value if not isinstance(value, str) else flag.parse(value))

    def read(self, name):
        return self._flags[name].value

    def __getattr__(self, name):
        flags = self.__dict__.get("_flags", {})
        if name in flags:
            return flags[name].value
        raise AttributeError(f"Unrecognized config option: {name!r}")

    def trace_state(self):
        """The option values that change what tracing produces: part of every jit cache key."""
        return tuple([f.value for f in self._tracing_flags])


config = Config()

enable_x64 = config.define(
    "jax_enable_x64", False, _parse_bool,
    "Enable 64-bit types; when off, 64-bit requests become 32-bit.", affects_tracing=True)
disable_jit_flag = config.define(
    "jax_disable_jit", False, _parse_bool,
    "Run jitted functions op by op (for debugging).")
debug_nans = config.define(
    "jax_debug_nans", False, _parse_bool,
    "Raise FloatingPointError when an operation produces a NaN.", affects_tracing=True)
debug_infs = config.define(
    "jax_debug_infs", False, _parse_bool,
    "Raise FloatingPointError when an operation produces an inf.", affects_tracing=True)
numpy_rank_promotion = config.define(
    "jax_numpy_rank_promotion", "allow", str,
    "What jnp does on implicit rank promotion: allow, warn or raise.", affects_tracing=True)
check_tracer_leaks = config.define(
    "jax_check_tracer_leaks", False, _parse_bool,
    "Check, when a trace ends, that none of its tracers escaped.")
platforms = config.define(
    "jax_platforms", None, _optional_str,
    "Comma-separated platforms to use, in order of preference (e.g. 'cpu').")
executor = config.define(
    "pyjax_executor", "xla", str,
    "Which executor runs jitted code: 'xla' (jaxlib's compiler) or 'numpy'.")
num_cpu_devices = config.define(
    "jax_num_cpu_devices", -1, int,
    "Number of CPU devices to create (before the first use of the backend).")
compilation_cache_dir = config.define(
    "jax_compilation_cache_dir", None, _optional_str,
    "Directory of the persistent compilation cache (off when unset).")
log_compiles = config.define(
    "jax_log_compiles", False, _parse_bool,
    "Log every compilation with the reason for it.")
explain_cache_misses = config.define(
    "jax_explain_cache_misses", False, _parse_bool,
    "Explain, on each jit retrace, what changed since the closest earlier call.")
default_matmul_precision = config.define(
    "jax_default_matmul_precision", None, _optional_str,
    "Default precision for matmul-like operations.", affects_tracing=True)
