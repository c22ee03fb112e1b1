"""jax.numpy's function-applying helpers (vectorize, apply_along_axis, apply_over_axes,
fromfunction, frompyfunc and a small ufunc class), the index tricks (r_, c_, mgrid,
ogrid, s_, index_exp, ravel/unravel_index) and NumPy I/O and printing passthroughs.
vectorize and friends are built on vmap, as in JAX. Imports api (vmap) and the other
jnp modules."""
from __future__ import annotations

import builtins
import functools
import math
import operator
import re
import warnings

import numpy as np

from pyjax._src import config, dtypes
from pyjax._src.api.shapes import ShapeDtypeStruct, eval_shape
from pyjax._src.api.vmap import vmap
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax.control_flow import fori_loop
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy.indexing import take
from pyjax._src.numpy.array_manipulation import append, concrete, meshgrid
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import check_arraylike, promote_dtypes
from pyjax._src.util import canonicalize_axis

# --- vectorize ------------------------------------------------------------------------------

_DIMS = r"\w+"
_CORE = rf"\((?:{_DIMS}(?:,{_DIMS})*)?\)"
_ARGS = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_ARGS}->{_ARGS}$")


def _parse_signature(signature):
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)]) (no spaces, as JAX)."""
    if not _SIGNATURE.match(signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    return tuple([tuple(re.findall(_DIMS, core)) for core in re.findall(_CORE, part)]
                 for part in signature.split("->"))


def _update_dim_sizes(sizes, shape, core, context, *, is_input):
    """Checks one argument's (or result's) core dimensions against `sizes`, and records
    the sizes of new ones."""
    if is_input and len(shape) < len(core):
        raise ValueError(f"input with shape {shape!r} does not have enough dimensions for "
                         f"all core dimensions {core!r} {context}")
    if not is_input and len(shape) != len(core):
        raise ValueError(f"output shape {shape!r} does not match core dimensions {core!r} "
                         f"{context}")
    for name, d in zip(core, shape[len(shape) - len(core):]):
        if sizes.setdefault(name, d) != d:
            raise ValueError(f"inconsistent size for core dimension {name!r}: {d!r} vs "
                             f"{sizes[name]!r} {context}")


def _checking_outputs(f, sizes, out_cores, context):
    """f, checking that its results have the signature's output core dimensions."""
    def checked(*args):
        out = f(*args)
        if len(out_cores) > 1 and not isinstance(out, tuple):
            raise TypeError(f"output must be a tuple when multiple outputs are expected, "
                            f"got: {out!r}\n{context}")
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_cores):
            raise TypeError(f"wrong number of output arguments: expected {len(out_cores)!r}, "
                            f"got {len(outs)!r} {context}")
        sizes_out = dict(sizes)
        for o, core in zip(outs, out_cores):
            _update_dim_sizes(sizes_out, lnp.shape(o), core, context, is_input=False)
        return out
    return checked


def _apply_excluded(f, excluded, args, kwargs):
    """f with the excluded positional and keyword arguments bound, and the rest."""
    if not excluded:
        return f, args, kwargs
    dynamic = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kw = {k: v for k, v in kwargs.items() if k not in excluded}
    static = [(i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int))
              if i < len(args)]
    static_kw = {k: v for k, v in kwargs.items() if k in excluded}

    def bound(*xs, **kw):
        xs = list(xs)
        for i, a in static:
            xs.insert(i, a)
        return f(*xs, **kw, **static_kw)
    return bound, dynamic, dynamic_kw


def _check_rank_promotion(args, in_cores, signature):
    mode = config.numpy_rank_promotion.value
    if mode == "allow":
        return
    ranks = {lnp.ndim(a) - len(core) for a, core in zip(args, in_cores) if lnp.ndim(a)}
    if len(ranks) > 1:
        msg = (f"operands with shapes {[lnp.shape(a) for a in args]} require rank promotion "
               f"for jnp.vectorize function with signature {signature}. Set the "
               "jax_numpy_rank_promotion config option to 'allow' to disable this message; "
               "for more information, see "
               "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
        if mode == "raise":
            raise ValueError(msg)
        warnings.warn(msg, stacklevel=3)


def vectorize(pyfunc, *, excluded=frozenset(), signature=None):
    """pyfunc mapped with jax.vmap over the leading (loop) dimensions of its arguments,
    broadcast NumPy-style. `signature` ('(m,n),(n)->(m)') names the core dimensions each
    call sees; `excluded` lists positions or names passed through unchanged. As in JAX,
    keyword arguments that are not excluded are not passed on, and a None argument with
    no core dimensions (past the first) is passed through."""
    if any(not isinstance(e, (str, int)) for e in excluded):
        raise TypeError("jax.numpy.vectorize can only exclude integer or string arguments, "
                        f"but excluded={excluded!r}")
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and " \
                  f"signature={signature!r}"
        f, args, _ = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            in_cores, out_cores = _parse_signature(signature)
        else:
            in_cores, out_cores = [()] * len(args), None
        nones = {i for i, a in enumerate(args) if a is None}
        if any(nones):   # any() of the positions: a None in first place is not passed (JAX)
            if any(in_cores[i] != () for i in nones):
                raise ValueError(f"Cannot pass None at locations {nones} with "
                                 f"signature={signature!r}")
            f, args, _ = _apply_excluded(f, nones, args, {})
            in_cores = [core for i, core in enumerate(in_cores) if i not in nones]
        args = [lnp.asarray(a) for a in args]
        if len(args) != len(in_cores):
            raise TypeError(f"wrong number of positional arguments: expected "
                            f"{len(in_cores)!r}, got {len(args)!r} {context}")
        sizes, loop_shapes = {}, []
        for a, core in zip(args, in_cores):
            _update_dim_sizes(sizes, lnp.shape(a), core, context, is_input=True)
            loop_shapes.append(lnp.shape(a)[:lnp.ndim(a) - len(core)])
        loop = lnp.broadcast_shapes(*loop_shapes) if loop_shapes else ()
        if out_cores is not None:
            f = _checking_outputs(f, sizes, out_cores, context)
        _check_rank_promotion(args, in_cores, signature)
        # Size-1 loop dimensions are squeezed and not mapped (vmap maps the others only,
        # so batching rules see unbatched operands); they come back as expand_dims.
        squeezed, reversed_loops = [], []
        for a, s in zip(args, loop_shapes):
            reversed_loops.append(((1,) * (len(loop) - len(s)) + s)[::-1])
            squeezed.append(lnp.squeeze(a, tuple(i for i, d in enumerate(s) if d == 1)))
        expand = []
        for neg, dims in enumerate(zip(*reversed_loops)):
            in_axes = tuple(None if d == 1 else 0 for d in dims)
            if all(ax is None for ax in in_axes):
                expand.append(len(loop) - 1 - neg)
            else:
                f = vmap(f, in_axes)
        out = f(*squeezed)
        if not expand:
            return out
        if isinstance(out, tuple):
            return tuple(lnp.expand_dims(o, expand) for o in out)
        return lnp.expand_dims(out, expand)
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
    (vectorize), and for binary ones reduce, accumulate, reduceat, outer and at. jnp's
    own ufuncs (jnp.add, ...) pass faster implementations of these (call=, reduce=, ...);
    the properties are read-only, as in JAX."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        nin, nout = operator.index(nin), operator.index(nout)
        object.__setattr__(self, "_props", {
            "func": func, "nin": nin, "nout": nout, "nargs": operator.index(nargs or nin),
            "identity": identity, "call": call or vectorize(func), "reduce": reduce,
            "accumulate": accumulate, "at": at, "reduceat": reduceat})
        object.__setattr__(self, "__name__", name or getattr(func, "__name__", "ufunc"))
        object.__setattr__(self, "__doc__", getattr(func, "__doc__", None))

    _func = property(lambda self: self._props["func"])
    nin = property(lambda self: self._props["nin"])
    nout = property(lambda self: self._props["nout"])
    nargs = property(lambda self: self._props["nargs"])
    identity = property(lambda self: self._props["identity"])

    def __setattr__(self, name, value):
        raise AttributeError(f"jnp.ufunc attribute {name!r} is read-only")

    def __hash__(self):
        return hash((self._func, self.__name__, self.identity, self.nin, self.nout,
                     self.nargs))

    def __eq__(self, other):
        return isinstance(other, ufunc) and (
            (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs) ==
            (other._func, other.__name__, other.identity, other.nin, other.nout,
             other.nargs))

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments, got "
                            f"{len(args)}")
        return self._props["call"](*args)

    def _binary_only(self, method):
        if self.nin != 2:
            raise ValueError(f"{method} only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError(f"{method} only supported for functions returning a single "
                             "value")

    def outer(self, A, B, /):
        self._binary_only("outer")
        check_arraylike(f"{self.__name__}.outer", A, B)
        A, B = lnp.asarray(A), lnp.asarray(B)
        return self(lnp.reshape(A, lnp.shape(A) + (1,) * lnp.ndim(B)), B)

    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        self._binary_only("reduce")
        check_arraylike(f"{self.__name__}.reduce", a)
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 "identity, so to use a where mask one has to specify "
                                 "'initial'.")
            if get_aval(lnp.asarray(where)).dtype != np.bool_:
                raise ValueError("where argument must have dtype=bool; got "
                                 f"dtype={get_aval(lnp.asarray(where)).dtype}")
        fast = self._props["reduce"]
        if fast is not None:
            return fast(a, axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                        where=where)
        return self._reduce_by_steps(a, axis, dtype, keepdims, initial, where)

    def _result_dtype(self, *args):
        """The dtype self gives for arguments of these arrays' dtypes."""
        ones = [ShapeDtypeStruct((), get_aval(lnp.asarray(x)).dtype) for x in args]
        return eval_shape(self._func, *ones).dtype

    def _reduce_by_steps(self, a, axis, dtype, keepdims, initial, where):
        """self applied along one axis element by element (a fori_loop)."""
        a = lnp.asarray(a)
        start = self.identity if initial is None else initial
        dtype = self._result_dtype(a, a) if dtype is None else dtype
        if where is not None:
            where = lnp.broadcast_to(where, lnp.shape(a))
        if isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce over a tuple of axes")
        if axis is None:
            final = (1,) * lnp.ndim(a) if keepdims else ()
            a, axis = lnp.ravel(a), 0
            where = None if where is None else lnp.ravel(where)
        else:
            axis = canonicalize_axis(axis, lnp.ndim(a))
            shape = lnp.shape(a)
            final = shape[:axis] + ((1,) if keepdims else ()) + shape[axis + 1:]
        a = lnp.moveaxis(a, axis, 0)
        where = None if where is None else lnp.moveaxis(where, axis, 0)
        if lnp.shape(a)[0] == 0:
            if start is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 "which has no identity")
            return lnp.full(final, start, dtype)

        def step(i, acc):
            new = self(acc, a[i].astype(dtype))
            return new if where is None else lnp.where(where[i], new, acc)

        first, acc = (1, a[0]) if start is None else (0, start)
        acc = lnp.broadcast_to(lnp.asarray(acc).astype(dtype), lnp.shape(a)[1:])
        return lnp.reshape(fori_loop(first, lnp.shape(a)[0], step, acc), final)

    def accumulate(self, a, axis=0, dtype=None, out=None):
        self._binary_only("accumulate")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        fast = self._props["accumulate"]
        if fast is not None:
            return fast(a, axis=axis, dtype=dtype)
        a = lnp.asarray(a, dtype) if dtype is not None else lnp.asarray(a)
        axis = canonicalize_axis(axis, lnp.ndim(a))
        moved = lnp.moveaxis(a, axis, 0)
        if not lnp.shape(moved)[0]:
            return a
        outs = [moved[0]]
        for i in range(1, lnp.shape(moved)[0]):
            outs.append(self(outs[-1], moved[i]))
        return lnp.moveaxis(lnp.stack(outs), 0, axis)

    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """self.reduce over the slices a[indices[i]:indices[i+1]] along axis (a[i] alone
        where indices[i] >= indices[i+1], as in NumPy)."""
        self._binary_only("reduceat")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        fast = self._props["reduceat"]
        if fast is not None:
            return fast(a, indices, axis=axis, dtype=dtype)
        check_arraylike(f"{self.__name__}.reduceat", a, indices)
        a, indices = lnp.asarray(a), lnp.asarray(indices)
        if lnp.ndim(a) == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got {a.shape=}")
        if lnp.ndim(indices) != 1:
            raise ValueError("reduceat: indices must be one-dimensional, got "
                             f"{indices.shape=}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        if dtype is not None:
            a = a.astype(dtype)
        axis = canonicalize_axis(axis, lnp.ndim(a))
        out = take(a, indices, axis=axis)
        # slice k runs from indices[k] to indices[k+1] (to the end for the last one)
        bounds = append(indices, lnp.shape(a)[axis])
        other_axes = [d for d in range(lnp.ndim(out)) if d != axis]
        starts = lnp.expand_dims(bounds[:-1], other_axes)
        ends = lnp.expand_dims(bounds[1:], other_axes)

        def step(i, acc):
            row = take(a, lnp.expand_dims(i, 0), axis=axis)
            return lnp.where((i > starts) & (i < ends), self(acc, row), acc)

        return fori_loop(0, lnp.shape(a)[axis], step, out)

    def at(self, a, indices, b=None, /, *, inplace=True):
        """A copy of a with a[indices] = self(a[indices], b), applied once per index
        (repeated indices accumulate, as NumPy's unbuffered ufunc.at does)."""
        if inplace:
            raise NotImplementedError("jnp.ufunc.at cannot modify arrays in place (JAX "
                                      "arrays are immutable); pass inplace=False.")
        fast = self._props["at"]
        if fast is not None:
            return fast(a, indices) if b is None else fast(a, indices, b)
        args = () if b is None else (b,)
        check_arraylike(f"{self.__name__}.at", a, *args)
        dtype = self._result_dtype(a, *args)
        a = lnp.asarray(a).astype(dtype)
        args = tuple(lnp.asarray(x).astype(dtype) for x in args)
        indices = indices if isinstance(indices, tuple) else (indices,)
        if not indices:
            return a
        indices = tuple(i if isinstance(i, slice) else lnp.asarray(i) for i in indices)
        shapes = [lnp.shape(i) for i in indices if not isinstance(i, slice)]
        shape = np.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a[indices], *args))
        n = math.prod(shape)
        if args:   # one value per index (and whatever the indexed slices add)
            tail = lnp.shape(args[0])[len(shape):]
            args = (lnp.reshape(lnp.broadcast_to(args[0], (*shape, *tail)), (n, *tail)),)
        flat = [i if isinstance(i, slice) else lnp.ravel(lnp.broadcast_to(i, shape))
                for i in indices]

        def step(k, acc):
            idx = tuple(i if isinstance(i, slice) else i[k] for i in flat)
            return acc.at[idx].set(self(acc[idx], *(x[k] for x in args)))

        return fori_loop(0, n, step, a)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A jnp.ufunc from a Python function of nin scalars."""
    return ufunc(func, nin, nout, identity=identity)


# --- index tricks ---------------------------------------------------------------------------

s_ = np.s_
index_exp = np.index_exp


def _slice_bound(value, what, op_name):
    """A start, stop or step of a slice given to jnp.`op_name`: it decides the length of
    the result, so a traced one must have a concrete value."""
    if isinstance(value, Tracer):
        why = (f"The {what} of jnp.{op_name} must be concrete: it decides the shape of "
               "the result.\n")
        return concrete(value, op_name, what, why).item()
    return value


def _slice_values(s, op_name):
    """The values a slice stands for in r_/c_/mgrid/ogrid: arange, or linspace for an
    imaginary step (its magnitude is the number of points, end inclusive)."""
    start = _slice_bound(s.start, "slice start", op_name)
    stop = _slice_bound(s.stop, "slice stop", op_name)
    step = _slice_bound(s.step, "slice step", op_name)
    start = 0 if start is None else start
    step = 1 if step is None else step
    if np.iscomplex(step):
        return lnp.linspace(start, stop, int(builtins.abs(step)))
    return lnp.arange(start, stop, step)


class _Grid:
    """mgrid (dense) and ogrid (sparse): the ij-meshgrid of the slices' values, promoted
    to one dtype."""

    def __init__(self, sparse):
        self.sparse = sparse
        self.op_name = "ogrid" if sparse else "mgrid"

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _slice_values(key, self.op_name)
        axes = [_slice_values(k, self.op_name) for k in key]
        with config.numpy_dtype_promotion("standard"):
            axes = promote_dtypes(*axes)
        grids = meshgrid(*axes, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        return lnp.stack(grids) if grids else lnp.arange(0)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


class _Concatenator:
    """r_ and c_: concatenation along an axis of arrays, scalars and slices. A leading
    string sets the axis, the minimum rank and where a lower-rank piece's axes go among
    those (NumPy's 'axis,ndmin,trans1d'), or asks for a row ('r') or column ('c') matrix
    of a 1-d result."""

    def __init__(self, axis, ndmin, trans1d, op_name):
        self.axis, self.ndmin, self.trans1d, self.op_name = axis, ndmin, trans1d, op_name

    def _directive(self, directive):
        """(axis, ndmin, trans1d, matrix axis or -1) of a directive string."""
        defaults = [self.axis, self.ndmin, self.trans1d]
        if directive in ("r", "c"):
            return (*defaults, 0 if directive == "r" else 1)
        parts = directive.split(",")[:3]   # NumPy ignores anything after three ints
        try:
            values = [int(p) for p in parts]
        except ValueError as err:
            raise ValueError(f"could not understand directive {directive!r}") from err
        return (*values, *defaults[len(values):], -1)

    def __getitem__(self, key):
        key = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d, matrix = self.axis, self.ndmin, self.trans1d, -1
        if key and isinstance(key[0], str):
            (axis, ndmin, trans1d, matrix), key = self._directive(key[0]), key[1:]
        pieces = []
        for k in key:
            if isinstance(k, str):
                raise ValueError("string directive must be placed at the beginning")
            x = _slice_values(k, self.op_name) if isinstance(k, slice) else lnp.asarray(k)
            rank = 0 if isinstance(k, slice) else lnp.ndim(x)
            x = lnp.array(x, copy=False, ndmin=ndmin)
            if trans1d != -1 and ndmin > rank:
                # x's own axes (now last) move to start at trans1d: a rotation of the axes
                shift = ndmin - builtins.abs(ndmin + trans1d + 1) % ndmin
                x = lnp.transpose(x, tuple(range(ndmin))[shift:] + tuple(range(shift)))
            pieces.append(x)
        out = lnp.concatenate(pieces, axis)
        if matrix != -1 and out.ndim == 1:
            out = lnp.expand_dims(out, matrix)
        return out

    def __len__(self):
        return 0


r_ = _Concatenator(0, 1, -1, "r_")
c_ = _Concatenator(-1, 2, 0, "c_")


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """Flat indices of the index tuples in multi_index into an array of shape dims, in
    `dtype` (by default the indices' own integer dtype). mode "raise" checks the indices
    (so they must be concrete), "wrap" and "clip" bring them in bounds, "ignore" trusts
    them."""
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    check_arraylike("ravel_multi_index", *multi_index)
    idx = [lnp.asarray(i) for i in multi_index]
    if dtype is None:
        dtype = dtypes.result_type(int, *idx)
    else:
        dtype = dtypes.check_user_dtype(dtype, "ravel_multi_index")
    if not dtypes.is_int(dtype):
        raise ValueError(f"dtype={np.dtype(dtype)} is not an integer type.")
    if math.prod(dims) - 1 > np.iinfo(dtype).max:
        raise ValueError(f"jnp.ravel_multi_index: dtype={np.dtype(dtype)} not large enough "
                         f"to hold flattened index for dims={dims}. Use the dtype argument "
                         "to pass a suitable dtype (e.g. dtype=np.min_scalar_type("
                         "prod(dims))).")
    for i in idx:
        if not dtypes.is_int(get_aval(i).dtype):
            raise TypeError(f"only int indices permitted, got {get_aval(i).dtype}")
    if mode == "raise":
        for i, d in zip(idx, dims):
            value = concrete(i, "ravel_multi_index", "multi_index",
                             "The error occurred because ravel_multi_index was jit-compiled "
                             "with mode='raise'. Use mode='wrap' or mode='clip' instead.\n")
            if ((value < 0) | (value >= d)).any():
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [uf.remainder(i, d) for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [lnp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or "
                         "'ignore'.")
    if order == "F":
        strides = np.cumprod((1,) + dims[:-1])
    elif order == "C":
        strides = np.cumprod((1,) + dims[1:][::-1])[::-1]
    else:
        raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")
    total = lnp.zeros((), dtype)
    for i, stride in zip(idx, strides):
        total = total + lnp.asarray(i, dtype) * int(stride)
    return total


def unravel_index(indices, shape):
    """The index tuples of the flat indices into an array of `shape` (whose sizes may be
    traced); as in JAX, out-of-range indices are clipped and negative ones count from the
    end."""
    check_arraylike("unravel_index", indices)
    indices = lnp.asarray(indices)
    shape = list(shape) if isinstance(shape, (tuple, list)) or hasattr(shape, "__len__") \
        else [shape]
    if builtins.any(np.ndim(s) != 0 for s in shape):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    if builtins.any(isinstance(s, (int, np.integer)) and s < 0 for s in shape):
        raise TypeError(f"jnp.unravel_index: shape {tuple(shape)} has negative dimensions.")
    out = [0] * len(shape)
    for i, size in reversed(list(enumerate(shape))):
        indices, out[i] = uf.divmod(indices, size)
    too_big = indices > 0
    too_small = lnp.asarray(False) if get_aval(indices).dtype.kind == "u" else indices < -1
    return tuple(lnp.where(too_big, size - 1, lnp.where(too_small, 0, i))
                 for size, i in zip(shape, out))


# --- creation from buffers, I/O and printing ------------------------------------------------

def frombuffer(buffer, dtype=float, count=-1, offset=0):
    """An array holding a copy of the buffer's contents."""
    return lnp.asarray(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


_XLA_CPU_ALIGNMENT = 64   # bytes: XLA takes a CPU buffer without copying only so aligned


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from an object implementing the DLPack protocol (on `device` if given).
    copy=False refuses data XLA could not take without a copy (not 64-byte aligned), as
    in JAX."""
    host = np.from_dlpack(x, copy=copy)
    if copy is False and host.ctypes.data % _XLA_CPU_ALIGNMENT:
        raise ValueError(
            "Specified input which requires a copy since the source data buffer is not "
            f"aligned to {_XLA_CPU_ALIGNMENT} bytes.  However copy=False. Set copy=True or "
            "copy=None to perform the requested operation.")
    return lnp.asarray(host, device=device)


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
    if not isinstance(out, np.ndarray) or out.dtype == object:
        return out
    if out.dtype == "V2":   # NumPy saves bfloat16, a dtype it does not know, as 2-byte voids
        out = out.view(dtypes.bfloat16)
    return lnp.asarray(out)


def save(file, arr, allow_pickle=True):
    np.save(file, np.asarray(arr), allow_pickle=allow_pickle)


def savez(file, *args, allow_pickle=True, **kwds):
    np.savez(file, *[np.asarray(a) for a in args], allow_pickle=allow_pickle,
             **{k: np.asarray(v) for k, v in kwds.items()})


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return repr(lnp.asarray(arr)) if max_line_width is precision is suppress_small is None \
        else np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)


get_printoptions = np.get_printoptions
def set_printoptions(*args, **kwargs):
    """NumPy's print options, which jax.numpy arrays print with."""
    return np.set_printoptions(*args, **kwargs)

printoptions = np.printoptions

