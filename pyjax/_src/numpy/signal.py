"""jax.numpy's 1-D convolve and correlate, each one lax.conv_general_dilated (as the
Thinking-in-JAX guide shows). Imports lax, the other jnp modules and dtypes."""
from __future__ import annotations

from pyjax._src.lax import structural as st
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy import util

_MODES = ("full", "same", "valid")


def _conv_1d(name, a, v, mode, precision, preferred_element_type, correlate):
    from pyjax._src.lax import convolution  # loaded on first use, to keep import cheap
    util.check_arraylike(name, a, v)
    a, v = lnp.asarray(a), lnp.asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError(f"{name}() only support 1-dimensional inputs, got shapes "
                         f"{a.shape} and {v.shape}.")
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}, got {mode!r}")
    if preferred_element_type is None:   # NumPy's convention: an inexact result
        a, v = util.promote_dtypes_inexact(a, v)
    else:
        a, v = util.promote_dtypes(a, v)
    if a.shape[0] == 0 or v.shape[0] == 0:
        raise ValueError(f"{name}: inputs cannot be empty, got shapes {a.shape} and "
                         f"{v.shape}.")
    backwards = False
    if correlate:
        v = ufuncs.conjugate(v)
        if a.shape[0] < v.shape[0]:   # slide the shorter one; the lags come out reversed
            a, v, backwards = v, a, True
    else:
        if a.shape[0] < v.shape[0]:   # convolution commutes
            a, v = v, a
        v = st.rev(v, (0,))
    m = v.shape[0]
    padding = {"valid": (0, 0), "same": (m // 2, m - 1 - m // 2), "full": (m - 1, m - 1)}
    out = convolution.conv_general_dilated(
        lnp.reshape(a, (1, 1, -1)), lnp.reshape(v, (1, 1, -1)), (1,), [padding[mode]],
        precision=precision, preferred_element_type=preferred_element_type)
    out = lnp.reshape(out, (-1,))
    return st.rev(out, (0,)) if backwards else out


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays: c[k] = sum_j a[k - j] v[j]. Modes
    'full' (every overlap), 'same' (length max(len(a), len(v)), centred) and 'valid'
    (complete overlaps only). Integer inputs give a float result unless
    preferred_element_type says otherwise."""
    return _conv_1d("convolve", a, v, mode, precision, preferred_element_type, False)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays: c[k] = sum_n a[n + k] conj(v[n])."""
    return _conv_1d("correlate", a, v, mode, precision, preferred_element_type, True)


__all__ = ["convolve", "correlate"]
