"""pyjax: JAX's programming model rebuilt in Python. `import pyjax as jax` and
`import pyjax.numpy as jnp` give composable transformations (jit, grad, vmap, ...) over a
NumPy-style API on immutable arrays. Re-exports only; the machinery is in pyjax._src."""
from pyjax._src.backends import numpy_backend as _numpy_backend  # noqa: F401  (eval trace)
from pyjax._src.lax import lax as _lax_families  # noqa: F401  (registers primitives)

from pyjax import config, errors, lax, nn, numpy, test_util, tree_util  # noqa: F401  (public)
from pyjax import ad_checkpoint, debug, experimental, random, scipy  # noqa: F401  (public)
from pyjax._src.lax.callbacks import effects_barrier, pure_callback  # noqa: F401
from pyjax._src.api.jit import jit  # noqa: F401
from pyjax._src.api.autodiff import (  # noqa: F401
    grad, hessian, jacfwd, jacobian, jacrev, jvp, linear_transpose, linearize, value_and_grad,
    vjp,
)
from pyjax._src.api.checkpoint import checkpoint, checkpoint_policies, remat  # noqa: F401
from pyjax._src.api.custom_derivatives import (  # noqa: F401
    closure_convert, custom_jvp, custom_vjp,
)
from pyjax._src.api.devices import (  # noqa: F401
    block_until_ready, default_backend, default_device, device_count, device_get,
    device_put, devices, local_device_count, local_devices, process_count, process_index,
)
from pyjax._src.api.pmap import pmap  # noqa: F401
from pyjax._src.api.shapes import ShapeDtypeStruct, eval_shape, make_jaxpr  # noqa: F401
from pyjax._src.api.vmap import vmap  # noqa: F401
from pyjax._src.array import Array  # noqa: F401
from pyjax._src.config import config as _config_object
from pyjax._src.dtypes import float0  # noqa: F401
from pyjax._src.tree_util import (  # noqa: F401
    tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten,
)

__version__ = "0.1.0"

enable_x64 = _config_object._flags["jax_enable_x64"]
disable_jit = _config_object._flags["jax_disable_jit"]
debug_nans = _config_object._flags["jax_debug_nans"]
debug_infs = _config_object._flags["jax_debug_infs"]
checking_leaks = _config_object._flags["jax_check_tracer_leaks"]
numpy_rank_promotion = _config_object._flags["jax_numpy_rank_promotion"]
