"""jax.experimental.pjit: `pjit`, JAX's former name for jit with shardings. JAX 0.10.2
deprecates it in favour of jax.jit (a DeprecationWarning on access), as here."""
import warnings

from pyjax._src.api.jit import jit

_DEPRECATED = ("jax.experimental.pjit.pjit has been deprecated. Please use `jax.jit` "
               "instead.")


def _pjit(fun, in_shardings=None, out_shardings=None, **jit_kwargs):
    """jit, with the shardings also accepted positionally (pjit's old signature)."""
    return jit(fun, in_shardings=in_shardings, out_shardings=out_shardings, **jit_kwargs)


def __getattr__(name):
    if name == "pjit":
        warnings.warn(_DEPRECATED, DeprecationWarning, stacklevel=2)
        return _pjit
    raise AttributeError(f"module 'pyjax.experimental.pjit' has no attribute {name!r}")
