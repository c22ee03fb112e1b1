"""Configuration flags (level 0): read from the environment at import, changed with
`config.update(name, value)` or a flag's context manager. Imports nothing from pyjax."""
from __future__ import annotations

import contextlib
import enum
import itertools
import logging
import os
import sys
import threading

import numpy as np


def _parse_bool(text):
    word = text.strip().lower()
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("", "0", "false", "no", "off"):
        return False
    raise ValueError(f"invalid truth value {text!r}: use one of true/false, 1/0, yes/no, "
                     "on/off")


# The values that `with flag(value):` blocks give options, per thread (as in JAX, a
# context manager changes an option for its own thread only): name -> stack of values.
_thread_contexts = threading.local()
_contexts_lock = threading.Lock()


class Flag:
    """One option. `.value` is read on hot paths: the global value, unless some thread is
    inside a `with flag(value):` block (then that thread's innermost value)."""

    def __init__(self, name, default, parse, help, affects_tracing=False, on_change=None,
                 choices=None, read_at_backend_start=False):
        self.name, self.parse, self.help = name, parse, help
        self.affects_tracing = affects_tracing
        # an option the backend reads once as it starts: changing it later is refused
        self.read_at_backend_start = read_at_backend_start
        self.fixed = False
        self.on_change = on_change
        self.choices = choices
        self._contexts = 0   # `with flag(value):` blocks open, in all threads
        env = os.environ.get(name.upper())
        self.global_value = self._checked(parse(env)) if env is not None else default

    @property
    def value(self):
        if self._contexts:
            stack = _thread_contexts.__dict__.get(self.name)
            if stack:
                return stack[-1]
        return self.global_value

    @value.setter
    def value(self, value):
        self.global_value = value

    def _checked(self, value):
        # A bad value would otherwise be stored and misread far from here.
        if self.parse is _parse_bool and not isinstance(value, bool):
            if isinstance(value, str):
                try:
                    value = _parse_bool(value)
                except ValueError as e:
                    raise ValueError(f"config option {self.name!r}: {e}") from None
            elif isinstance(value, (int, np.bool_, np.integer)) and value in (0, 1):
                value = bool(value)
            else:
                raise TypeError(f"config option {self.name!r} takes a bool, got {value!r} of "
                                f"type {type(value).__name__}.")
        if isinstance(self.parse, enum.EnumMeta) and not isinstance(value, self.parse):
            try:
                value = self.parse(value)
            except ValueError:
                pass   # refused just below, with the choices named
        if self.choices is not None and value not in self.choices:
            raise ValueError(f"config option {self.name!r}: new value must be one of "
                             f"{list(self.choices)}, got {value!r} of type "
                             f"{type(value).__name__}.")
        return value

    def set(self, value):
        """Sets the global value (a thread's open `with` blocks still override it there)."""
        value = self._checked(value)
        if self.fixed and value != self.global_value:
            raise RuntimeError(
                f"{self.name} config should be updated before backends are initialized "
                "i.e. before any JAX operation is executed. You should initialize this "
                "config immediately after `import jax`.")
        self.global_value = value
        config.changed()
        if self.on_change:
            self.on_change(self.value)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        """Use as `with config.enable_x64(True): ...`: the option has `new_val` in this
        thread until the block ends; other threads keep theirs."""
        stack = _thread_contexts.__dict__.setdefault(self.name, [])
        stack.append(self._checked(new_val))
        self._enter_or_leave(+1)
        try:
            yield
        finally:
            stack.pop()
            self._enter_or_leave(-1)

    def _enter_or_leave(self, step):
        with _contexts_lock:
            self._contexts += step
            config.thread_contexts += step
        _thread_contexts.version = config.changed()
        if self.on_change:
            self.on_change(self.value)

    def __bool__(self):
        return bool(self.value)

    def __repr__(self):
        return f"Flag({self.name}={self.value!r})"


def _optional_str(text):
    return text or None


# Options JAX had and removed, with what to do instead (JAX 0.10.2 refuses them too).
_REMOVED_OPTIONS = {
    "jax_dynamic_shapes": "JAX removed dynamic shapes (jax_dynamic_shapes) and pyjax has "
                          "static shapes only: pad to a fixed size, or retrace per shape. ",
}


class Config:
    def __init__(self):
        self._flags = {}
        self._changes = itertools.count(1)
        self.global_version = 0
        self.thread_contexts = 0     # `with flag(value):` blocks open, in all threads
        self._tracing_flags = []     # read on every jit call: kept as a list
        self._parsed_absl_flags = False

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
            why = _REMOVED_OPTIONS.get(name, "")
            raise AttributeError(
                f"Unrecognized config option: {name!r}. {why}Known options: "
                f"{', '.join(sorted(self._flags))}") from None
        if isinstance(value, str):
            try:
                value = flag.parse(value)
            except ValueError as e:
                raise ValueError(f"config option {name!r}: {e}") from None
        flag.set(value)

    def read(self, name):
        return self._flags[name].value

    def backends_started(self):
        """Called once the backend has read its start-up options: from now on they keep
        their values (as JAX refuses to change them once backends are initialized)."""
        for flag in self._flags.values():
            if flag.read_at_backend_start:
                flag.fixed = True

    @property
    def version(self):
        """Changes whenever an option's value may have changed in this thread: fast
        paths cache against it. An int while no thread is inside a `with flag(value):`
        block, else (global changes, this thread's last block entered or left)."""
        if not self.thread_contexts:
            return self.global_version
        return self.global_version, getattr(_thread_contexts, "version", 0)

    def changed(self):
        """Records a change of some option; returns its number."""
        n = self.global_version = next(self._changes)
        return n

    _read = read   # JAX's spelling, used by code written against jax.config

    @property
    def x64_enabled(self):
        return self._flags["jax_enable_x64"].value

    def __getattr__(self, name):
        flags = self.__dict__.get("_flags", {})
        if name in flags:
            return flags[name].value
        raise AttributeError(f"Unrecognized config option: {name!r}")

    def config_with_absl(self):
        """Registers an absl flag for each option (`--jax_enable_x64` ...); after
        `absl.app.run` parses the command line, options given there take effect. Call it
        before `app.run(main)`; needs absl-py."""
        from absl import app, flags as absl_flags
        defines = {bool: absl_flags.DEFINE_bool, int: absl_flags.DEFINE_integer,
                   float: absl_flags.DEFINE_float}
        for name, flag in self._flags.items():
            if name in absl_flags.FLAGS:
                continue
            define = defines.get(type(flag.value), absl_flags.DEFINE_string)
            default = flag.value if type(flag.value) in defines or flag.value is None \
                else str(flag.value)
            define(name, default, flag.help)
        app.call_after_init(lambda: self._apply_absl_flags(absl_flags.FLAGS))

    def parse_flags_with_absl(self):
        """Registers the absl flags (as config_with_absl) and applies the `--jax*`
        arguments of the command line (before any `--`) now, without absl.app.run;
        once per process. Test suites call it at import."""
        from absl import flags as absl_flags
        with _contexts_lock:
            if self._parsed_absl_flags:
                return
            self._parsed_absl_flags = True
        argv = itertools.takewhile(lambda a: a != "--", sys.argv)
        self.config_with_absl()
        absl_flags.FLAGS(["", *(a for a in argv if a.startswith("--jax"))], known_only=True)
        self._apply_absl_flags(absl_flags.FLAGS)

    def _apply_absl_flags(self, absl_values):
        for name in self._flags:
            if name in absl_values and absl_values[name].present:
                self.update(name, absl_values[name].value)

    def trace_state(self):
        """The option values that change what tracing produces: part of every jit cache key."""
        return tuple([f.value for f in self._tracing_flags])


config = Config()

enable_x64 = config.define(
    "jax_enable_x64", False, _parse_bool,
    "Enable 64-bit types; when off, 64-bit requests become 32-bit.", affects_tracing=True)


class ExplicitX64Mode(enum.IntEnum):
    """What an explicitly requested 64-bit dtype (dtype=jnp.float64, astype("int64"), ...)
    does while jax_enable_x64 is off: WARN truncates it to 32 bits with a UserWarning,
    ERROR raises ValueError, ALLOW keeps it (the array is 64-bit)."""
    WARN = 1
    ERROR = 2
    ALLOW = 3

    @classmethod
    def _missing_(cls, value):
        return cls.__members__.get(value.upper()) if isinstance(value, str) else None


explicit_x64_dtypes = config.define(
    "jax_explicit_x64_dtypes", ExplicitX64Mode.WARN, ExplicitX64Mode,
    "What explicitly requested 64-bit dtypes do while jax_enable_x64 is off: 'warn' "
    "(truncate to 32 bits with a warning), 'error' (raise ValueError) or 'allow' (keep "
    "them).", affects_tracing=True, choices=tuple(ExplicitX64Mode))
disable_jit_flag = config.define(
    "jax_disable_jit", False, _parse_bool,
    "Run jitted functions op by op (for debugging).")


def disable_jit(disable: bool = True):
    """`with jax.disable_jit(): ...`: jitted functions run op by op in this thread."""
    return disable_jit_flag(disable)


debug_nans = config.define(
    "jax_debug_nans", False, _parse_bool,
    "Raise FloatingPointError when an operation produces a NaN.", affects_tracing=True)
debug_infs = config.define(
    "jax_debug_infs", False, _parse_bool,
    "Raise FloatingPointError when an operation produces an inf.", affects_tracing=True)
check_static_indices = config.define(
    "jax_check_static_indices", False, _parse_bool,
    "Raise IndexError for a static integer index out of bounds when indexing an array in "
    "mode='promise_in_bounds' (x[i] and x.at[i].get()).", affects_tracing=True)
numpy_rank_promotion = config.define(
    "jax_numpy_rank_promotion", "allow", str,
    "What jnp does on implicit rank promotion: allow, warn or raise.", affects_tracing=True,
    choices=("allow", "warn", "raise"))
remove_size_one_mesh_axis_from_type = config.define(
    "jax_remove_size_one_mesh_axis_from_type", False, _parse_bool,
    "Treat mesh axes of size 1 as absent where values are typed by axes: e.g. "
    "lax.pcast(x, name, to='varying') over such an axis is no cast at all.",
    affects_tracing=True)
disable_vmap_shmap_error = config.define(
    "jax_disable_vmap_shmap_error", False, _parse_bool,
    "Let a shard_map under vmap(spmd_axis_name=...) name those mesh axes in its specs "
    "(the batch then stays whole on each device) instead of raising.",
    affects_tracing=True)
auto_pcast = config.define(
    "jax_auto_pcast", True, _parse_bool,
    "Inside shard_map (check_vma=True), cast operands that vary along fewer manual axes "
    "than the others to vary along them too (an implicit pvary), instead of raising.",
    affects_tracing=True)
traceback_filtering = config.define(
    "jax_traceback_filtering", "auto", str,
    "How an exception leaving a JAX API call shows pyjax's frames: off, tracebackhide, "
    "remove_frames, quiet_remove_frames, or auto (tracebackhide under IPython, else "
    "quiet_remove_frames).",
    choices=("off", "tracebackhide", "remove_frames", "quiet_remove_frames", "auto"))
captured_constants_warn_bytes = config.define(
    "jax_captured_constants_warn_bytes", 2000000000, int,
    "Warn when the constants a jitted function captures add up to at least this many "
    "bytes as it is lowered (-1: never).")
captured_constants_report_frames = config.define(
    "jax_captured_constants_report_frames", 0, int,
    "With that warning, name where the largest constants are used (0: no report; "
    "otherwise the report is given).")
check_tracer_leaks = config.define(
    "jax_check_tracer_leaks", False, _parse_bool,
    "Check, when a trace ends, that none of its tracers escaped.")
platforms = config.define(
    "jax_platforms", None, _optional_str,
    "Comma-separated platforms to use, in order of preference (e.g. 'cpu').")
executor = config.define(
    "pyjax_executor", "xla", str,
    "Which executor runs jitted code: 'xla' (jaxlib's compiler) or 'numpy'.",
    choices=("xla", "numpy"))
num_cpu_devices = config.define(
    "jax_num_cpu_devices", -1, int,
    "Number of CPU devices to create (before the first use of the backend).",
    read_at_backend_start=True)
cpu_enable_async_dispatch = config.define(
    "jax_cpu_enable_async_dispatch", True, _parse_bool,
    "Run XLA:CPU programs on a worker thread, so Python goes on while they run (results "
    "are futures); off, each call returns once its program has run (less latency for "
    "small programs). Read when the backend starts.")
enable_compilation_cache = config.define(
    "jax_enable_compilation_cache", True, _parse_bool,
    "Keep compiled programs in the persistent compilation cache on disk, so later "
    "processes skip XLA's compiler for them (JAX_ENABLE_COMPILATION_CACHE=0 turns it "
    "off).")
compilation_cache_dir = config.define(
    "jax_compilation_cache_dir", None, _optional_str,
    "Directory of the persistent compilation cache; unset, PYJAX_CACHE_DIR, else "
    "$XDG_CACHE_HOME/pyjax, else ~/.cache/pyjax.")
persistent_cache_min_compile_time_secs = config.define(
    "jax_persistent_cache_min_compile_time_secs", 0.0, float,
    "Only programs whose compile took at least this many seconds are saved in the "
    "persistent cache (0: all; XLA:CPU takes 0.1 s and more even for tiny programs, while "
    "loading one back takes milliseconds).")
persistent_cache_min_entry_size_bytes = config.define(
    "jax_persistent_cache_min_entry_size_bytes", 0, int,
    "Only entries of at least this many bytes are saved in the persistent cache.")
compilation_cache_max_size = config.define(
    "jax_compilation_cache_max_size", 256 * 2**20, int,
    "Most bytes the persistent cache directory may hold: past it, the least recently used "
    "entries are removed (-1: no limit; 0: no cache).")
log_compiles = config.define(
    "jax_log_compiles", False, _parse_bool,
    "Log every compilation with the reason for it.")
log_checkpoint_residuals = config.define(
    "jax_log_checkpoint_residuals", False, _parse_bool,
    "Log the residuals each differentiated checkpoint saves at WARNING rather than DEBUG.")


def compile_log_level():
    """The level of the tracing and compiling log lines (JAX's): WARNING under
    jax_log_compiles, else DEBUG."""
    return logging.WARNING if log_compiles.value else logging.DEBUG


explain_cache_misses = config.define(
    "jax_explain_cache_misses", False, _parse_bool,
    "Explain, on each jit retrace, what changed since the closest earlier call.")
retrace_warning_threshold = config.define(
    "pyjax_retrace_warning_threshold", 8, int,
    "Warn once when one jitted function (one function object, however often jit wraps it) "
    "has traced more than this many times, saying what differed between its last calls "
    "and how to avoid it (0: never).")
packed_results = config.define(
    "pyjax_packed_results", True, _parse_bool,
    "Keep a jitted training step's parameters and optimizer state in one buffer from "
    "call to call, once its results are passed back to it (a step over many small "
    "arrays then spends far less time in XLA's runtime; see "
    "docs/architecture.md, 'Packed results'). Off: every result has its own buffer.")
default_matmul_precision = config.define(
    "jax_default_matmul_precision", None, _optional_str,
    "Default precision for matmul-like operations: a lax.Precision name or the name of a "
    "lax.DotAlgorithmPreset.", affects_tracing=True,
    choices=(None, "default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
             "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
             "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
             "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
             "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64"))
numpy_dtype_promotion = config.define(
    "jax_numpy_dtype_promotion", "standard", str,
    "Implicit dtype promotion in jnp: 'standard' (JAX's lattice) or 'strict' (operands of "
    "different dtypes raise TypePromotionError; only weak Python scalars mix).",
    affects_tracing=True, choices=("standard", "strict"))
threefry_partitionable = config.define(
    "jax_threefry_partitionable", True, _parse_bool,
    "Generate random bits and split keys with the partitionable threefry scheme (each "
    "value hashes its own index); False gives the original scheme's values.",
    affects_tracing=True)
default_prng_impl = config.define(
    "jax_default_prng_impl", "threefry2x32", str,
    "The PRNG implementation of new keys and of raw uint32 keys: 'threefry2x32', 'rbg', "
    "'unsafe_rbg', 'philox2x32', 'philox4x32' or 'threefry4x32'.",
    choices=("threefry2x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32", "threefry4x32"))
enable_custom_prng = config.define(
    "jax_enable_custom_prng", False, _parse_bool,
    "jax.random returns typed keys (jax.random.key's kind) even for raw uint32 keys and "
    "from PRNGKey, and warns (FutureWarning) when given a raw key.")
random_seed_offset = config.define(
    "jax_random_seed_offset", 0, int,
    "Added to every seed given to jax.random.key and jax.random.PRNGKey (e.g. to give "
    "each of several otherwise identical processes its own random stream).")


def _refuse_key_reuse_checks(value):
    if value:
        config._flags["jax_debug_key_reuse"].value = False
        raise NotImplementedError(
            "jax_debug_key_reuse=True (checking that no PRNG key is used twice) is not "
            "implemented in pyjax; leave it False.")


debug_key_reuse = config.define(
    "jax_debug_key_reuse", False, _parse_bool,
    "Check that no typed PRNG key is consumed twice: not implemented in pyjax (setting it "
    "to True raises NotImplementedError).", on_change=_refuse_key_reuse_checks)
export_calling_convention_version = config.define(
    "jax_export_calling_convention_version", 10, int,
    "The calling convention version jax.export writes into an Exported (JAX's "
    "jax.export.minimum_supported_calling_convention_version to the maximum).")
enable_checks = config.define(
    "jax_enable_checks", False, _parse_bool,
    "Type-check every traced jaxpr (check_jaxpr) as it is built.")
_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
transfer_guard_host_to_device = config.define(
    "jax_transfer_guard_host_to_device", "allow", str,
    "Guard for host-to-device transfers (jit arguments that are not jax Arrays are "
    "implicit; device_put is explicit).", choices=_GUARD_LEVELS)
transfer_guard_device_to_device = config.define(
    "jax_transfer_guard_device_to_device", "allow", str,
    "Guard for copies between devices (device_put to another device is explicit).",
    choices=_GUARD_LEVELS)
transfer_guard_device_to_host = config.define(
    "jax_transfer_guard_device_to_host", "allow", str,
    "Guard for device-to-host transfers (device_get is explicit).", choices=_GUARD_LEVELS)


def _set_all_transfer_guards(level):
    for flag in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                 transfer_guard_device_to_host):
        flag.set(level)


transfer_guard = config.define(
    "jax_transfer_guard", "allow", str,
    "Guard for all transfer directions at once (sets the three direction options).",
    on_change=_set_all_transfer_guards, choices=_GUARD_LEVELS)
array_garbage_collection_guard = config.define(
    "jax_array_garbage_collection_guard", None, _optional_str,
    "What happens when Python's cycle collector (not reference counting) frees a "
    "jax.Array: 'allow' (None, the default: nothing), 'log' (a message with where the "
    "Array was made, on stderr) or 'fatal' (that message, then the process aborts). Arrays "
    "made while the option is 'allow' are not watched.",
    choices=(None, "allow", "log", "fatal"))
no_tracing = config.define(
    "jax_no_tracing", False, _parse_bool,
    "Disallow tracing for jit: a call that would trace (a cache miss) raises RuntimeError.")
legacy_prng_key = config.define(
    "jax_legacy_prng_key", "allow", str,
    "What jax.random does with raw uint32 keys (jax.random.PRNGKey): 'allow', 'warn' or "
    "'error' (typed keys from jax.random.key are always accepted).",
    choices=("allow", "warn", "error"))
softmax_custom_jvp = config.define(
    "jax_softmax_custom_jvp", False, _parse_bool,
    "jax.nn.softmax differentiates with its custom JVP rule (y * (t - sum(y * t))); off "
    "(JAX's default), autodiff goes through the stable forward computation instead.",
    affects_tracing=True)
allow_f16_reductions = config.define(
    "jax_allow_f16_reductions", True, _parse_bool,
    "If False, reduce_sum over float16 or bfloat16 operands (along any axis longer than "
    "1) raises ValueError.", affects_tracing=True)
no_execution = config.define(
    "jax_no_execution", False, _parse_bool,
    "Disallow executing compiled programs: calling a jitted or AOT-compiled function "
    "raises RuntimeError (tracing, lowering and compiling still work).")


class _GuardingThread:
    ident = None   # the thread that turned jax_thread_guard on


_guarding_thread = _GuardingThread()


def _record_guarding_thread(value):
    _guarding_thread.ident = threading.get_ident() if value else None


thread_guard = config.define(
    "jax_thread_guard", False, _parse_bool,
    "If True, a multi-process operation (a program over devices of several processes) "
    "called from a thread other than the one that set the guard raises RuntimeError.",
    on_change=_record_guarding_thread)


def check_thread_guard(where):
    """Raises if jax_thread_guard is on and this thread is not the one that set it."""
    owner = _guarding_thread.ident   # set while the guard is on in its own thread
    if owner is not None and owner != threading.get_ident():
        raise RuntimeError(
            f"{where}: a multi-process operation was called from a thread other than the "
            "one that set jax_thread_guard; run multi-process programs from that thread "
            "(threads may otherwise schedule them in different orders in each process).")


class UserContext(Flag):
    """A value jit's caches key on (jax.make_user_context): when it changes, jitted
    functions trace, lower and compile again. `with ctx(v):` sets it for a block, in this
    thread only (as JAX's contexts and every other option's)."""

    _made = itertools.count()

    def __init__(self, default_value=None):
        # The name only identifies it in per-thread stacks; no environment variable is
        # spelled like it.
        super().__init__(f"make_user_context#{next(self._made)}", default_value,
                         lambda value: value, "jax.make_user_context", affects_tracing=True)
        config._tracing_flags.append(self)

    def get_global(self):
        return self.global_value

    def set_global(self, new_value):
        self.set(new_value)

    def __repr__(self):
        return f"UserContext({self.value!r})"


# The platforms jax.export traces a function for (a tuple, None outside an export):
# lax.platform_dependent picks its branch by them, so jit's caches key on them.
export_platforms = UserContext(None)


def make_user_context(default_value=None):
    """A new jit-cache-sensitive context (see UserContext); make them at import time,
    not concurrently with other calls."""
    return UserContext(default_value)



def _refuse_other_collectives(value):
    if value not in (None, "gloo"):
        config._flags["jax_cpu_collectives_implementation"].value = "gloo"
        raise NotImplementedError(
            f"jax_cpu_collectives_implementation={value!r}: pyjax runs collectives between "
            "processes with Gloo only; leave it 'gloo'.")


cpu_collectives_implementation = config.define(
    "jax_cpu_collectives_implementation", "gloo", _optional_str,
    "Collectives between processes on CPU: pyjax uses Gloo ('mpi' and 'megascale' are "
    "refused).", choices=(None, "gloo", "mpi", "megascale"),
    on_change=_refuse_other_collectives)


# --- JAX's logging set-up: pyjax logs under JAX's logger names (jax._src.dispatch: tracing
# and compile times, jax._src.interpreters.pxla: "Compiling ...", ...), so programs that
# configure the "jax" loggers see its records, and the two options act as JAX's do.
_log_formatter = logging.Formatter("{levelname}:{asctime}:{name}:{lineno}: {message}",
                                   style="{")
_level_handler = logging.StreamHandler(sys.stderr)
_level_handler.setFormatter(_log_formatter)
_debug_handler = logging.StreamHandler(sys.stderr)
_debug_handler.setLevel(logging.DEBUG)
_debug_handler.setFormatter(_log_formatter)
# the per-module handler stays quiet while jax_logging_level already logs DEBUG to stderr
_debug_handler.addFilter(lambda record: logging.getLogger("jax").level > logging.DEBUG)
_logging_lock = threading.Lock()
_level_set: dict[str, int] = {}                      # logger name -> level set on it
_debug_enabled: list[tuple[logging.Logger, int]] = []  # (logger, its level before)


_CPP_MIN_LOG_LEVELS = {"CRITICAL": 3, "ERROR": 2, "WARNING": 1, "INFO": 0, "DEBUG": 0}


def cpp_min_log_level():
    """The least severity XLA's C++ code logs under jax_logging_level (0 INFO ... 3
    FATAL), or None while it is unset (XLA keeps its own)."""
    level = logging_level.value
    return None if level in (None, "NOTSET") else _CPP_MIN_LOG_LEVELS[level]


def _set_logging_level(level):
    """jax_logging_level: the level of the "jax" and "jaxlib" loggers, which then log to
    stderr (None: leave them as they are), and of XLA's C++ logging."""
    jaxlib_utils = sys.modules.get("jaxlib.utils")   # once loaded (xla_runtime sets it then)
    if jaxlib_utils is not None and level not in (None, "NOTSET"):
        jaxlib_utils.absl_set_min_log_level(_CPP_MIN_LOG_LEVELS[level])
    with _logging_lock:
        for name, previous in _level_set.items():
            logger = logging.getLogger(name)
            logger.removeHandler(_level_handler)
            logger.setLevel(previous)
        _level_set.clear()
        if level is None:
            return
        number = logging.getLevelName(level)
        for logger in (logging.getLogger("jax"), logging.getLogger("jaxlib")):
            logger.setLevel(number)
            if number != logging.NOTSET:
                logger.addHandler(_level_handler)
            _level_set[logger.name] = logger.level


logging_level = config.define(
    "jax_logging_level", logging.getLevelName(logging.getLogger("jax").level),
    _optional_str,
    "The level of the 'jax' and 'jaxlib' loggers, which log to stderr at it (None: leave "
    "them as they are).", on_change=_set_logging_level,
    choices=(None, "NOTSET", "DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))


def _enable_debug_logging(modules):
    """jax_debug_log_modules: the named loggers (and the modules below them) log
    everything to stderr; the loggers enabled before go back to their levels."""
    with _logging_lock:
        for logger, previous in _debug_enabled:
            logger.removeHandler(_debug_handler)
            logger.setLevel(previous)
        _debug_enabled.clear()
        for module in modules.split(",") if modules else ():
            logger = logging.getLogger(module)
            _debug_enabled.append((logger, logger.level))
            logger.addHandler(_debug_handler)
            logger.setLevel(logging.DEBUG)


debug_log_modules = config.define(
    "jax_debug_log_modules", "", str,
    "Comma-separated logger names (e.g. 'jax' or 'jax._src.dispatch,jax._src.compiler') "
    "that log at DEBUG level to stderr.", on_change=_enable_debug_logging)
# values given by the environment (JAX_LOGGING_LEVEL=DEBUG python ...) take effect at once
_set_logging_level(logging_level.value)
_enable_debug_logging(debug_log_modules.value)
platform_name = config.define(
    "jax_platform_name", "", str,
    "Deprecated spelling of jax_platforms: setting it sets jax_platforms.",
    on_change=lambda value: config.update("jax_platforms", value or None))

# --- JAX's other options ------------------------------------------------------------------
# pyjax accepts every option of JAX 0.10.2 (tests/data/jax-config-options.json lists them).
# These have no effect in pyjax, for the reason given; docs/config.md has the table.
_INTERNAL = "chooses between JAX-internal implementations; pyjax has one"
_XLA_TUNING = "tunes XLA's compiler or compilation cache in ways pyjax does not pass on"
_NO_PLATFORM = "concerns a platform or service pyjax does not drive (GPU, TPU, Pallas, ...)"
_NO_FEATURE = "concerns a JAX feature pyjax does not have"


def _levels(*names):
    return dict(parse=str, choices=names)


_NO_EFFECT_OPTIONS = [
    # (name, default, why, how to parse / the accepted values)
    ("check_vma", False, _INTERNAL, {}),
    ("eager_constant_folding", False, _INTERNAL, {}),
    ("jax2tf_associative_scan_reductions", False,
     _INTERNAL + " (cumulative reductions lower one way)", {}),
    ("jax_custom_vjp3", False, _INTERNAL, {}),
    ("jax_remat3", False, _INTERNAL, {}),
    ("jax_scan3", False, _INTERNAL, {}),
    ("jax_use_direct_linearize", True, _INTERNAL, {}),
    ("jax_use_simplified_jaxpr_constants", False, _INTERNAL, {}),
    ("jax_use_shardy_partitioner", True, _INTERNAL + " (pyjax prints GSPMD shardings)", {}),
    ("jax_use_emit_pipeline_primitive", False, _INTERNAL, {}),
    ("jax_mutable_array_checks", True, _INTERNAL + " (pyjax runs refs eagerly only)", {}),
    ("jax_refs_to_pins", False, _INTERNAL, {}),
    ("jax_disable_bwd_checks", False, _INTERNAL, {}),
    ("jax_embedded_constants_max_bytes", 32, _INTERNAL, dict(parse=int)),
    ("jax_include_full_tracebacks_in_locations", True, _INTERNAL, {}),
    ("jax_traceback_in_locations_limit", 100, _INTERNAL, dict(parse=int)),
    ("jax_hlo_source_file_canonicalization_regex", None, _INTERNAL,
     dict(parse=_optional_str)),
    ("jax_send_traceback_to_runtime", "off", _INTERNAL, _levels("off", "on", "full")),
    ("jax_threefry_gpu_kernel_lowering", False, _NO_PLATFORM, {}),
    ("jax_ragged_dot_use_ragged_dot_instruction", True, _NO_PLATFORM, {}),
    ("jax_ragged_dot_use_gpu_pallas_triton_lowering", False, _NO_PLATFORM, {}),
    ("jax_bcoo_cusparse_lowering", False, _NO_PLATFORM, {}),
    ("jax_use_magma", "auto", _NO_PLATFORM, _levels("off", "on", "auto")),
    ("jax_cuda_visible_devices", "all", _NO_PLATFORM, dict(parse=str)),
    ("jax_rocm_visible_devices", "all", _NO_PLATFORM, dict(parse=str)),
    ("jax_oneapi_visible_devices", "all", _NO_PLATFORM, dict(parse=str)),
    ("jax_mock_gpu_topology", "", _NO_PLATFORM, dict(parse=str)),
    ("mock_num_gpu_processes", 0, _NO_PLATFORM, dict(parse=int)),
    ("jax_pallas_enable_debug_checks", False, _NO_PLATFORM, {}),
    ("jax_pallas_poison_buffers", False, _NO_PLATFORM, {}),
    ("jax_pallas_use_mosaic_gpu", True, _NO_PLATFORM, {}),
    ("jax_pallas_verbose_errors", False, _NO_PLATFORM, {}),
    ("jax_mosaic_allow_hlo", False, _NO_PLATFORM, {}),
    ("jax_enable_preemption_service", True, _NO_PLATFORM, {}),
    ("jax_enable_recoverability", False, _NO_PLATFORM, {}),
    ("jax_backend_target", "", _NO_PLATFORM, dict(parse=str)),
    ("jax_xla_backend", "", _NO_PLATFORM, dict(parse=str)),
    ("jax_pjrt_client_create_options", None, _NO_PLATFORM, dict(parse=_optional_str)),
    ("jax_cross_host_transfer_socket_address", "", _NO_PLATFORM, dict(parse=str)),
    ("jax_cross_host_transfer_timeout_seconds", None, _NO_PLATFORM,
     dict(parse=_optional_str)),
    ("jax_cross_host_transfer_transfer_size", None, _NO_PLATFORM, dict(parse=_optional_str)),
    ("jax_cross_host_transport_addresses", "", _NO_PLATFORM, dict(parse=str)),
    ("jax_force_dcn_cross_host_transfers", False, _NO_PLATFORM, {}),
    ("jax_cpu_get_global_topology_timeout_minutes", 5, _NO_PLATFORM, dict(parse=int)),
    ("jax_cpu_get_local_topology_timeout_minutes", 2, _NO_PLATFORM, dict(parse=int)),
    ("jax_check_proxy_envs", True, _NO_PLATFORM, {}),
    ("jax_sort_devices_by_process_index", True, _NO_PLATFORM, {}),
    ("jax_debug_leaked_clients_on_clear_backends", False, _NO_PLATFORM, {}),
    ("jax_compiler_enable_remat_pass", True, _XLA_TUNING, {}),
    ("jax_exec_time_optimization_effort", 0.0, _XLA_TUNING, dict(parse=float)),
    ("jax_memory_fitting_effort", 0.0, _XLA_TUNING, dict(parse=float)),
    ("jax_memory_fitting_level", "O2", _XLA_TUNING,
     _levels("UNKNOWN", "O0", "O1", "O2", "O3")),
    ("jax_optimization_level", "UNKNOWN", _XLA_TUNING,
     _levels("UNKNOWN", "O0", "O1", "O2", "O3")),
    ("jax_disable_most_optimizations", False, _XLA_TUNING, {}),
    ("jax_xla_profile_version", 0, _XLA_TUNING, dict(parse=int)),
    ("jax_enable_pgle", False, _XLA_TUNING, {}),
    ("jax_pgle_profiling_runs", 3, _XLA_TUNING, dict(parse=int)),
    ("jax_pgle_aggregation_percentile", 90, _XLA_TUNING, dict(parse=int)),
    ("jax_compilation_cache_expect_pgle", False, _XLA_TUNING, {}),
    ("jax_compilation_cache_include_metadata_in_key", False, _XLA_TUNING, {}),
    ("jax_compilation_cache_check_contents", False, _XLA_TUNING, {}),
    ("jax_raise_persistent_cache_errors", False, _XLA_TUNING, {}),
    ("jax_remove_custom_partitioning_ptr_from_cache_key", False, _XLA_TUNING, {}),
    ("jax_persistent_cache_enable_xla_caches", "xla_gpu_per_fusion_autotune_cache_dir",
     _XLA_TUNING, dict(parse=_optional_str)),
    ("jax_share_binary_between_hosts", False, _XLA_TUNING, {}),
    ("jax_share_binary_between_hosts_timeout_ms", 1200000, _XLA_TUNING, dict(parse=int)),
    ("jax_compiler_detailed_logging_min_ops", 10, _XLA_TUNING, dict(parse=int)),
    ("jax2tf_default_native_serialization", True, _NO_FEATURE + " (jax2tf)", {}),
    ("jax_export_ignore_forward_compatibility", False, _NO_FEATURE + " (jax.export)", {}),
    ("jax_serialization_version", 0, _NO_FEATURE + " (jax.export)", dict(parse=int)),
    ("jax_experimental_unsafe_xla_runtime_errors", False,
     _NO_FEATURE + " (XLA runtime errors for checkify)", {}),
    ("jax_error_checking_behavior_divide", "ignore",
     _NO_FEATURE + " (jax.experimental.error_check)", _levels("ignore", "raise")),
    ("jax_error_checking_behavior_nan", "ignore",
     _NO_FEATURE + " (jax.experimental.error_check)", _levels("ignore", "raise")),
    ("jax_error_checking_behavior_oob", "ignore",
     _NO_FEATURE + " (jax.experimental.error_check)", _levels("ignore", "raise")),
    ("jax_source_url_schema", None, _NO_FEATURE + " (HTML jaxpr dumps)",
     dict(parse=_optional_str)),
    ("jax_include_debug_info_in_dumps", True, _NO_FEATURE + " (IR dumps)", {}),
    ("jax_dump_ir_to", "", _NO_FEATURE + " (IR dumps; use jit(f).lower(...).as_text())",
     dict(parse=str)),
    ("jax_dump_ir_modes", "stablehlo", _NO_FEATURE + " (IR dumps)", dict(parse=str)),
    ("jax_pprint_use_color", True, _NO_FEATURE + " (colored pretty-printing)", {}),
    ("jax_distributed_debug", False, _NO_FEATURE + " (distributed debug logging)", {}),
    ("jax_tracer_error_num_traceback_frames", 5, _NO_FEATURE, dict(parse=int)),
    ("jax_high_dynamic_range_gumbel", False, _NO_FEATURE + " (two-sample gumbel)", {}),
    ("jax_disallow_mesh_context_manager", False, _NO_FEATURE, {}),
]
NO_EFFECT = {}   # option name -> why it has no effect in pyjax
for _name, _default, _why, _how in _NO_EFFECT_OPTIONS:
    NO_EFFECT[_name] = _why
    config.define(_name, _default, _how.get("parse", _parse_bool),
                  f"Accepted for compatibility with JAX; no effect in pyjax: it {_why}.",
                  choices=_how.get("choices"))
