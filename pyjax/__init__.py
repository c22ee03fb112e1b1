"""pyjax: JAX's programming model rebuilt in Python. `import pyjax as jax` and
`import pyjax.numpy as jnp` give composable transformations (jit, grad, vmap, ...) over a
NumPy-style API on immutable arrays. Re-exports only; the machinery is in pyjax._src."""
from pyjax._src.backends import eager as _eager  # noqa: F401  (installs the root trace)
from pyjax._src.lax import lax as _lax_families  # noqa: F401  (registers primitives)

from pyjax import config, core, dtypes, errors, lax, numpy, tree_util  # noqa: F401  (public)
from pyjax._src.lax.callbacks import effects_barrier, pure_callback  # noqa: F401
from pyjax._src.api.jit import jit  # noqa: F401
from pyjax._src.api.autodiff import (  # noqa: F401
    fwd_and_bwd, grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize,
    value_and_grad, vjp,
)
from pyjax._src.api.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from pyjax._src.api.custom_derivatives import (  # noqa: F401
    closure_convert, custom_jvp, custom_vjp,
)
from pyjax._src.api.devices import (  # noqa: F401
    block_until_ready, default_backend, default_device, device_count, device_get,
    device_put, devices, local_device_count, local_devices, process_count, process_index,
)
from pyjax._src.api.environment import (  # noqa: F401
    clear_caches, copy_to_host_async, host_count, host_id, host_ids, live_arrays,
    print_environment_info, process_indices,
)
from pyjax._src.api.pmap import pmap  # noqa: F401
from pyjax._src.api.shard_map import shard_map, smap  # noqa: F401
from pyjax._src.api.devices import (  # noqa: F401
    make_array_from_callback, make_array_from_process_local_data,
    make_array_from_single_device_arrays)
from pyjax._src.sharding import NamedSharding, P, make_mesh, set_mesh  # noqa: F401
from pyjax import distributed, sharding  # noqa: F401
from pyjax._src.api.tracing_tools import (  # noqa: F401
    custom_gradient, ensure_compile_time_eval, named_call, named_scope, typeof,
)
from pyjax._src.backends.devices import Device  # noqa: F401
from pyjax._src.api.shapes import ShapeDtypeStruct, eval_shape, make_jaxpr  # noqa: F401
from pyjax._src.api.vmap import vmap  # noqa: F401
from pyjax._src.basearray import Array  # noqa: F401
from pyjax._src.config import config as _config_object
from pyjax._src.config import make_user_context  # noqa: F401
from pyjax._src.config import disable_jit  # noqa: F401
from pyjax._src.dtypes import float0  # noqa: F401
from pyjax._src.jax_alias import alias_jax  # noqa: F401
from pyjax._src.state.refs import Ref, empty_ref, free_ref, freeze, new_ref  # noqa: F401
from pyjax._src.numpy.indexing import ds  # noqa: F401
from pyjax._src.array import Shard  # noqa: F401
from pyjax._src.lax.sharding_constraint import reshard  # noqa: F401

from pyjax._src.version import __version__, __version_info__  # noqa: F401
from pyjax import version  # noqa: F401

enable_x64 = _config_object._flags["jax_enable_x64"]
debug_nans = _config_object._flags["jax_debug_nans"]
debug_infs = _config_object._flags["jax_debug_infs"]
checking_leaks = _config_object._flags["jax_check_tracer_leaks"]
numpy_rank_promotion = _config_object._flags["jax_numpy_rank_promotion"]
check_tracer_leaks = _config_object._flags["jax_check_tracer_leaks"]
default_matmul_precision = _config_object._flags["jax_default_matmul_precision"]
explain_cache_misses = _config_object._flags["jax_explain_cache_misses"]
log_compiles = _config_object._flags["jax_log_compiles"]
numpy_dtype_promotion = _config_object._flags["jax_numpy_dtype_promotion"]
threefry_partitionable = _config_object._flags["jax_threefry_partitionable"]
default_prng_impl = _config_object._flags["jax_default_prng_impl"]
enable_checks = _config_object._flags["jax_enable_checks"]
transfer_guard = _config_object._flags["jax_transfer_guard"]
transfer_guard_host_to_device = _config_object._flags["jax_transfer_guard_host_to_device"]
transfer_guard_device_to_device = _config_object._flags["jax_transfer_guard_device_to_device"]
transfer_guard_device_to_host = _config_object._flags["jax_transfer_guard_device_to_host"]
no_tracing = _config_object._flags["jax_no_tracing"]
legacy_prng_key = _config_object._flags["jax_legacy_prng_key"]
softmax_custom_jvp = _config_object._flags["jax_softmax_custom_jvp"]
enable_custom_prng = _config_object._flags["jax_enable_custom_prng"]
debug_key_reuse = _config_object._flags["jax_debug_key_reuse"]
allow_f16_reductions = _config_object._flags["jax_allow_f16_reductions"]
array_garbage_collection_guard = _config_object._flags["jax_array_garbage_collection_guard"]
auto_pcast = _config_object._flags["jax_auto_pcast"]
jax2tf_associative_scan_reductions = _config_object._flags["jax2tf_associative_scan_reductions"]
no_execution = _config_object._flags["jax_no_execution"]
remove_size_one_mesh_axis_from_type = _config_object._flags[
    "jax_remove_size_one_mesh_axis_from_type"]
thread_guard = _config_object._flags["jax_thread_guard"]

# Optional public submodules load on first attribute access (PEP 562) to keep import cheap;
# `import pyjax.random` and `jax.random.key(0)` behave as if they had been imported eagerly.
_LAZY_SUBMODULES = ("ad", "ad_checkpoint", "api_util", "custom_batching", "custom_derivatives",
                    "debug", "experimental", "export", "extend", "ffi", "image", "interpreters",
                    "memory", "nn", "ops", "profiler", "random", "ref", "scipy", "stages",
                    "test_util", "tree", "typing")


# Names JAX 0.10.2 removed, with the AttributeError message JAX gives for them.
_REMOVED = {
    "device_put_replicated": "jax.device_put_replicated is deprecated; use jax.device_put "
                             "instead. See https://docs.jax.dev/en/latest/migrate_pmap.html"
                             "#drop-in-replacements for a drop-in replacement.",
    "device_put_sharded": "jax.device_put_sharded is deprecated; use jax.device_put instead."
                          " See https://docs.jax.dev/en/latest/migrate_pmap.html"
                          "#drop-in-replacements for a drop-in replacement.",
}


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib
        return importlib.import_module(f"pyjax.{name}")
    if name in _REMOVED:
        raise AttributeError(_REMOVED[name])
    raise AttributeError(f"module 'pyjax' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
