"""Shared jnp plumbing: argument checks, JAX's dtype promotion of operands (weak Python
scalars yield), NumPy-style rank promotion for lax's equal-rank operations."""
from __future__ import annotations

import warnings

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.array import Array, as_array
from pyjax._src.core.avals import JAX_ARRAY_ABSTRACTIFIED, refuse_masked
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reshaping
from pyjax._src.lax import structural as st


def is_arraylike(x):
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic)) or \
        dtypes.is_python_scalar(x)


def extended_dtype(x):
    """The extended dtype (e.g. key<fry>) of an array of one (a typed PRNG key array),
    else None. jnp's structural functions work on such arrays through their physical
    data (dtypes.ExtendedDType.to_physical)."""
    dtype = getattr(x, "dtype", None)
    return dtype if isinstance(dtype, dtypes.ExtendedDType) else None


def check_arraylike(name, *args):
    """jnp functions take arrays and scalars, not lists or tuples (as in JAX). A pytree
    with a __jax_array__ method (a flax Variable) stands for the array it returns: JAX's
    jnp functions are jitted, so such a pytree reaches them rebuilt around tracers."""
    for i, x in enumerate(args):
        if not is_arraylike(x) and getattr(x, "__jax_array__", None) is not None:
            if tree_util.is_tree_node(type(x)):
                continue
            raise ValueError(JAX_ARRAY_ABSTRACTIFIED)
        if not is_arraylike(x):
            if extended_dtype(x) is not None:
                refuse_extended(name, args)
            hint = (" Use jnp.array(x) or jnp.asarray(x) to convert a list or tuple."
                    if isinstance(x, (list, tuple)) else "")
            raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(x)} at "
                            f"position {i}.{hint}")
        if type(x) is int:
            _check_python_int(name, i, x)
        refuse_masked(x)


def ensure_arraylike(name, *args):
    """check_arraylike, then each argument as the array it stands for (an object with a
    __jax_array__ method is what that returns), as JAX's ensure_arraylike: one argument
    alone, else a tuple."""
    check_arraylike(name, *args)
    out = tuple(map(jax_array_protocol, args))
    return out[0] if len(out) == 1 else out


def _check_python_int(name, i, x):
    """A Python int operand becomes a weak int of the default integer type first, as a
    jitted function's argument does in JAX: it must fit there, whatever it promotes to."""
    dtype = dtypes.default_int_dtype()
    info = np.iinfo(dtype)
    if not info.min <= x <= info.max:
        raise OverflowError(
            f"An overflow was encountered while parsing an argument to {name}: the Python "
            f"int {x} at position {i} does not fit in {np.dtype(dtype).name}, the type of "
            "Python ints (int64 with jax_enable_x64). Pass a float, or an array of an "
            "explicit dtype.")


# The lax operations jnp functions of other names run (JAX's errors name the operation).
_LAX_NAMES = {"negative": "neg", "subtract": "sub", "multiply": "mul", "divide": "div",
              "true_divide": "div", "maximum": "max", "minimum": "min", "power": "pow",
              "remainder": "rem", "absolute": "abs", "less": "lt", "greater": "gt",
              "less_equal": "le", "greater_equal": "ge", "equal": "eq", "not_equal": "ne"}


def refuse_extended(name, args):
    """JAX's TypeError for arithmetic on arrays of an extended dtype (typed keys)."""
    found = [extended_dtype(x) or dtypes.dtype_and_weak_type(x)[0] if
             dtypes.is_python_scalar(x) else getattr(x, "dtype", type(x)) for x in args]
    if len(set(found)) > 1:
        raise TypeError(f"{name} does not accept dtypes {', '.join(map(str, found))}.")
    raise TypeError(f"{_LAX_NAMES.get(name, name)} does not accept dtype {found[0]}: "
                    "arrays of keys support no arithmetic. Use jax.random.key_data(keys) "
                    "for their integer data.")


def compare_keys(name, x1, x2, op):
    """`op` (operator.eq or ne) of typed key arrays, key by key (as JAX's jnp.equal and
    not_equal); both must hold keys of one implementation."""
    keys_dtype = extended_dtype(x1)
    if keys_dtype is None or extended_dtype(x2) != keys_dtype:
        refuse_extended(name, (x1, x2))
    return op(x1, x2)


def python_scalar_as(x, dtype):
    """A Python scalar as a NumPy value of `dtype`. An int must fit the default integer
    type (else OverflowError, as in JAX) and then wraps like a cast: uint8 gets -1 as 255."""
    if isinstance(x, int) and not isinstance(x, bool):
        x = np.asarray(x, dtypes.python_scalar_dtype(x))
    return keep_explicit_64bit(np.asarray(x).astype(dtype))


def keep_explicit_64bit(value):
    """A host value of a 64-bit dtype while x64 is off comes from an explicit 64-bit
    operand (jax_explicit_x64_dtypes=allow): as an Array it keeps its dtype, where a NumPy
    value would be canonicalised to 32 bits."""
    if value.dtype in dtypes.X64_TO_X32 and not config.enable_x64.value:
        return Array(value)
    return value


def convert(x, dtype, weak_type=False):
    """x as `dtype`. Python scalars whose default dtype already matches stay Python
    scalars, so they print as literals in jaxprs; host values convert on the host."""
    if type(x) is Array and x.aval.dtype == dtype and x.aval.weak_type == weak_type:
        return x   # the commonest case, first
    dtype = np.dtype(dtype)
    if dtypes.is_python_scalar(x):
        if weak_type:   # stay a weak Python scalar of the kind whose default is dtype
            for kind in (int, float, complex):
                if dtypes.python_scalar_dtype(kind(0)) == dtype and not (
                        kind is int and isinstance(x, (float, complex))):
                    return kind(x.real) if kind is not complex else complex(x)
        x = python_scalar_as(x, dtype)
        if not weak_type:
            return x
    if isinstance(x, (np.ndarray, np.generic)):
        x = np.asarray(x, dtype) if x.dtype != dtype else x
        if not weak_type:
            return keep_explicit_64bit(x)
        # a NumPy value cannot be weak (bool array + Python int is a weak int32 in JAX)
        return ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=True)
    aval = x.aval
    if aval.dtype == dtype and aval.weak_type == weak_type:
        return x
    return ew.convert_element_type_p.bind(x, new_dtype=dtype, weak_type=weak_type)


def promote_dtypes(*args):
    """Converts args to their JAX result type (a weak result stays weak)."""
    if len(args) < 2:
        return list(args)
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_inexact(*args):
    """Like promote_dtypes, then to a float dtype if the result is integral."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    dtype = dtypes.to_inexact_dtype(dtype)
    return [convert(x, dtype, weak) for x in args]


def promote_dtypes_numeric(*args):
    """Like promote_dtypes, but bool becomes the default integer (for sum, cumsum...)."""
    dtype, weak = dtypes.result_type(*args, return_weak_type_flag=True)
    if dtype == np.bool_:
        dtype = dtypes.default_int_dtype()
    return [convert(x, dtype, weak) for x in args]


_RANK_PROMOTION_DOC = ("For more information, see "
                       "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")


def promote_shapes(name, *args):
    """Left-pads ranks with size-1 dims so lax's equal-rank broadcasting applies."""
    if len(args) < 2:
        return list(args)
    ranks = [np.ndim(x) if not hasattr(x, "aval") else x.aval.ndim for x in args]
    top = max(ranks)
    if all(r == top or r == 0 for r in ranks):
        return list(args)   # equal ranks: lax checks the sizes (a TypeError, as in JAX)
    shapes = [np.shape(x) if not hasattr(x, "aval") else x.aval.shape for x in args]
    try:   # lax's check: symbolic dimensions (jax.export) too
        reshaping.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes} (in "
                         f"{name}); each dimension must match or be 1, counted from the "
                         "last.") from None
    mode = config.numpy_rank_promotion.value
    if mode != "allow":
        shown = " ".join(map(str, shapes))
        if mode == "raise":
            raise ValueError(f"Operands could not be broadcast together for {name} on shapes "
                             f"{shown} and with the config option "
                             f"jax_numpy_rank_promotion='raise'. {_RANK_PROMOTION_DOC}")
        warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes "
                      f"{shown}. Set the jax_numpy_rank_promotion config option to 'allow' "
                      f"to disable this warning; {_RANK_PROMOTION_DOC[0].lower()}"
                      f"{_RANK_PROMOTION_DOC[1:]}", stacklevel=3)
    out = []
    for x, r in zip(args, ranks):
        if r in (0, top):
            out.append(x)
        else:
            shape = (1,) * (top - r) + tuple(np.shape(x) if not hasattr(x, "aval")
                                             else x.aval.shape)
            out.append(st.reshape(x, shape))
    return out


def jax_array_protocol(x):
    """The array an object with a __jax_array__ method stands for; x itself otherwise."""
    method = getattr(x, "__jax_array__", None)
    return x if method is None or is_arraylike(x) else method()


def check_no_float0s(name, *args):
    """jnp's promoting functions refuse float0 arrays (as JAX's do)."""
    for x in args:
        if getattr(x, "dtype", None) == dtypes.float0:
            raise TypeError(
                f"Called {name} with a float0 array. float0s do not support any operations "
                "by design because they are not compatible with non-trivial vector spaces. "
                "No implicit dtype conversion is done. You can use np.zeros_like(arr, "
                "dtype=np.float) to cast a float0 array to a regular zeros array. \nIf you "
                "didn't expect to get a float0 you might have accidentally taken a gradient "
                "with respect to an integer argument.")


def promote_args(name, *args):
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    return promote_shapes(name, *promote_dtypes(*map(jax_array_protocol, args)))


def promote_args_inexact(name, *args):
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    return promote_shapes(name, *promote_dtypes_inexact(*map(jax_array_protocol, args)))


def promote_args_numeric(name, *args):
    check_arraylike(name, *args)
    check_no_float0s(name, *args)
    return promote_shapes(name, *promote_dtypes_numeric(*map(jax_array_protocol, args)))


# The dtypes each promotion leaves as they are: an array alone, or beside an array of its
# own type (jnp's eager short paths read these instead of promoting).
_ANY = frozenset(dtypes.supported_dtypes)
_INEXACT = frozenset(d for d in _ANY if dtypes.is_inexact(d))
KEPT_DTYPES = {promote_args: _ANY, promote_args_inexact: _INEXACT,
               promote_args_numeric: _ANY - {np.dtype(np.bool_)}}
# The dtypes a strong array keeps beside a weak Python int or float.
WEAK_SCALAR_DTYPES = {int: frozenset(d for d in _ANY if dtypes.is_int(d)) | _INEXACT,
                      float: _INEXACT}


def ensure_array(x):
    """Results of jnp functions are Arrays (or tracers), never raw NumPy values."""
    return as_array(x)


