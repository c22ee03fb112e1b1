"""Array creation, shape manipulation, where/clip, and products (dot, matmul, vdot,
inner, outer) for jax.numpy. Shapes and axes must be static; values may be traced."""
from __future__ import annotations

import builtins
import math
import operator
import warnings

import numpy as np

from pyjax._src import dtypes, errors
from pyjax._src import sharding as sharding_mod
from pyjax._src.api.devices import device_put
from pyjax._src.api.shapes import ShapeDtypeStruct
from pyjax._src.sharding import AbstractMesh, NamedSharding, concrete_mesh_of, current_mesh
from pyjax._src.array import Array, copied
from pyjax._src.basearray import Array as PublicArray
from pyjax._src.core.avals import AbstractRef, ShapedArray, get_aval
from pyjax._src.core.trace import Trace, Tracer, current_trace
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import reshaping
from pyjax._src.lax import structural as st
from pyjax._src.lax.sharding_constraint import apply_out_sharding, check_spec_has_mesh
from pyjax._src.numpy.util import (check_arraylike, convert, ensure_array, ensure_arraylike,
                                   extended_dtype, is_arraylike, jax_array_protocol,
                                   promote_dtypes)
from pyjax._src.shape_poly import is_symbolic_dim
from pyjax._src.util import (canonicalize_axes, canonicalize_axis, canonicalize_shape,
                              ensure_index_tuple)
from pyjax._src.lax.sharding_constraint import takes_out_sharding
from pyjax._src.sharding import canonical_sharding

ndarray = PublicArray


# --- creation ---------------------------------------------------------------------------

def _check_int_range(x, dtype):
    if isinstance(x, int) and not isinstance(x, bool) and np.dtype(dtype).kind in "iu":
        info = np.iinfo(dtype)
        if not info.min <= x <= info.max:
            raise OverflowError(f"Python int {x} too large to convert to {np.dtype(dtype)}")


def _contains_none(obj):
    if obj is None:
        return True
    return isinstance(obj, (list, tuple)) and builtins.any(_contains_none(o) for o in obj)


def _host_array(obj, dtype):
    """NumPy conversion of nested lists/scalars with JAX's canonical dtypes. Python ints
    must fit the target dtype (OverflowError, as in JAX), never wrap."""
    if _contains_none(obj):
        raise ValueError("None is not a valid value for jnp.array: use a number, or "
                         "jnp.nan for a missing float value")
    if isinstance(obj, np.ndarray) and obj.dtype == object:
        raise TypeError("jnp.array: NumPy arrays of dtype object are not supported, only "
                        "number and bool dtypes; convert it first, e.g. "
                        "x.astype(np.float32)")
    value = np.asarray(obj) if dtype is None else np.asarray(obj, dtype=dtype)
    if value.dtype == object and value.size and builtins.all(
            isinstance(v, int) for v in value.ravel()):
        raise OverflowError(f"Python int too large to convert to a JAX integer type "
                            f"(int32, or int64 with jax_enable_x64): {obj!r:.200}")
    if value.dtype == object:
        raise TypeError(f"JAX only supports number and bool dtypes, got an object array "
                        f"from {type(obj)}")
    if dtype is None:
        if dtypes.is_python_scalar(obj):
            target = dtypes.python_scalar_dtype(obj)
        elif value.dtype.kind in "U S":
            raise TypeError(f"JAX does not support string arrays, got dtype {value.dtype}")
        elif isinstance(obj, (list, tuple)) and value.size:
            target = _list_dtype(obj, value.dtype)
        else:
            target = dtypes.canonicalize_dtype(value.dtype)
    else:
        target = dtypes.check_user_dtype(dtype, "array")
    if dtypes.is_python_scalar(obj):
        _check_int_range(obj, target)
    elif isinstance(obj, (list, tuple)) and target.kind in "iu" and value.dtype != target:
        # NumPy range-checks the ints of a list converted straight to the target dtype
        return np.asarray(obj, dtype=target)
    return value.astype(target, copy=False)


def _list_dtype(obj, numpy_dtype):
    """The dtype of a nested list: JAX's promotion of its leaves, where Python scalars are
    weak ([0, np.int16(1)] is int16, not NumPy's int64); NumPy's dtype for leaves JAX's
    promotion does not know."""
    leaves, todo = [], [obj]
    while todo:
        item = todo.pop()
        if isinstance(item, (list, tuple)):
            todo.extend(item)
        elif dtypes.is_python_scalar(item) or isinstance(item, (np.ndarray, np.generic)):
            leaves.append(item)
        else:
            return dtypes.canonicalize_dtype(numpy_dtype)
    return dtypes.result_type(*leaves)


def _contains_jax_values(obj):
    """Whether (nested lists of) obj hold JAX values: Arrays, tracers, or objects with a
    __jax_array__ method (each stands for the array it returns, as in JAX)."""
    if isinstance(obj, (Array, Tracer)) or hasattr(obj, "__jax_array__"):
        return True
    if isinstance(obj, (list, tuple)):
        return builtins.any(_contains_jax_values(o) for o in obj)
    return False


@takes_out_sharding
def array(object, dtype=None, *args, copy=True, order="K", ndmin=0, device=None):
    """A new array from an array, a scalar, or (nested) lists of them. copy, order and
    ndmin passed positionally still work, with JAX's deprecation warning."""
    if args:
        copy, order, ndmin = _positional_array_args(args, copy, order, ndmin)
    if order is not None and order != "K":
        raise NotImplementedError("jnp.array: only order='K' is implemented, got "
                                  f"order={order!r}")
    if _involves_strings(object, dtype):
        return _string_array(object, dtype, ndmin, device)
    keys_dtype = extended_dtype(object)
    if keys_dtype is not None:
        _check_same_extended(keys_dtype, dtype, "array")
        data = array(keys_dtype.to_physical(object), copy=copy, ndmin=ndmin, device=device)
        return keys_dtype.from_physical(data)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "array")
    if isinstance(object, (Array, Tracer)):
        _check_same_devices(object, device)
        # As in JAX, a weakly typed input stays weak unless a dtype is asked for.
        weak = dtype is None and object.aval.weak_type
        out = convert(object, dtype or object.aval.dtype, weak)
        if copy and out is object:
            out = _array_copy(object)
    elif isinstance(object, (list, tuple)) and _contains_jax_values(object):
        if len(object) == 0:
            out = ensure_array(_host_array(object, dtype))
        else:
            items = [array(o, dtype) for o in object]
            items = promote_dtypes(*items) if dtype is None else items
            out = st.concatenate([st.expand_dims(i, (0,)) for i in items], 0)
            out = convert(out, get_aval(out).dtype)    # a list is never weakly typed
    elif hasattr(object, "__jax_array__"):   # never weakly typed, as in JAX
        value = asarray(object.__jax_array__())
        return array(value, value.dtype if dtype is None else dtype, copy=copy,
                     order=order, ndmin=ndmin, device=device)
    else:
        if isinstance(object, (list, tuple)) and builtins.any(
                isinstance(o, (list, tuple, np.ndarray)) for o in object):
            shapes = {np.shape(o) for o in object}
            if len(shapes) > 1:
                raise ValueError("setting an array element with a sequence: the nested "
                                 f"sequences have different shapes {sorted(shapes)}")
        weak = dtype is None and dtypes.is_python_scalar(object) and \
            get_aval(object).weak_type      # jnp.array(1.0) is weak, as in JAX
        out = Array(_host_array(object, dtype).copy(), weak)
    out = ensure_array(out)
    if ndmin > out.ndim:
        out = st.reshape(out, (1,) * (ndmin - out.ndim) + out.shape)
    return _place(out, device)


def _involves_strings(object, dtype):
    """Whether jnp.array is asked for an array of strings, or given one (as JAX tells)."""
    return dtypes.is_string_dtype(dtype) or dtypes.is_string_dtype(
        getattr(object, "dtype", None))


def _string_array(object, dtype, ndmin, device):
    """An array of strings: XLA has no string type, so it is the NumPy array placed on
    `device` as it is (which must be a CPU device; see device_put), as in JAX."""
    if not isinstance(object, np.ndarray):
        raise TypeError("Currently, string arrays can only be made from NumPy arrays. "
                        f"Got:  {type(object)}.")
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "array")
        if dtypes.is_string_dtype(object.dtype) != dtypes.is_string_dtype(dtype):
            raise TypeError(f"Cannot make an array with dtype {dtype} from an object with "
                            f"dtype {object.dtype}.")
    if ndmin > object.ndim:
        raise TypeError(f"ndmin {ndmin} cannot be greater than object's ndims "
                        f"{object.ndim} for string arrays.")
    return device_put(object, device)


def _array_copy(x):
    """A new array of x's value: a new buffer on x's device (sharding) for an Array, a
    `copy` equation under a transformation, so that the result is never x itself."""
    return copied(x) if isinstance(x, Array) else ew.copy_p.bind(x)


def _positional_array_args(args, copy, order, ndmin):
    if len(args) > 3:
        raise TypeError(f"array() takes at most 5 positional arguments but {len(args) + 2} "
                        "were given")
    given = [copy, order, ndmin]
    for i, name in enumerate(["copy", "order", "ndmin"]):
        if i < len(args) and given[i] != [True, "K", 0][i]:
            raise TypeError(f"array() got multiple values for argument '{name}'")
    warnings.warn("Passing the copy, order, and ndmin arguments to jnp.array positionally "
                  "is deprecated. Use keyword arguments instead.", DeprecationWarning,
                  stacklevel=3)
    return (list(args) + given[len(args):])[:3]


def _check_same_extended(keys_dtype, dtype, where):
    if dtype is not None and dtype != keys_dtype:
        raise TypeError(f"jnp.{where}: an array of dtype {keys_dtype} cannot be converted "
                        f"to {dtype}; use jax.random.key_data for the key data.")


def _check_same_devices(x, device):
    """JAX converts an array onto `device` inside a computation, so an array committed
    to other devices is its incompatible-devices error."""
    if device is None or type(x) is not Array or not x.committed:
        return
    target = device if isinstance(device, sharding_mod.Sharding) else \
        sharding_mod.SingleDeviceSharding(device) if hasattr(device, "platform") else None
    held = x._sharding._device_assignment if x._sharding is not None else (x._device,)
    if target is not None and tuple(target._device_assignment) != tuple(held):
        raise ValueError(
            "Received incompatible devices for jitted computation. Got argument args[0] of "
            f"convert_element_type with shape {x.dtype.name}[{','.join(map(str, x.shape))}] "
            f"and with device ids {[d.id for d in held]} on platform CPU and "
            f"sharding_constraint inside jit with device ids "
            f"{[d.id for d in target._device_assignment]} on platform CPU. Move the array "
            "with jax.device_put instead.")


def _place(out, device):
    """`out` committed to `device` (a Device or Sharding) when one is given, as the
    creation functions' device= argument asks."""
    return out if device is None else device_put(out, device)


@takes_out_sharding
def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    """Like array, but returns `a` itself when it already is an array of that dtype."""
    if _involves_strings(a, dtype):
        return _string_array(a, dtype, 0, device)
    if device is not None:
        _check_same_devices(a, device)
        return _place(asarray(a, dtype, order, copy=copy), device)
    keys_dtype = extended_dtype(a)
    if keys_dtype is not None:
        _check_same_extended(keys_dtype, dtype, "asarray")
        return a
    if isinstance(a, (Array, Tracer)) and (dtype is None or (
            dtypes.check_user_dtype(dtype, "asarray") == a.aval.dtype
            and not a.aval.weak_type)):   # a dtype asked for makes a weak type strong
        return a
    if isinstance(a, (np.ndarray, np.generic)) or dtypes.is_python_scalar(a):
        if not copy:
            get_aval(a)   # refuses a masked array, which only a copy may strip
        if dtype is None and dtypes.is_python_scalar(a):
            aval = get_aval(a)
            _check_int_range(a, aval.dtype)
            return Array(np.asarray(a, aval.dtype), aval=aval)
        value = _host_array(a, dtype)
        if isinstance(a, np.ndarray) and np.may_share_memory(value, a):
            value = value.copy()   # the user may change their NumPy array later
        return Array(value)
    return array(a, dtype=dtype, copy=False)


def _shape_arg(shape, where, negative_error=TypeError):
    is_seq = isinstance(shape, (tuple, list))
    concrete = []
    for d in shape if is_seq else (shape,):
        if isinstance(d, Tracer) and d.to_concrete_value() is not None:
            d = d.to_concrete_value()   # (a traced size is refused by canonicalize_shape)
        concrete.append(d)
    return canonicalize_shape(concrete if is_seq else concrete[0], f"jnp.{where}",
                              negative_error=negative_error)


def _default_dtype(dtype, fill=None, where="full"):
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtype
    if dtype is not None:
        return dtypes.check_user_dtype(dtype, where)
    if fill is not None:
        return dtypes.result_type(asarray(fill) if isinstance(fill, (list, tuple)) else fill)
    return dtypes.default_float_dtype()


def _check_shape_tuple(name, shape, dtype):
    """jnp.ones(2, 3) means jnp.ones((2, 3)) more often than an int dtype; say so."""
    if isinstance(dtype, int) and isinstance(shape, int):
        raise TypeError(f"Cannot interpret '{dtype}' as a data type.\n\nDid you "
                        f"accidentally write `jax.numpy.{name}({shape}, {dtype})` when you "
                        f"meant `jax.numpy.{name}(({shape}, {dtype}))`, i.e. with a single "
                        "tuple argument for the shape?")


@takes_out_sharding
def zeros(shape, dtype=None, *, device=None):
    _check_shape_tuple("zeros", shape, dtype)
    return full(shape, 0, _default_dtype(dtype, where="zeros"), device=device)


@takes_out_sharding
def ones(shape, dtype=None, *, device=None):
    _check_shape_tuple("ones", shape, dtype)
    return full(shape, 1, _default_dtype(dtype, where="ones"), device=device)


@takes_out_sharding
def empty(shape, dtype=None, *, device=None):
    """Zeros: JAX arrays are never uninitialised."""
    _check_shape_tuple("empty", shape, dtype)
    return zeros(shape, dtype, device=device)


@takes_out_sharding
def full(shape, fill_value, dtype=None, *, device=None):
    if device is not None:
        return _place(full(shape, fill_value, dtype), device)
    fill_value = jax_array_protocol(fill_value)
    keys_dtype = extended_dtype(fill_value) or (
        dtype if isinstance(dtype, dtypes.ExtendedDType) else None)
    if keys_dtype is not None:
        return _full_extended(keys_dtype, _shape_arg(shape, "full"), fill_value, dtype)
    if dtype is None and _is_weak(fill_value):   # weak in, weak out (as JAX)
        out = full(shape, fill_value, _default_dtype(None, fill_value))
        return convert(out, out.dtype, True)
    shape = _shape_arg(shape, "full")
    dtype = _default_dtype(dtype, fill_value)
    if isinstance(fill_value, (Array, Tracer)) and fill_value.aval.shape:
        return ensure_array(st.broadcast_to_shape(convert(fill_value, dtype), shape))
    if not isinstance(fill_value, (Array, Tracer)):
        fill = np.asarray(fill_value)
        if not fill.ndim:
            _check_int_range(fill_value, dtype)
        if current_trace() is not Trace.root:
            # Staged: one broadcast, never a shape-sized constant (eval_shape of a huge
            # array must not allocate it).
            return ensure_array(st.broadcast_to_shape(fill.astype(dtype), shape))
        if fill.ndim:
            return ensure_array(Array(np.broadcast_to(fill.astype(dtype), shape).copy()))
        return Array(np.full(shape, fill_value, dtype))
    return ensure_array(st.broadcast_in_dim(convert(fill_value, dtype), shape, ()))


def _full_extended(keys_dtype, shape, fill_value, dtype):
    """An array of an extended dtype (typed keys) filled with a key, or whose key data is
    filled with an integer."""
    _check_same_extended(keys_dtype, dtype, "full")
    physical = keys_dtype.physical_shape
    if extended_dtype(fill_value) is not None:
        fill = keys_dtype.to_physical(fill_value)
        data = st.broadcast_to_shape(fill, (*shape, *physical))
    else:
        data = full((*shape, *physical), fill_value, keys_dtype.physical_dtype)
    return keys_dtype.from_physical(ensure_array(data))


def _is_weak(x):
    return (dtypes.is_python_scalar(x) or hasattr(x, "aval")) and get_aval(x).weak_type


@takes_out_sharding
def zeros_like(a, dtype=None, shape=None, *, device=None):
    return _full_like("zeros_like", a, 0, dtype, shape, device)


@takes_out_sharding
def ones_like(a, dtype=None, shape=None, *, device=None):
    return _full_like("ones_like", a, 1, dtype, shape, device)


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    """zeros_like: XLA has no uninitialized memory."""
    return _full_like("empty_like", prototype, 0, dtype, shape, device)


@takes_out_sharding
def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    return _full_like("full_like", a, fill_value, dtype, shape, device)


def _full_like(name, a, fill_value, dtype, shape, device):
    """An array like `a` (an array, or anything with shape and dtype) filled with
    fill_value: a's dtype (weak if a is) and shape unless given, and a's placement when a
    is committed to a device and no shape or device is given, as in JAX."""
    if isinstance(a, np.ma.MaskedArray):   # only its shape and dtype count: JAX takes it
        a = a.data
    if device is None and shape is None and isinstance(a, Array) and a.committed:
        device = a.sharding
    if device is None and shape is None and isinstance(a, ShapeDtypeStruct):
        device = _described_placement(a)
    if not hasattr(a, "shape"):   # an object with shape and dtype needs no __jax_array__
        a = jax_array_protocol(a)
    keys_dtype = extended_dtype(a)
    if keys_dtype is not None or isinstance(dtype, dtypes.ExtendedDType):
        target = a.shape if shape is None else shape
        return _place(full(target, fill_value, dtype or keys_dtype), device)
    aval = get_aval(a) if not hasattr(a, "shape") or hasattr(a, "aval") or \
        isinstance(a, (np.ndarray, np.generic)) else None
    if aval is None or aval.is_high:   # duck-typed (a hijax value too): its shape, dtype
        aval = ShapedArray(a.shape, a.dtype)
        if device is None and getattr(a, "_committed", True) and \
                (shape is None or _shape_arg(shape, name) == tuple(a.shape)):
            device = _described_placement(a)   # and its sharding, as JAX's full_like
    if isinstance(aval, AbstractRef):   # a jax.Ref: like the array it holds
        aval = aval.inner_aval
    weak = dtype is None and aval.weak_type
    dtype = dtypes.check_user_dtype(dtype, name) if dtype is not None else aval.dtype
    out = full(aval.shape if shape is None else _shape_arg(shape, name), fill_value, dtype)
    return _place(reshaping.vary_like(convert(out, dtype, True) if weak else out, aval),
                  device)


def _described_placement(sds):
    """Where the array a ShapeDtypeStruct (or a duck-typed array) describes lies: its
    NamedSharding (one over an AbstractMesh names the context mesh of its shape, and,
    under a trace, types the value even without one), or None."""
    found = getattr(sds, "sharding", None)   # (a duck-typed array may have none)
    found = found if isinstance(found, NamedSharding) else None
    if found is not None and isinstance(found.mesh, AbstractMesh):
        mesh = concrete_mesh_of(found.mesh, current_mesh())
        if mesh is not None:
            return NamedSharding(mesh, found.spec)
        return found if current_trace() is not Trace.root else None
    return found


def _concrete_scalar(x, name, arg):
    if isinstance(x, Tracer):
        value = x.to_concrete_value()
        if value is None:
            raise errors.ConcretizationTypeError(
                x, f"It arose in the jnp.{name} argument '{arg}': it must be static "
                "because it decides the shape of the result.\n")
        return value.item()
    if isinstance(x, Array):
        return x.item()
    return x


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    """Evenly spaced values in [start, stop): start + step * iota, computed in the result
    dtype (float32 for narrower floats) as JAX does. All arguments must be concrete."""
    if device is not None or out_sharding is not None:
        return _place(arange(start, stop, step, dtype), device or out_sharding)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "arange")
    if builtins.any(is_symbolic_dim(v) for v in (start, stop, step)):
        if stop is not None or step is not None:
            raise NotImplementedError(
                f"jnp.arange with a symbolic dimension takes only the size, as "
                f"arange({start}); got start={start}, stop={stop}, step={step}")
        dtype = dtypes.canonicalize_dtype(dtype or dtypes.default_int_dtype())
        return ensure_array(st.iota(dtype, start))   # jax.export's symbolic size
    start_name = "stop" if stop is None and step is None else "start"
    start = _concrete_scalar(start, "arange", start_name)
    stop = _concrete_scalar(stop, "arange", "stop") if stop is not None else None
    step = _concrete_scalar(step, "arange", "step") if step is not None else None
    for name, value in ((start_name, start), ("stop", stop), ("step", step)):
        if value is not None and np.ndim(value) != 0:
            raise ValueError(f"jax.numpy.arange: arguments must be scalars; got "
                             f"{name}={value}")
    if dtype is None:
        dtype = dtypes.result_type(*[v for v in (start, stop, step) if v is not None])
    if builtins.any(np.iscomplexobj(v) for v in (start, stop, step)):
        raise ValueError("Passing complex start/stop/step to jnp.arange is no longer "
                         "supported starting in JAX v0.10.0.")
    if stop is None:
        start, stop = 0, start
    if step is not None:
        if step == 0:   # NumPy's and JAX's error class
            raise ZeroDivisionError("jnp.arange: step must not be zero.")
        working = np.dtype(np.float32) if (dtypes.is_float(dtype)
                                           and np.dtype(dtype).itemsize < 4) else dtype
        size = builtins.max(0, int(np.ceil((stop - start) / step)))
        values = ew.add(convert(start, working),
                        ew.mul(convert(step, working), convert(st.iota(working, size),
                                                               working)))
        return ensure_array(convert(values, dtype))
    size = builtins.max(0, int(np.ceil(stop - start)))
    # (convert keeps an explicitly requested 64-bit dtype, which iota canonicalizes)
    iota = convert(st.iota(dtype, size), dtype)
    return ensure_array(iota if start == 0 else ew.add(convert(start, dtype), iota))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0,
             *, device=None):
    """num evenly spaced samples over [start, stop]; start/stop may be traced arrays."""
    if device is not None:
        out = linspace(start, stop, num, endpoint, retstep, dtype, axis)
        return (_place(out[0], device), out[1]) if retstep else _place(out, device)
    try:
        num = operator.index(_concrete_scalar(num, "linspace", "num"))
    except TypeError:
        raise TypeError(f"jnp.linspace: num must be an integer, got {num!r}") from None
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    check_arraylike("linspace", start, stop)
    computation = dtypes.result_type(start, stop, dtypes.default_float_dtype())
    out_dtype = dtypes.check_user_dtype(dtype, "linspace") if dtype is not None else computation
    start, stop = convert(start, computation), convert(stop, computation)
    start_aval = get_aval(start)
    bshape = np.broadcast_shapes(start_aval.shape, get_aval(stop).shape)
    start = st.broadcast_to_shape(start, bshape)
    stop = st.broadcast_to_shape(stop, bshape)
    div = (num - 1) if endpoint else num
    iota_shape = (num,) + bshape
    steps = st.broadcasted_iota(computation, iota_shape, 0)
    delta = ew.sub(stop, start)
    expand = lambda v: st.broadcast_in_dim(v, iota_shape, tuple(range(1, 1 + len(bshape))))
    if div > 0:
        step = ew.div(delta, np.array(div, computation))
        out = ew.add(expand(start), ew.mul(steps, expand(step)))
        if endpoint and num > 1:
            from pyjax._src.lax.slicing import slice_in_dim
            out = st.concatenate([slice_in_dim(out, 0, num - 1), st.expand_dims(stop, (0,))],
                                 0)
    else:
        step = np.array(np.nan, computation)   # a scalar, whatever the endpoints' shape
        out = expand(start) if num else st.broadcast_in_dim(start, iota_shape,
                                                            tuple(range(1, 1 + len(bshape))))
    out = moveaxis(out, 0, canonicalize_axis(axis, len(iota_shape)))
    if np.dtype(out_dtype).kind in "iu":
        out = ew.floor(out)
    out = ensure_array(convert(out, out_dtype))
    return (out, ensure_array(step)) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    from pyjax._src.numpy.ufuncs import power
    exponents = linspace(start, stop, num, endpoint, dtype=None, axis=axis)
    out = power(convert(base, get_aval(exponents).dtype), exponents)
    return out.astype(dtype) if dtype is not None else out


def eye(N, M=None, k=0, dtype=None, *, device=None):
    """Ones on the k-th diagonal of an N x M matrix."""
    N, M = _shape_arg((N, N if M is None else M), "eye", ValueError)   # JAX's class
    dtype = _default_dtype(dtype, where="eye")
    if isinstance(k, (int, np.integer)):
        # Any k outside [-N, M] leaves the matrix empty: clipping keeps it in int32.
        k = builtins.max(-N, builtins.min(int(k), M))
    rows = st.broadcasted_iota(np.int32, (N, M), 0)
    cols = st.broadcasted_iota(np.int32, (N, M), 1)
    return _place(ensure_array(convert(ew.eq(ew.add(rows, diagonal_offset(k, (N, M))),
                                             cols), dtype)), device)


def diagonal_offset(k, shape):
    """The diagonal offset k of eye/tri as int32 to add to the row index: a static k
    stays a scalar constant, a traced one is broadcast to the matrix shape."""
    if isinstance(k, (Tracer, Array)):
        if builtins.getattr(k, "ndim", 0) != 0 or k.dtype.kind not in "iu":
            raise TypeError(f"the diagonal offset k must be an integer scalar, got {k!r}")
        return st.broadcast_in_dim(convert(k, np.int32), shape, ())
    return np.int32(operator.index(k))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


# --- shape manipulation -----------------------------------------------------------------

def _warn_if_not_arraylike(name, a):
    """A list or other non-array argument still works (through NumPy), with JAX's
    deprecation warning."""
    if not is_arraylike(a) and getattr(a, "__jax_array__", None) is None:
        warnings.warn(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                      "position 0. In a future JAX release this will be an error.",
                      DeprecationWarning, stacklevel=3)


def shape(a):
    """a.shape, for arrays, scalars and anything with a shape attribute."""
    if hasattr(a, "shape"):
        return tuple(a.shape)
    _warn_if_not_arraylike("shape", a)
    return np.shape(a.__jax_array__() if hasattr(a, "__jax_array__") else a)


def ndim(a):
    if hasattr(a, "ndim"):
        return a.ndim
    _warn_if_not_arraylike("ndim", a)
    return np.ndim(a.__jax_array__() if hasattr(a, "__jax_array__") else a)


def size(a, axis=None):
    """The number of elements of a, or along the axis (or axes) given."""
    if axis is None and hasattr(a, "size"):
        return a.size
    _warn_if_not_arraylike("size", a)
    dims = shape(a)
    if axis is None:
        return math.prod(dims)
    axes = tuple(canonicalize_axis(i, len(dims))
                 for i in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):   # JAX's words here (reductions say "duplicate value")
        raise ValueError(f"repeated axis: {axes}")
    return math.prod(dims[i] for i in axes)


def _infer_reshape_size(shape, size, dims):
    """dims with its -1 (if any) replaced by the size that keeps `size` elements; raises
    JAX's TypeError when no such size exists."""
    if dims.count(-1) > 1:
        raise TypeError(f"can only specify one unknown axis size with a `-1` value, got {dims}")
    known = math.prod(d for d in dims if d != -1)
    if -1 in dims:
        if known == 0 or size % known:
            raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into shape "
                            f"{dims} because the product of specified axis sizes ({known}) "
                            f"does not evenly divide {size}")
        return tuple(size // known if d == -1 else d for d in dims)
    if known != size or any(d < 0 for d in dims):
        raise TypeError(f"cannot reshape array of shape {shape} (size {size}) into shape "
                        f"{dims} (size {known})")
    return dims


def reshape(a, shape, order="C", *, copy=None, out_sharding=None):
    """Gives `a` a new shape; -1 infers one size. Shapes must be static (use np, not jnp,
    to compute them from other shapes). out_sharding: how the result is split."""
    keys_dtype = extended_dtype(a)
    if keys_dtype is not None:
        dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        data = keys_dtype.to_physical(a)
        return keys_dtype.from_physical(
            reshape(data, (*dims, *keys_dtype.physical_shape), order))
    check_arraylike("reshape", a)
    if out_sharding is None and not isinstance(a, (Array, Tracer)):
        method = getattr(a, "reshape", None)
        if method is not None:   # JAX forwards to the value's own method: a NumPy array
            return method(shape, order=order)   # stays one (even under jit), as in JAX
    a = ensure_arraylike("reshape", a)
    if order not in ("C", "F", "A"):
        raise ValueError(f"reshape order must be 'C' or 'F', got {order!r}")
    try:   # an int, or any sequence (as JAX: one with only __len__/__getitem__ too)
        dims = tuple(shape)
    except TypeError:
        dims = (shape,)
    for d in dims:
        if isinstance(d, Tracer) and d.to_concrete_value() is None:
            raise errors.ConcretizationTypeError(
                d, "The error arose in jax.numpy.reshape: the new shape must be static. "
                "Compute it with `np` from static shapes (e.g. `np.prod(x.shape)`), not with "
                "`jnp`.\n")
    dims = canonicalize_shape(dims, "jnp.reshape", nonnegative=False)
    aval = get_aval(a)
    dims = _infer_reshape_size(aval.shape, aval.size, dims)
    if order == "F":
        rev_in = st.transpose(a, tuple(reversed(range(aval.ndim))))
        out = st.reshape(rev_in, tuple(reversed(dims)))
        out = st.transpose(out, tuple(reversed(range(len(dims)))))
        return ensure_array(apply_out_sharding(out, out_sharding, "jnp.reshape"))
    return ensure_array(st.reshape(a, dims, out_sharding=out_sharding))


@takes_out_sharding
def ravel(a, order="C"):
    return reshape(a, (-1,), order)


def axis_or_flattened(a, axis):
    """(a, axis) for functions where axis=None means "over the flattened array": a
    flattened with axis 0, else a with axis made non-negative."""
    if axis is None:
        return ravel(a), 0
    return a, canonicalize_axis(axis, ndim(a))


def _on_key_data(keys_dtype, keys, fn):
    """fn applied to the data of the key array `keys` (whose own dimensions are last and
    stay so): jnp's structural functions on typed keys."""
    return keys_dtype.from_physical(fn(keys_dtype.to_physical(keys)))


def transpose(a, axes=None):
    keys_dtype = extended_dtype(a)
    n = a.ndim if keys_dtype is not None else ndim(a)
    axes = tuple(reversed(range(n))) if axes is None else \
        tuple(canonicalize_axis(x, n) for x in axes)
    if keys_dtype is not None:
        return _on_key_data(keys_dtype, a, lambda data: transpose(
            data, (*axes, *range(n, data.ndim))))
    a = ensure_arraylike("transpose", a)
    if sorted(axes) != list(range(n)):
        raise TypeError(f"transpose permutation isn't a permutation of operand dimensions: "
                        f"axes {axes} don't match an array of dimension {n}")
    return ensure_array(st.transpose(a, axes))


def permute_dims(a, /, axes):
    return transpose(a, axes)


def matrix_transpose(x, /):
    n = ndim(x)
    if n < 2:
        raise ValueError(f"matrix_transpose requires at least 2 dimensions, got {n}")
    return transpose(x, tuple(range(n - 2)) + (n - 1, n - 2))


def moveaxis(a, source, destination):
    n = ndim(a)
    src = canonicalize_axes(ensure_index_tuple(source), n, "source")
    dst = canonicalize_axes(ensure_index_tuple(destination), n, "destination")
    if len(src) != len(dst):
        raise ValueError("Inconsistent number of elements: source and destination axes "
                         f"{source} and {destination}")
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return ensure_array(st.transpose(jax_array_protocol(a), tuple(order)))


def swapaxes(a, axis1, axis2):
    keys_dtype = extended_dtype(a)
    n = a.ndim if keys_dtype is not None else ndim(a)
    i, j = canonicalize_axis(axis1, n), canonicalize_axis(axis2, n)
    if keys_dtype is not None:
        return _on_key_data(keys_dtype, a, lambda data: swapaxes(data, i, j))
    perm = list(range(n))
    perm[i], perm[j] = perm[j], perm[i]
    return ensure_array(st.transpose(jax_array_protocol(a), tuple(perm)))


def squeeze(a, axis=None):
    a = jax_array_protocol(a)
    keys_dtype = extended_dtype(a)
    aval = a.aval if keys_dtype is not None else get_aval(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(aval.shape) if d == 1)
    else:
        axes = canonicalize_axes(axis, aval.ndim)
        for i in axes:
            if aval.shape[i] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={aval.shape} and dimensions="
                                 f"{axes}")
    if keys_dtype is not None:
        return _on_key_data(keys_dtype, a, lambda data: squeeze(data, axes))
    return ensure_array(st.squeeze(a, axes))


def expand_dims(a, axis):
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    keys_dtype = extended_dtype(a)
    if keys_dtype is not None:   # the key data's own dimensions stay last
        axes = canonicalize_axes(axes, a.ndim + len(axes))
        return keys_dtype.from_physical(expand_dims(keys_dtype.to_physical(a), axes))
    a = ensure_arraylike("expand_dims", a)
    return ensure_array(st.expand_dims(a, axes))


def atleast_1d(*arys):
    outs = [a if ndim(a) >= 1 else reshape(a, (1,)) for a in map(asarray, arys)]
    return outs[0] if len(outs) == 1 else outs


def atleast_2d(*arys):
    outs = []
    for a in map(asarray, arys):
        outs.append(a if ndim(a) >= 2 else reshape(a, (1,) * (2 - ndim(a)) + shape(a)))
    return outs[0] if len(outs) == 1 else outs


def atleast_3d(*arys):
    outs = []
    for a in map(asarray, arys):
        n = ndim(a)
        if n == 0:
            a = reshape(a, (1, 1, 1))
        elif n == 1:
            a = reshape(a, (1, shape(a)[0], 1))
        elif n == 2:
            a = reshape(a, shape(a) + (1,))
        outs.append(a)
    return outs[0] if len(outs) == 1 else outs


def concatenate(arrays, axis=0, dtype=None):
    if isinstance(arrays, (Array, Tracer, np.ndarray)):
        arrays = list(arrays)
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    keys_dtype = _common_extended_dtype(arrays, "concatenate")
    if keys_dtype is not None:
        if axis is None:
            arrays, axis = [ravel(a) for a in arrays], 0
        axis = canonicalize_axis(axis, arrays[0].ndim)
        return keys_dtype.from_physical(
            concatenate([keys_dtype.to_physical(a) for a in arrays], axis))
    check_arraylike("concatenate", *arrays)
    arrays = [asarray(a) for a in arrays]
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if builtins.any(ndim(a) == 0 for a in arrays):
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "concatenate")
        arrays = [convert(a, dtype) for a in arrays]
    axis = canonicalize_axis(axis, ndim(arrays[0]))
    return ensure_array(st.concatenate(arrays, axis))


def concat(arrays, /, *, axis=0):
    """The array API's concatenate."""
    check_arraylike("concat", *arrays)
    return concatenate(arrays, axis=axis)


def _common_extended_dtype(arrays, where):
    """The extended dtype of `arrays` when one of them has one (all must share it)."""
    found = [extended_dtype(a) for a in arrays]
    if all(d is None for d in found):
        return None
    if len(set(found)) > 1:
        names = [str(d or get_aval(a).dtype) for a, d in zip(arrays, found)]
        raise TypeError(f"jnp.{where} does not accept mixed dtypes {names}: arrays of "
                        "typed PRNG keys combine only with keys of the same kind.")
    return found[0]


def stack(arrays, axis=0, out=None, dtype=None):
    if not len(arrays):
        raise ValueError("Need at least one array to stack.")
    if extended_dtype(arrays) is not None:   # a key array: its leading axis
        arrays = list(arrays)
    keys_dtype = _common_extended_dtype(arrays, "stack")
    if keys_dtype is not None:
        axis = canonicalize_axis(axis, arrays[0].ndim + 1)
        return keys_dtype.from_physical(
            stack([keys_dtype.to_physical(a) for a in arrays], axis))
    arrays = [asarray(a) for a in arrays]
    shapes = {shape(a) for a in arrays}
    if len(shapes) != 1:
        raise ValueError(f"All input arrays must have the same shape, got {sorted(shapes)}")
    axis = canonicalize_axis(axis, ndim(arrays[0]) + 1)
    return concatenate([expand_dims(a, axis) for a in arrays], axis, dtype)


def hstack(tup, dtype=None):
    arrs = atleast_1d(*tup) if len(tup) > 1 else [atleast_1d(tup[0])]
    return concatenate(arrs, 0 if ndim(arrs[0]) == 1 else 1, dtype)


def vstack(tup, dtype=None):
    arrs = atleast_2d(*tup) if len(tup) > 1 else [atleast_2d(tup[0])]
    return concatenate(arrs, 0, dtype)




def dstack(tup, dtype=None):
    arrs = atleast_3d(*tup) if len(tup) > 1 else [atleast_3d(tup[0])]
    return concatenate(arrs, 2, dtype)


def column_stack(tup):
    arrs = [reshape(a, (-1, 1)) if ndim(a) < 2 else asarray(a) for a in tup]
    return concatenate(arrs, 1)


def split(ary, indices_or_sections, axis=0):
    return _split("split", ary, indices_or_sections, axis, strict=True)


def array_split(ary, indices_or_sections, axis=0):
    return _split("array_split", ary, indices_or_sections, axis, strict=False)


def _split(name, ary, sections, axis, strict):
    from pyjax._src.lax.slicing import slice_in_dim
    ary = asarray(ary)
    axis = canonicalize_axis(operator.index(_concrete_scalar(axis, name, "axis")), ndim(ary))
    size_along = shape(ary)[axis]
    if not isinstance(sections, (tuple, list)) and np.ndim(sections) == 0:
        # a number of sections: any concrete number, as int() takes it (JAX's)
        sections = int(_concrete_scalar(sections, name, "indices_or_sections"))
    if isinstance(sections, (int, np.integer)):
        n = int(sections)
        if n <= 0:
            raise ValueError("number sections must be larger than 0.")
        if strict and size_along % n:
            raise ValueError("array split does not result in an equal division")
        base, extra = divmod(size_along, n)
        bounds = np.cumsum([0] + [base + (1 if i < extra else 0) for i in range(n)])
    else:
        points = [operator.index(_concrete_scalar(i, name, "indices_or_sections"))
                  for i in sections]
        bounds = [0] + [builtins.min(builtins.max(p, 0), size_along) for p in points] + \
            [size_along]
    return [ensure_array(slice_in_dim(ary, int(lo), builtins.max(int(lo), int(hi)), 1, axis))
            for lo, hi in zip(bounds[:-1], bounds[1:])]


def _split_family(name, axis):
    def fn(ary, indices_or_sections):
        return split(ary, indices_or_sections, axis)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"split along axis {axis}."
    return fn


def hsplit(ary, indices_or_sections):
    """split along axis 1 (axis 0 for 1-D input)."""
    return split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0)


vsplit = _split_family("vsplit", 0)
dsplit = _split_family("dsplit", 2)


def broadcast_shapes(*shapes):
    shapes_ = [tuple(s) for s in shapes]
    try:
        if builtins.any(is_symbolic_dim(d) for s in shapes_ for d in s):
            return reshaping.broadcast_shapes(*shapes_)   # jax.export's symbolic sizes
        return tuple(np.broadcast_shapes(*shapes_))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: {shapes}") from None


@takes_out_sharding
def broadcast_to(array, shape):
    keys_dtype = extended_dtype(array)
    if keys_dtype is not None:
        shape = _shape_arg(shape, "broadcast_to")
        return keys_dtype.from_physical(broadcast_to(
            keys_dtype.to_physical(array), (*shape, *keys_dtype.physical_shape)))
    array = ensure_arraylike("broadcast_to", array)
    shape = _shape_arg(shape, "broadcast_to")
    if len(shape) < ndim(array):
        raise ValueError(f"Cannot broadcast to shape with fewer dimensions: arr_shape="
                         f"{np.shape(array)} shape={shape}")
    return ensure_array(st.broadcast_to_shape(array, shape))


def broadcast_arrays(*args):
    args = tuple(map(jax_array_protocol, args))
    target = broadcast_shapes(*[a.shape if extended_dtype(a) is not None
                                else get_aval(a).shape for a in args])
    return [broadcast_to(a, target) for a in args]


def flip(m, axis=None):
    n = ndim(m)
    axes = tuple(range(n)) if axis is None else canonicalize_axes(axis, n)
    keys_dtype = extended_dtype(m)
    if keys_dtype is not None:   # typed keys: their data, along the same axes
        return keys_dtype.from_physical(flip(keys_dtype.to_physical(m), axes))
    return ensure_array(st.rev(jax_array_protocol(m), axes))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


# --- selection --------------------------------------------------------------------------

def where(condition, x, y, /):
    """Elementwise x if condition else y (jnp.where with one argument, the indices of the
    nonzeros, is numpy/indexing.py's `where`)."""
    keys_dtype = extended_dtype(x)
    if keys_dtype is not None and extended_dtype(y) == keys_dtype:   # keys of one kind
        target = broadcast_shapes(shape(condition), x.shape, y.shape)
        key_dims = tuple(keys_dtype.physical_shape)
        cond = broadcast_to(expand_dims(condition, tuple(range(-len(key_dims), 0))),
                            target + key_dims)
        data = [broadcast_to(keys_dtype.to_physical(k), target + key_dims) for k in (x, y)]
        return keys_dtype.from_physical(where(cond, *data))
    condition, x, y = ensure_arraylike("where", condition, x, y)
    x, y = promote_dtypes(x, y)
    target = broadcast_shapes(shape(condition), shape(x), shape(y))
    cond = st.broadcast_to_shape(_truthy(condition), target)
    x = st.broadcast_to_shape(x, target)
    y = st.broadcast_to_shape(y, target)
    return ensure_array(ew.select(cond, x, y))


def _truthy(c):
    aval = get_aval(c)
    return c if aval.dtype == np.bool_ else ew.ne(c, np.zeros((), aval.dtype))


def clip(arr=None, /, min=None, max=None):
    """Limits values to [min, max]; either bound may be None. Complex values have no
    order, so they are refused."""
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr)
    if builtins.any(iscomplexobj(t) for t in (arr, min, max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the "
                         "real or imaginary components via jax.numpy.real/imag "
                         "respectively.")
    from pyjax._src.numpy.ufuncs import maximum, minimum
    out = asarray(arr)
    if min is not None:
        out = maximum(min, out)
    if max is not None:
        out = minimum(max, out)
    return out


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not condlist:
        raise ValueError("condlist must be non-empty")
    out = default
    for cond, choice in reversed(list(zip(condlist, choicelist))):
        out = where(cond, choice, out)
    return asarray(out)


# --- products ---------------------------------------------------------------------------

def product_args(name, a, b, preferred_element_type):
    """The operands of a product as arrays of their own dtypes, and the dtype and weak
    type of the result. As in JAX, operands of mixed dtypes are not converted: the
    contraction multiplies them in `preferred_element_type`, by default their promoted
    type (so a jaxpr holds one dot_general, not converts of its inputs)."""
    if preferred_element_type is None and type(a) is Array and type(b) is Array and \
            a.aval.dtype == b.aval.dtype and a.aval.weak_type == b.aval.weak_type:
        return a, b, a.aval.dtype, a.aval.weak_type   # the common eager case, first
    check_arraylike(name, a, b)
    a, b = asarray(a), asarray(b)
    if preferred_element_type is None:
        dtype, weak = dtypes.result_type(a, b, return_weak_type_flag=True)
    else:
        dtype, weak = dtypes.check_user_dtype(preferred_element_type, name), False
    return a, b, np.dtype(dtype), weak


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """NumPy's dot: scalars multiply, otherwise contract a's last axis with b's
    second-to-last (or only) axis. out_sharding: how the result is split."""
    a, b, dtype, weak = product_args("dot", a, b, preferred_element_type)
    an, bn = ndim(a), ndim(b)
    if an == 0 or bn == 0:
        from pyjax._src.numpy.ufuncs import multiply
        out = apply_out_sharding(multiply(a, b), out_sharding, "jnp.dot")
    else:
        contract_b = 0 if bn == 1 else bn - 2
        out = ldot.dot_general(a, b, (((an - 1,), (contract_b,)), ((), ())), precision,
                               dtype, out_sharding)
    return ensure_array(convert(out, dtype, weak))


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
    """Matrix product with NumPy's broadcasting of leading (batch) dimensions.
    out_sharding: how the result is split."""
    a, b, dtype, weak = product_args("matmul", a, b, preferred_element_type)
    an, bn = ndim(a), ndim(b)
    if an == 0 or bn == 0:
        raise ValueError("matmul: operands must not be scalars (use * instead)")
    a_contract, b_contract = an - 1, max(bn - 2, 0)
    if shape(a)[a_contract] != shape(b)[b_contract]:
        raise TypeError(f"matmul: the contracted dimensions differ: the last axis of a "
                        f"(shape {shape(a)}) has size {shape(a)[a_contract]}, but the "
                        f"{'only' if bn == 1 else 'second-to-last'} axis of b (shape "
                        f"{shape(b)}) has size {shape(b)[b_contract]}.")
    if an <= 2 and bn <= 2:   # no batch axes: the free axes of a, then of b
        out = ldot.dot_general(a, b, (((a_contract,), (b_contract,)), ((), ())), precision,
                               dtype, out_sharding)
        return ensure_array(convert(out, dtype, weak))
    a_batch, b_batch = shape(a)[:max(an - 2, 0)], shape(b)[:b_contract]
    try:
        batch = broadcast_shapes(a_batch, b_batch)
    except ValueError:
        raise ValueError(f"matmul: the batch (leading) dimensions of a {shape(a)} and b "
                         f"{shape(b)} do not broadcast: {a_batch} vs {b_batch}.") from None
    # No operand is broadcast or reshaped to a matrix (that would put copies and extra
    # residuals in the program): a batch axis both operands have in full is a batch
    # dimension of dot_general, one only a single operand has in full is a free dimension
    # of that operand (the other's size-1 axis, if any, is squeezed), one of size 1 in
    # both is squeezed from both (and restored in the result), and a vector contributes
    # only its contracted axis. `labels` name dot_general's output axes.
    a_squeezed, b_squeezed, a_batch_dims, b_batch_dims = [], [], [], []
    shared, a_free, b_free, both_squeezed = [], [], [], []
    for i, size in enumerate(batch):
        ai, bi = i - len(batch) + len(a_batch), i - len(batch) + len(b_batch)
        in_a, in_b = ai >= 0 and a_batch[ai] == size, bi >= 0 and b_batch[bi] == size
        if in_a and in_b and size == 1 and out_sharding is None:   # (a split stays)
            a_squeezed.append(ai)
            b_squeezed.append(bi)
            both_squeezed.append(i)
        elif in_a and in_b:
            a_batch_dims.append(ai)
            b_batch_dims.append(bi)
            shared.append(i)
        elif in_a:
            a_free.append(i)
            b_squeezed += [bi] if bi >= 0 else []
        else:
            b_free.append(i)
            a_squeezed += [ai] if ai >= 0 else []
    nb = len(batch)
    labels = shared + a_free + ([nb] if an > 1 else []) + b_free + ([nb + 1] if bn > 1 else [])

    def squeezed_dims(dims, squeezed):
        return tuple(d - sum(s < d for s in squeezed) for d in dims)
    dot_sharding = None
    if out_sharding is not None:   # the result's split, in dot_general's axis order
        check_spec_has_mesh(out_sharding)
        target = canonical_sharding(out_sharding, "jnp.matmul")
        parts = target.spec.padded(len(labels)).partitions
        dot_sharding = NamedSharding(target.mesh, target.spec.update(
            partitions=[parts[k] for k in labels]))
    out = ldot.dot_general(
        st.squeeze(a, a_squeezed), st.squeeze(b, b_squeezed),
        ((squeezed_dims([a_contract], a_squeezed), squeezed_dims([b_contract], b_squeezed)),
         (squeezed_dims(a_batch_dims, a_squeezed), squeezed_dims(b_batch_dims, b_squeezed))),
        precision, dtype, dot_sharding)
    out = st.transpose(out, tuple(np.argsort(labels)))
    if both_squeezed:
        out = st.expand_dims(out, tuple(both_squeezed))
    return ensure_array(convert(out, dtype, weak))


def vdot(a, b, *, precision=None, preferred_element_type=None):
    from pyjax._src.numpy.ufuncs import conjugate
    return dot(ravel(conjugate(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    a, b, dtype, weak = product_args("inner", a, b, preferred_element_type)
    if ndim(a) == 0 or ndim(b) == 0:
        from pyjax._src.numpy.ufuncs import multiply
        out = multiply(a, b)
    else:
        out = ldot.dot_general(a, b, (((ndim(a) - 1,), (ndim(b) - 1,)), ((), ())),
                               precision, dtype)
    return ensure_array(convert(out, dtype, weak))


def outer(a, b, out=None):
    from pyjax._src.numpy.ufuncs import multiply
    a, b = ravel(asarray(a)), ravel(asarray(b))
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


# --- dtype helpers ------------------------------------------------------------------------

def result_type(*args):
    found = {extended_dtype(a) if not isinstance(a, dtypes.ExtendedDType) else a
             for a in args}
    if found != {None}:
        if len(found) == 1:
            return found.pop()
        raise TypeError(f"jnp.result_type: arrays of typed PRNG keys do not combine with "
                        f"other dtypes, got {[getattr(a, 'dtype', a) for a in args]}")
    return dtypes.result_type(*args)


def promote_types(a, b):
    return dtypes.promote_types(a, b)


def can_cast(from_, to, casting="safe"):
    from_dtype = get_aval(from_).dtype if not isinstance(from_, (np.dtype, type, str)) \
        else np.dtype(from_)
    return np.can_cast(from_dtype, np.dtype(to), casting=casting)


def issubdtype(arg1, arg2):
    return dtypes.issubdtype(arg1, arg2)


def isdtype(dtype, kind):
    return np.isdtype(np.dtype(dtype), kind)


def astype(x, dtype, /, *, copy=False, device=None):
    """x as `dtype`; a new array when copy=True even if the dtype is x's already."""
    if extended_dtype(x) is not None:   # typed keys: only to their own dtype, as JAX
        if dtype == x.dtype:
            return array(x, copy=True) if copy else x
        raise ValueError(f"Cannot convert_element_type from {x.dtype} to "
                         f"{dtypes.check_user_dtype(dtype, 'astype')}")
    check_arraylike("astype", x)
    dtype = dtypes.default_float_dtype() if dtype is None else \
        dtypes.check_user_dtype(dtype, "astype")
    if dtypes.is_complex(dtypes.dtype_and_weak_type(x)[0]):
        if np.dtype(dtype).kind in "iuf":
            warnings.warn("Casting from complex to real dtypes will soon raise a ValueError. "
                          "Please first use jnp.real or jnp.imag to take the real/imaginary "
                          "component of your input.", DeprecationWarning, stacklevel=2)
        elif np.dtype(dtype) == np.bool_:
            # as JAX's: true where either part is nonzero (convert_element_type takes the
            # real part)
            from pyjax._src.numpy.ufuncs import not_equal
            x = not_equal(x, 0)
    out = ensure_array(convert(x, dtype))
    if copy and out is x:
        out = _array_copy(out)
    return _place(out, device)


def copy(a, order=None):
    return array(a, copy=True)


def isscalar(element):
    """True for scalars and 0-d arrays (NumPy's too, unlike np.isscalar)."""
    if np.isscalar(element) or dtypes.is_python_scalar(element):
        return True
    if isinstance(element, (Array, Tracer, np.ndarray)):
        return element.ndim == 0
    if getattr(element, "__jax_array__", None) is not None:
        return asarray(element).ndim == 0
    return False


def iscomplexobj(x):
    """Whether x has a complex dtype, read off x.dtype or off x as a host array (no
    transfer to a device; a list holding traced values is traced). None is not
    complex."""
    if x is None:
        return False
    x = jax_array_protocol(x)
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, dtypes.ExtendedDType):   # typed keys
        return False
    if dtype is None:
        dtype = asarray(x).dtype if _contains_jax_values(x) else np.asarray(x).dtype
    return dtypes.is_complex(dtype)


def isrealobj(x):
    return not iscomplexobj(x)


