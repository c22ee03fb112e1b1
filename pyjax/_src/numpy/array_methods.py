"""Installs operators, methods and `.at[]` on Array and on every Tracer (the upward hook
of DESIGN.md: lower layers define the types, jax.numpy gives them NumPy's behaviour)."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.numpy import array_manipulation as am
from pyjax._src.numpy import indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import sorting
from pyjax._src.numpy.array_api_metadata import __array_namespace__
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.shape_poly import is_symbolic_dim


def _defer_to_unrecognized(binary):
    """Return NotImplemented for operands jnp does not know, so Python tries the other
    side (e.g. a user class with __radd__); an object with __jax_array__ is that array."""
    def op(self, other):
        if is_symbolic_dim(other):   # a dimension size as a value (jax.export)
            other = st.dim_as_value(other)
        elif type(other) is not Array and not _is_operand(other):
            if not hasattr(other, "__jax_array__"):
                return NotImplemented
            other = other.__jax_array__()
        return binary(self, other)
    return op


def _is_operand(x):
    from pyjax._src.numpy.util import is_arraylike
    return is_arraylike(x)


def _swap(f):
    return lambda self, other: f(other, self)


_BINARY = {
    "add": uf.add, "sub": uf.subtract, "mul": uf.multiply, "truediv": uf.true_divide,
    "floordiv": uf.floor_divide, "mod": uf.remainder, "pow": uf.power,
    "matmul": lnp.matmul, "and": uf.bitwise_and, "or": uf.bitwise_or,
    "xor": uf.bitwise_xor, "lshift": uf.left_shift, "rshift": uf.right_shift,
    "divmod": uf.divmod,
}
_COMPARE = {"eq": uf.equal, "ne": uf.not_equal, "lt": uf.less, "le": uf.less_equal,
            "gt": uf.greater, "ge": uf.greater_equal}
_UNARY = {"neg": uf.negative, "pos": uf.positive, "abs": uf.absolute, "invert": uf.invert}


def _reshape_method(self, *args, order="C", out_sharding=None):
    shape = args[0] if len(args) == 1 else args   # one argument: an int or a sequence
    return lnp.reshape(self, shape, order, out_sharding=out_sharding)


def _transpose_method(self, *args):
    axes = args[0] if len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple,
                                                                                 list))) \
        else (args or None)
    return lnp.transpose(self, axes)


def _astype(self, dtype, copy=False, device=None):
    return lnp.astype(self, dtype, copy=copy, device=device)


def _view(self, dtype=None, type=None):
    """The same bits read as `dtype`; a wider or narrower dtype changes the size of the
    last axis (int16 (3,) -> int8 (6,)). bool reads as a byte, complex as a (re, im) pair."""
    if type is not None:
        raise NotImplementedError("the `type` argument of Array.view() is not supported")
    if dtype is None:
        return self
    dtype = dtypes.canonicalize_dtype(dtype)
    aval = get_aval(self)
    bits_in, bits_out = dtypes.itemsize_bits(aval.dtype), dtypes.itemsize_bits(dtype)
    if aval.ndim == 0:
        if bits_in != bits_out:
            raise ValueError(f"view() of a 0d array is only supported if the itemsize is "
                             f"unchanged: {aval.dtype} has {bits_in} bits, {dtype} "
                             f"{bits_out}.")
        return st.squeeze(_view(st.expand_dims(self, (0,)), dtype), (0,))
    if (aval.shape[-1] * bits_in) % bits_out:
        raise ValueError(f"When changing to a larger dtype, its size must be a divisor of "
                         f"the total size in bytes of the last axis of the array: "
                         f"{aval.shape[-1]} x {aval.dtype} cannot be read as {dtype}.")
    if aval.dtype == dtype:
        return self
    if aval.dtype == np.bool_:
        return _view(lnp.astype(self, np.uint8), dtype)
    if dtypes.is_complex(aval.dtype):   # interleave (re, im) as the last axis
        parts = lnp.stack([uf.real(self), uf.imag(self)], axis=-1)
        return _view(st.reshape(parts, aval.shape[:-1] + (2 * aval.shape[-1],)), dtype)
    if dtype == np.bool_:
        return lnp.astype(_view(self, np.uint8), np.bool_)
    if dtypes.is_complex(dtype):
        parts = lnp.astype(_view(self, dtypes.real_dtype(dtype)), dtype)
        return parts[..., 0::2] + 1j * parts[..., 1::2]
    if bits_in < bits_out:   # bitcast_convert_type merges a trailing axis of `factor`
        factor = bits_out // bits_in
        shape = aval.shape[:-1] + (aval.shape[-1] // factor, factor)
        return ew.bitcast_convert_type(st.reshape(self, shape), dtype)
    out = ew.bitcast_convert_type(self, dtype)
    if bits_in > bits_out:   # ... or splits each element into a new trailing axis
        out_shape = get_aval(out).shape
        out = st.reshape(out, out_shape[:-2] + (out_shape[-2] * out_shape[-1],))
    return out


def _getitem(self, index):
    return indexing.getitem(self, index)


def _at(self):
    return indexing.IndexUpdateHelper(self)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    return am.compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _to_device(self, device, *, stream=None):
    from pyjax._src.api.devices import device_put
    return device_put(self, device)


def _argsort(self, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    return sorting.argsort(self, axis, kind=kind, order=order, stable=stable,
                           descending=descending)


def _nonzero(self, *, fill_value=None, size=None):
    return indexing.nonzero(self, size=size, fill_value=fill_value)


def _var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         correction=None):
    return red.var(self, axis, dtype, out, ddof, keepdims, where=where,
                   correction=correction)


def _std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
         correction=None):
    return red.std(self, axis, dtype, out, ddof, keepdims, where=where,
                   correction=correction)


def _copy(self):
    return lnp.copy(self)


def _deepcopy(self, memo):
    return lnp.copy(self)


def _byteswap(self):
    """The array with the bytes of each element reversed (of the real and imaginary parts
    apart for complex, as NumPy's byteswap; the dtype stays, so the values change unless
    read back big-endian)."""
    dtype = get_aval(self).dtype
    if dtypes.is_complex(dtype):
        return ew.complex(_byteswap(uf.real(self)), _byteswap(uf.imag(self)))
    if np.dtype(dtype).itemsize == 1:
        return self
    as_bytes = _view(lnp.expand_dims(self, -1), np.uint8)   # (..., 1) -> (..., itemsize)
    return lnp.squeeze(_view(st.rev(as_bytes, (as_bytes.ndim - 1,)), get_aval(self).dtype),
                       -1)


def _flatten(self, order="C", *, out_sharding=None):
    return lnp.ravel(self, order, out_sharding=out_sharding)


def _contains(self, query):
    """`query in x`: as JAX, only a scalar searched in a 1-d array (NumPy's general rule
    has surprising results), and a string or None is a TypeError, not False."""
    if query is None or isinstance(query, str) or not _is_operand(query):
        raise TypeError(f"Array.__contains__: unsupported operand type {type(query)}.")
    if self.ndim != 1:
        raise ValueError("Array.__contains__: search array must be one-dimensional, got "
                         f"arr.shape={self.shape}.")
    if np.ndim(query) != 0:
        raise ValueError("Array.__contains__: query value must be a scalar, got "
                         f"query.shape={np.shape(query)}")
    return red.any(uf.equal(self, query))


def _dot(self, b, *, precision=None, preferred_element_type=None):
    """x.dot(b): jnp.dot, without jnp.dot's out_sharding (JAX's method has none)."""
    return lnp.dot(self, b, precision=precision,
                   preferred_element_type=preferred_element_type)


_METHODS = {
    "reshape": _reshape_method, "transpose": _transpose_method, "astype": _astype,
    "ravel": lnp.ravel, "flatten": _flatten,
    "squeeze": lnp.squeeze, "swapaxes": lnp.swapaxes, "clip": lnp.clip,
    "round": uf.round, "__round__": uf.round, "dot": _dot, "conj": uf.conjugate,
    "conjugate": uf.conjugate,
    "sum": red.sum, "prod": red.prod, "max": red.max, "min": red.min, "mean": red.mean,
    "var": _var, "std": _std, "any": red.any, "all": red.all,
    "argmax": red.argmax, "argmin": red.argmin, "cumsum": red.cumsum,
    "cumprod": red.cumprod, "ptp": red.ptp, "copy": _copy, "clone": _copy,
    "__copy__": _copy, "__deepcopy__": _deepcopy,
    "to_device": _to_device, "compress": _compress, "__getitem__": _getitem,
    "view": _view, "byteswap": _byteswap, "__contains__": _contains,
    "__array_namespace__": __array_namespace__,
    "sort": sorting.sort, "argsort": _argsort, "argpartition": sorting.argpartition,
    "searchsorted": sorting.searchsorted, "take": indexing.take, "nonzero": _nonzero,
    "repeat": am.repeat, "diagonal": am.diagonal, "trace": am.trace, "choose": am.choose,
}
_PROPERTIES = {
    "T": lambda self: lnp.transpose(self),
    "mT": lambda self: lnp.matrix_transpose(self),
    "real": lambda self: uf.real(self),
    "imag": lambda self: uf.imag(self),
    "at": _at,
}


def install(cls):
    for name, fn in _BINARY.items():
        setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
        setattr(cls, f"__r{name}__", _defer_to_unrecognized(_swap(fn)))
    for name, fn in _COMPARE.items():
        setattr(cls, f"__{name}__", _defer_to_unrecognized(fn))
    for name, fn in _UNARY.items():
        setattr(cls, f"__{name}__", fn)
    for name, fn in _METHODS.items():
        setattr(cls, name, fn)
    for name, fn in _PROPERTIES.items():
        setattr(cls, name, property(fn))


install(Array)
install(Tracer)
