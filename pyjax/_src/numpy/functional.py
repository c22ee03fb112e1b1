"""jax.numpy's function-applying helpers (vectorize, apply_along_axis, apply_over_axes,
fromfunction, frompyfunc and a small ufunc class), the index tricks (r_, c_, mgrid,
ogrid, s_, index_exp, ravel/unravel_index) and NumPy I/O and printing passthroughs.
vectorize and friends are built on vmap, as in JAX. Imports api (vmap) and the other
jnp modules."""
from __future__ import annotations

import builtins
import operator
import re

import numpy as np

from pyjax._src import dtypes
from pyjax._src.api.vmap import vmap
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike
from pyjax._src.util import canonicalize_axis, canonicalize_shape

# --- vectorize ------------------------------------------------------------------------------

_DIMS = r"\w+"
_CORE = rf"\((?:{_DIMS}(?:,{_DIMS})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    text = signature.replace(" ", "")
    if not _SIGNATURE.match(text):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = text.split("->")
    parse = lambda part: [tuple(d for d in core[1:-1].split(",") if d)  # noqa: E731
                          for core in re.findall(_CORE, part)]
    return parse(ins), parse(outs)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped over the leading (loop) dimensions of its arguments, broadcast
    NumPy-style, with jax.vmap. `signature` ('(m,n),(n)->(m)') names the core dimensions
    each call sees; `excluded` lists positions or names passed through unchanged."""
    for e in excluded:
        if not isinstance(e, (int, str)):
            raise TypeError(f"jnp.vectorize: excluded must hold ints or strings, got {e!r}")
    in_cores, out_cores = _parse_signature(signature) if signature else (None, None)

    def wrapped(*args, **kwargs):
        excluded_kw = {k: v for k, v in kwargs.items() if k in excluded}
        mapped_kw = {k: v for k, v in kwargs.items() if k not in excluded}
        names = list(mapped_kw)
        positions = [i for i in range(len(args)) if i not in excluded]
        mapped = [lnp.asarray(args[i]) for i in positions] + \
            [lnp.asarray(mapped_kw[k]) for k in names]
        cores = in_cores if in_cores is not None else [()] * len(mapped)
        if len(cores) != len(mapped):
            raise TypeError(f"wrong number of positional arguments: expected "
                            f"{len(cores)}, got {len(mapped)}")
        sizes = {}
        loop_shapes = []
        for x, core in zip(mapped, cores):
            shape = get_aval(x).shape
            if len(shape) < len(core):
                raise ValueError(f"input with shape {shape} does not have enough dimensions "
                                 f"for its core dimensions {core}")
            for name, d in zip(core, shape[len(shape) - len(core):]):
                if sizes.setdefault(name, d) != d:
                    raise ValueError(f"inconsistent size for core dimension {name!r}: "
                                     f"{d} vs {sizes[name]}")
            loop_shapes.append(shape[:len(shape) - len(core)])
        loop = lnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        mapped = [lnp.broadcast_to(x, loop + get_aval(x).shape[len(s):])
                  for x, s in zip(mapped, loop_shapes)]

        def call(*xs):
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            kw = dict(excluded_kw)
            kw.update(zip(names, xs[len(positions):]))
            out = pyfunc(*full, **kw)
            if out_cores is not None:
                outs = out if isinstance(out, tuple) else (out,)
                if len(outs) != len(out_cores):
                    raise ValueError(f"wrong number of outputs from pyfunc: expected "
                                     f"{len(out_cores)}, got {len(outs)}")
                for o, core in zip(outs, out_cores):
                    if lnp.ndim(o) != len(core):
                        raise ValueError(f"output with shape {lnp.shape(o)} does not match "
                                         f"its core dimensions {core}")
            return out
        f = call
        for _ in loop:
            f = vmap(f)
        return f(*mapped)
    wrapped.__name__ = getattr(pyfunc, "__name__", "vectorized")
    wrapped.__doc__ = getattr(pyfunc, "__doc__", None)
    return wrapped


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to each 1-D slice of arr along axis (with vmap)."""
    check_arraylike("apply_along_axis", arr)
    arr = lnp.asarray(arr)
    nd = lnp.ndim(arr)
    axis = canonicalize_axis(axis, nd)

    def f(x):
        return func1d(x, *args, **kwargs)
    for i in range(1, nd - axis):
        f = vmap(f, in_axes=i, out_axes=-1)
    for _ in range(axis):
        f = vmap(f, in_axes=0, out_axes=0)
    return f(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping reduced axes as size 1."""
    check_arraylike("apply_over_axes", a)
    a = lnp.asarray(a)
    for axis in axes:
        b = func(a, axis)
        if lnp.ndim(b) == lnp.ndim(a) - 1:
            b = lnp.expand_dims(b, axis)
        elif lnp.ndim(b) != lnp.ndim(a):
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function applied to the index of each element of an array of `shape` (it is
    called once, on index vectors mapped with vmap)."""
    shape = tuple(operator.index(d) for d in shape)
    dtype = dtypes.canonicalize_dtype(dtype)
    for i in range(len(shape)):
        in_axes = [0 if i == j else None for j in range(len(shape))]
        function = vmap(function, in_axes=tuple(in_axes[::-1]))
    return function(*(lnp.arange(s, dtype=dtype) for s in shape), **kwargs)


# --- ufunc ----------------------------------------------------------------------------------

class ufunc:
    """A universal function from a scalar function of nin arguments: broadcasting calls
    (vectorize), and for binary ones reduce, accumulate, outer and at."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None):
        self._func = func
        self.nin, self.nout = operator.index(nin), operator.index(nout)
        self.nargs = nargs or self.nin
        self.identity = identity
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self._call = vectorize(func)

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments, got "
                            f"{len(args)}")
        return self._call(*args)

    def _binary_only(self, method):
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with one output; "
                             f"{self.__name__} has nin={self.nin}, nout={self.nout}")

    def outer(self, A, B, /):
        self._binary_only("outer")
        A, B = lnp.asarray(A), lnp.asarray(B)
        return self(lnp.reshape(A, lnp.shape(A) + (1,) * lnp.ndim(B)), B)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        self._binary_only("reduce")
        if out is not None or where is not None:
            raise NotImplementedError("ufunc.reduce: 'out' and 'where' are not supported")
        a = lnp.asarray(a, dtype) if dtype is not None else lnp.asarray(a)
        a, axis = lnp.axis_or_flattened(a, axis)
        moved = lnp.moveaxis(a, axis, 0)
        n = lnp.shape(moved)[0]
        start = initial if initial is not None else self.identity
        if n == 0 and start is None:
            raise ValueError(f"zero-size reduction of {self.__name__} without identity")
        acc = moved[0] if start is None else lnp.full(lnp.shape(moved)[1:], start,
                                                       get_aval(moved).dtype)
        for i in range(0 if start is not None else 1, n):
            acc = self(acc, moved[i])
        return lnp.expand_dims(acc, axis) if keepdims else acc

    def accumulate(self, a, axis=0, dtype=None, out=None):
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError("ufunc.accumulate: 'out' is not supported")
        a = lnp.asarray(a, dtype) if dtype is not None else lnp.asarray(a)
        axis = canonicalize_axis(axis, lnp.ndim(a))
        moved = lnp.moveaxis(a, axis, 0)
        if not lnp.shape(moved)[0]:
            return a
        outs = [moved[0]]
        for i in range(1, lnp.shape(moved)[0]):
            outs.append(self(outs[-1], moved[i]))
        return lnp.moveaxis(lnp.stack(outs), 0, axis)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of a with a[indices] = self(a[indices], b), applied once per index
        (repeated indices accumulate, as NumPy's unbuffered ufunc.at does)."""
        if inplace:
            raise NotImplementedError("jnp.ufunc.at cannot modify arrays in place (JAX "
                                      "arrays are immutable); pass inplace=False.")
        a = lnp.asarray(a)
        idx = np.asarray(indices) if not isinstance(indices, tuple) else None
        if idx is not None and idx.ndim == 1 and idx.dtype.kind in "iu":
            vals = lnp.broadcast_to(lnp.asarray(b) if b is not None else 0,
                                    (len(idx),) + lnp.shape(a)[1:])
            for k, i in enumerate(idx):
                update = self(a[i], vals[k]) if b is not None else self(a[i])
                a = a.at[i].set(update)
            return a
        update = self(a[indices], b) if b is not None else self(a[indices])
        return a.at[indices].set(update)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A jnp.ufunc from a Python function of nin scalars."""
    return ufunc(func, nin, nout, identity=identity)


# --- index tricks ---------------------------------------------------------------------------

s_ = np.s_
index_exp = np.index_exp


def _slice_values(s):
    """The values a slice stands for in r_/mgrid: arange, or linspace for an imaginary
    step (its magnitude is the number of points, end inclusive)."""
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return lnp.linspace(start, s.stop, int(builtins.abs(step)))
    return lnp.arange(start, s.stop, step)


class _Grid:
    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key)
        axes = [_slice_values(k) for k in key]
        if not axes:
            return lnp.zeros((0,))
        dtype = dtypes.result_type(*axes)
        axes = [lnp.asarray(x, dtype) for x in axes]
        from pyjax._src.numpy.lax_numpy_more import meshgrid
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return grids if self.sparse else lnp.stack(grids)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


class _Concatenator:
    """r_ and c_: concatenation along an axis of arrays, scalars and slices."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        pieces = []
        for k in key:
            if isinstance(k, str):
                if pieces:
                    raise ValueError("r_/c_ directive strings must come first")
                if k in ("r", "c"):
                    raise NotImplementedError("jnp.r_/c_ do not support the matrix "
                                              "directives 'r' and 'c'")
                parts = [int(p) for p in k.split(",")]
                axis = parts[0]
                ndmin = parts[1] if len(parts) > 1 else ndmin
                trans1d = parts[2] if len(parts) > 2 else trans1d
                continue
            x = _slice_values(k) if isinstance(k, slice) else lnp.asarray(k)
            if lnp.ndim(x) < ndmin:   # place x's dims at trans1d among ndmin dims
                shape = lnp.shape(x)
                pos = trans1d + ndmin if trans1d < 0 else trans1d
                start = builtins.min(pos, ndmin - len(shape))
                new = [1] * ndmin
                new[start:start + len(shape)] = shape
                x = lnp.reshape(x, tuple(new))
            pieces.append(x)
        if not pieces:
            return lnp.zeros((0,))
        pieces = [lnp.atleast_1d(p) for p in pieces]
        return lnp.concatenate(pieces, axis)


r_ = _Concatenator(0, 1, -1)
c_ = _Concatenator(-1, 2, 0)


def ravel_multi_index(multi_index, dims, mode="raise", order="C"):
    """Flat indices of the index tuples in multi_index into an array of shape dims."""
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    if order not in ("C", "F"):
        raise ValueError(f"invalid order={order!r}; expected 'C' or 'F'")
    idx = [lnp.asarray(i) for i in multi_index]
    for i in idx:
        if not dtypes.is_int(get_aval(i).dtype):
            raise TypeError(f"only int indices permitted, got {get_aval(i).dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            value = np.asarray(i) if isinstance(i, Array) else None
            if value is None:
                from pyjax._src.numpy.lax_numpy_more import concrete
                value = concrete(i, "ravel_multi_index", "multi_index")
            if ((value < 0) | (value >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [uf.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [lnp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}; expected 'raise', 'wrap' or 'clip'")
    strides = np.cumprod((1,) + dims[::-1][:-1])[::-1] if order == "C" else \
        np.cumprod((1,) + dims[:-1])
    total = lnp.zeros((), dtypes.default_int_dtype())
    for i, s in zip(idx, strides):
        total = total + lnp.asarray(i, dtypes.default_int_dtype()) * int(s)
    return total


def unravel_index(indices, shape):
    """The index tuples of the flat indices into an array of `shape` (negative indices
    count from the end; out-of-range ones are clipped, as in JAX)."""
    shape = canonicalize_shape(shape, "jnp.unravel_index")
    indices = lnp.asarray(indices)
    if not dtypes.is_int(get_aval(indices).dtype):
        raise TypeError("only int indices permitted")
    total = int(np.prod(shape))
    indices = lnp.where(indices < 0, indices + total, indices)
    indices = lnp.clip(indices, 0, builtins.max(total - 1, 0))
    out = []
    for d in reversed(shape):
        out.append(uf.remainder(indices, d) if d else indices)
        indices = uf.floor_divide(indices, d) if d else indices
    return tuple(reversed(out))


# --- creation from buffers, I/O and printing ------------------------------------------------

def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array holding a copy of the buffer's contents."""
    return lnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from an object implementing the DLPack protocol (copied to the host)."""
    return lnp.asarray(np.from_dlpack(x, copy=copy))


def fromstring(string, dtype=float, count=-1, *, sep):
    """An array of the numbers in a text string separated by sep."""
    return lnp.asarray(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromfile(*args, **kwargs):
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromfile(...)) instead, although care should be taken if "
        "np.fromfile is used within jax transformations because of its potential side "
        "effect of consuming the file object; for more information see the JAX FAQ.")


def fromiter(*args, **kwargs):
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other JAX transformations. Consider using "
        "jnp.asarray(np.fromiter(...)) instead, although care should be taken if "
        "np.fromiter is used within jax transformations because of its potential side "
        "effect of consuming the iterable object; for more information see the JAX FAQ.")


def load(file, *args, **kwargs):
    """numpy.load, with arrays (not archives) returned as JAX arrays."""
    out = np.load(file, *args, **kwargs)
    return lnp.asarray(out) if isinstance(out, np.ndarray) and out.dtype != object else out


def save(file, arr, allow_pickle=True):
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, **kwds):
    np.savez(file, *[np.asarray(a) for a in args],
             **{k: np.asarray(v) for k, v in kwds.items()})


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return repr(lnp.asarray(arr)) if max_line_width is precision is suppress_small is None \
        else np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions
printoptions = np.printoptions

