"""jax.experimental.pjit: `pjit`, JAX's former name for jit with shardings. JAX 0.10.2
deprecates it in favour of jax.jit (a DeprecationWarning on access), as here."""
import warnings

from pyjax._src import tree_util
from pyjax._src.api.jit import jit
from pyjax._src.sharding import NamedSharding, PartitionSpec, Sharding, current_mesh

_DEPRECATED = ("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` "
               "instead.")


def _pjit(fun, in_shardings=None, out_shardings=None, **jit_kwargs):
    """jit, with the shardings also accepted positionally (pjit's old signature); its
    bare PartitionSpecs name the mesh of `with mesh:` (jit's need jax.set_mesh)."""
    mesh = current_mesh()
    if mesh is not None:
        named = lambda s: NamedSharding(mesh, s) if isinstance(s, PartitionSpec) else s
        is_leaf = lambda s: s is None or isinstance(s, (PartitionSpec, Sharding))
        in_shardings, out_shardings = (tree_util.tree_map(named, s, is_leaf=is_leaf)
                                       for s in (in_shardings, out_shardings))
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings, **jit_kwargs)


def __getattr__(name):
    if name == "pjit":
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module 'pyjax.experimental.pjit' has no attribute {name!r}")
