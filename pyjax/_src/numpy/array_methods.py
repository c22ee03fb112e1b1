"""Installs operators, methods and `.at[]` on Array and on every Tracer (the upward hook
of DESIGN.md: lower layers define the types, jax.numpy gives them NumPy's behaviour)."""
from __future__ import annotations

import importlib

from pyjax._src.array import Array
from pyjax._src.core.trace import Tracer
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.array_api_metadata import __array_namespace__
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf


def _defer_to_unrecognized(binary):
    """Return NotImplemented for operands jnp does not know, so Python tries the other
    side (e.g. a user class with __radd__)."""
    def op(self, other):
        if type(other) is not Array and not _is_operand(other):
            return NotImplemented
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


def _reshape_method(self, *args, order="C"):
    shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
    return lnp.reshape(self, shape, order)


def _transpose_method(self, *args):
    axes = args[0] if len(args) == 1 and (args[0] is None or isinstance(args[0], (tuple,
                                                                                 list))) \
        else (args or None)
    return lnp.transpose(self, axes)


def _astype(self, dtype, copy=False, device=None):
    return lnp.astype(self, dtype, copy=copy, device=device)


def _getitem(self, index):
    from pyjax._src.numpy import indexing
    return indexing.getitem(self, index)


def _at(self):
    from pyjax._src.numpy import indexing
    return indexing.IndexUpdateHelper(self)


def _deferred(module, name):
    """The method x.name(...) = jnp.name(x, ...), its module imported on first use (these
    modules stay out of `import pyjax`)."""
    def method(self, *args, **kwargs):
        return getattr(importlib.import_module(module), name)(self, *args, **kwargs)
    method.__name__ = name
    return method


def _compress(self, condition, axis=None, **kwargs):
    from pyjax._src.numpy.lax_numpy_more import compress
    return compress(condition, self, axis, **kwargs)   # jnp.compress takes the mask first


def _to_device(self, device, *, stream=None):
    from pyjax._src.api.devices import device_put
    return device_put(self, device)


_METHODS = {
    "reshape": _reshape_method, "transpose": _transpose_method, "astype": _astype,
    "ravel": lnp.ravel, "flatten": lambda self, order="C": lnp.ravel(self, order),
    "squeeze": lnp.squeeze, "swapaxes": lnp.swapaxes, "clip": lnp.clip,
    "round": uf.round, "dot": lnp.dot, "conj": uf.conjugate, "conjugate": uf.conjugate,
    "sum": red.sum, "prod": red.prod, "max": red.max, "min": red.min, "mean": red.mean,
    "var": red.var, "std": red.std, "any": red.any, "all": red.all,
    "argmax": red.argmax, "argmin": red.argmin, "cumsum": red.cumsum,
    "cumprod": red.cumprod, "ptp": red.ptp, "copy": lnp.copy, "clone": lnp.copy,
    "to_device": _to_device, "compress": _compress, "__getitem__": _getitem,
    "__array_namespace__": __array_namespace__,
    **{name: _deferred("pyjax._src.numpy.sorting", name)
       for name in ("sort", "argsort", "argpartition", "searchsorted")},
    **{name: _deferred("pyjax._src.numpy.indexing", name) for name in ("take", "nonzero")},
    **{name: _deferred("pyjax._src.numpy.lax_numpy_more", name)
       for name in ("repeat", "diagonal", "trace", "choose")},
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
