"""NumPy indexing on arrays and tracers (`x[idx]`, `x.at[idx]`) and the index functions
take, take_along_axis, put_along_axis, nonzero, argwhere and flatnonzero. Basic indices
become slices (small jaxprs); integer arrays become one gather or scatter. Imports lax,
dtypes, errors and the jnp ufuncs."""
from __future__ import annotations

import functools
import operator
from collections.abc import Sequence
import warnings

import numpy as np

from pyjax._src import config, dtypes, errors, tree_util
from pyjax._src.api.jit import jit
from pyjax._src.array import Array, as_array
from pyjax._src.core.avals import get_aval, refuse_masked
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import indexing as li
from pyjax._src.lax import reductions as red
from pyjax._src.shape_poly import is_symbolic_dim, max_dim, min_dim
from pyjax._src.lax import slicing as sl
from pyjax._src.lax import structural as st
from pyjax._src.lax.sharding_constraint import apply_out_sharding
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs
from pyjax._src.numpy.util import (check_arraylike, ensure_arraylike, extended_dtype,
                                   jax_array_protocol)
from pyjax._src.lax.indexing import (FILL_OR_DROP, PROMISE_IN_BOUNDS,
                                     GatherDimensionNumbers, GatherScatterMode,
                                     ScatterDimensionNumbers)
from pyjax._src.util import canonicalize_axis, prod

# --- parsing an index -------------------------------------------------------------------
# An index becomes a list of entries, one per output-producing item, in order:
#   ("new", size)                         None (size 1)
#   ("bool", value)                       a 0-d boolean (see _resolve_bools)
#   ("slice", dim, start, step, length)   a static slice of operand dimension `dim`
#   ("adv", dim, value)                   an integer index of `dim`: a Python int, a NumPy
#                                         integer array or a traced integer array

_TRACED_SLICE = (
    "Array slice indices must have static start/stop/step to be used with NumPy indexing "
    "syntax. Found {}. To index a statically sized array at a dynamic position, try "
    "lax.dynamic_slice/dynamic_update_slice (JAX does not support dynamically sized arrays "
    "within JIT compiled functions).")


def _operand(x):
    """x as an Array or tracer (lists, scalars and objects with __jax_array__ are
    converted)."""
    x = jax_array_protocol(x)
    if isinstance(x, (Array, Tracer)):
        return x
    if isinstance(x, (list, tuple)):
        return lnp.asarray(x)
    return as_array(x)


def _holds_jax_values(seq):
    """Whether a (nested) list or tuple index holds Arrays or tracers (NumPy cannot look
    inside it for them: it would ask a tracer for its value)."""
    return any(_holds_jax_values(i) if isinstance(i, (list, tuple))
               else isinstance(i, (Array, Tracer)) for i in seq)


def _classify(e, pos):
    """One index item -> ("int", i) | ("bool", b) | ("mask", array) | ("array", array);
    ("int0d", i) for a 0-d integer array (not a static index to jax_check_static_indices)."""
    if isinstance(e, (bool, np.bool_)):
        return ("bool", bool(e))
    if isinstance(e, (int, np.integer)):
        return ("int", operator.index(e))
    if isinstance(e, (list, tuple)):
        if _holds_jax_values(e):
            e = lnp.asarray(e)
        else:
            e = np.asarray(e) if len(e) else np.zeros((0,), np.int32)
    if isinstance(e, Array):
        e = e._value
    if isinstance(e, Tracer):
        kind = e.aval.dtype
        if kind == np.bool_:
            value = e.to_concrete_value()
            if value is None:
                raise errors.NonConcreteBooleanIndexError(e)
            return _classify(np.asarray(value), pos)
        if kind.kind in "iu":
            return ("array", e)
    elif isinstance(e, (np.ndarray, np.generic)):
        refuse_masked(e)
        e = np.asarray(e)
        if e.dtype == np.bool_:
            return ("bool", bool(e)) if e.ndim == 0 else ("mask", e)
        if e.dtype.kind in "iu":
            return ("int0d", int(e)) if e.ndim == 0 else ("array", e)
    elif isinstance(e, str):
        raise TypeError(f"JAX does not support string indexing; got idx={e!r} at position "
                        f"{pos}.")
    elif not isinstance(e, (float, complex)):   # numbers of the wrong type: TypeError below
        raise IndexError(f"Indexer must be an integer, slice, None, Ellipsis, boolean or "
                         f"integer array; got {type(e).__name__} {e!r} at position {pos}.")
    raise TypeError(f"Indexer must have integer or boolean type, got indexer with type "
                    f"{np.dtype(get_aval(e).dtype).name} at position {pos}, indexer value "
                    f"{e}")


def _static_slice_part(v):
    if isinstance(v, Tracer):
        concrete = v.to_concrete_value()
        if concrete is None:
            return None
        v = concrete
    return None if v is None else operator.index(v)


def _unpacks_as_tuple(i):
    """Whether NumPy would read a list index holding `i` as a tuple of indices."""
    return (isinstance(i, (np.ndarray, Array, Tracer)) and np.ndim(i) != 0
            or isinstance(i, (Sequence, slice)) or i is Ellipsis or i is None)


def _parse(shape, idx, check_bounds=False, wrap_negative=True):
    """The index as entries over x's dimensions. With `check_bounds` (JAX's
    jax_check_static_indices), a static integer index out of bounds raises."""
    if isinstance(idx, Sequence) and not isinstance(idx, (tuple, str)):
        # JAX refuses every non-tuple sequence, and names the spelling that NumPy's
        # heuristics would have read it as.
        fix = "tuple" if any(_unpacks_as_tuple(i) for i in idx) else "array"
        raise TypeError("Using a non-tuple sequence for multidimensional indexing is not "
                        f"allowed; use `arr[{fix}(seq)]` instead of `arr[seq]`. See "
                        "https://github.com/jax-ml/jax/issues/4564 for more information.")
    if not isinstance(idx, tuple):
        idx = (idx,)
    items, consumed, ellipsis_at = [], 0, None
    for pos, e in enumerate(idx):
        if e is None:
            items.append(("new", 1))
        elif e is Ellipsis:
            if ellipsis_at is not None:
                raise IndexError("an index can only have a single ellipsis ('...')")
            ellipsis_at = len(items)
        elif isinstance(e, slice):
            parts = (e.start, e.stop, e.step)
            if any(p is not None and _static_slice_part(p) is None for p in parts):
                raise IndexError(_TRACED_SLICE.format(e))
            items.append(("rawslice", slice(*map(_static_slice_part, parts))))
            consumed += 1
        else:
            item = _classify(e, pos)
            items.append(item)
            if item[0] != "bool":
                consumed += item[1].ndim if item[0] == "mask" else 1
    if consumed > len(shape):
        raise IndexError(f"Too many indices: array is {len(shape)}-dimensional, but "
                         f"{consumed} were indexed")
    fill = [("rawslice", slice(None))] * (len(shape) - consumed)
    if ellipsis_at is None:
        items += fill
    else:
        items[ellipsis_at:ellipsis_at] = fill
    entries, dim = [], 0
    for item in items:
        kind = item[0]
        if kind in ("new", "bool"):
            entries.append(item)
        elif kind == "rawslice" and is_symbolic_dim(shape[dim]):
            entries.append(("slice", dim, *_symbolic_slice(item[1], shape[dim])))
            dim += 1
        elif kind == "rawslice":
            n = shape[dim]
            try:
                start, stop, step = item[1].indices(n)
            except ValueError:
                raise ValueError("slice step cannot be zero") from None
            entries.append(("slice", dim, start, step, len(range(start, stop, step))))
            dim += 1
        elif kind == "mask":
            mask = item[1]
            expected = list(shape[dim:dim + mask.ndim])
            # an empty dimension of the mask selects nothing along any size (as JAX)
            if not all(m in (0, d) for m, d in zip(mask.shape, expected)):
                raise IndexError(f"boolean index did not match shape of indexed array in "
                                 f"index {dim}: got {mask.shape}, expected {expected}")
            for k, where in enumerate(np.nonzero(mask)):
                entries.append(("adv", dim + k, where.astype(dtypes.default_int_dtype())))
            dim += mask.ndim
        else:
            if check_bounds and kind == "int":
                _check_static_index(item[1], dim, shape[dim], wrap_negative)
            entries.append(("adv", dim, item[1]))
            dim += 1
    return entries


def _symbolic_slice(s, n):
    """(start, step, length) of the slice `s` (static ints) of a dimension of symbolic
    size `n`, clamped as Python clamps slices."""
    start, stop, step = s.start, s.stop, 1 if s.step is None else operator.index(s.step)
    if step == 0:
        raise ValueError("slice step cannot be zero")
    if step > 0:
        def clamp(i, default):
            if i is None:
                return default
            i = operator.index(i)
            return min_dim(n, i) if i >= 0 else max_dim(0, n + i)
        start, stop = clamp(start, 0), clamp(stop, n)
        return start, step, (max_dim(0, stop - start) + step - 1) // step

    def clamp_down(i, default):   # a negative step: from n - 1 down to -1 (past 0)
        if i is None:
            return default
        i = operator.index(i)
        return min_dim(n - 1, i) if i >= 0 else max_dim(-1, n + i)
    start, stop = clamp_down(start, n - 1), clamp_down(stop, -1)
    return start, step, (max_dim(0, start - stop) - step - 1) // -step


def _check_static_index(i, axis, size, wrap_negative):
    if not 0 <= (i + size if wrap_negative and i < 0 else i) < size:
        raise IndexError(f"index {i} out of bounds for axis {axis} with size {size} "
                         f"(normalize_indices={wrap_negative})")


def _empty_result(x, shape):
    """An empty result of indexing x, computed from x so that it is placed where x is
    (committed to x's device, as JAX's)."""
    flat = st.reshape(x, (x.aval.size,))
    return st.reshape(sl.slice(flat, (0,), (0,)), shape)


def _resolve_bools(shape, entries):
    """NumPy's rule for 0-d booleans: each is an advanced index of shape (1,) (True) or
    (0,) (False) over a new size-1 axis. Returns the entries and the operand shape they
    index (the operand gets the new axes only when integer arrays are also present)."""
    bools = [e[1] for e in entries if e[0] == "bool"]
    if not bools:
        return entries, tuple(shape)
    size = 1 if all(bools) else 0
    if all(_shape_of(e[2]) == () for e in entries if e[0] == "adv"):
        # Only integers besides: the advanced group is one new axis, placed as NumPy does.
        group = [k for k, e in enumerate(entries) if e[0] in ("bool", "adv")]
        at = group[0] if group == list(range(group[0], group[-1] + 1)) else 0
        out = []
        for k, e in enumerate(entries):
            if k == at:
                out.append(("new", size))
            if e[0] != "bool":
                out.append(e)
        return out, tuple(shape)
    out, new_shape, inserted, next_dim = [], list(shape), 0, 0
    for e in entries:
        if e[0] == "bool":
            new_shape.insert(next_dim + inserted, 1)
            out.append(("adv", next_dim + inserted, np.zeros(size, np.int32)))
            inserted += 1
        elif e[0] == "new":
            out.append(e)
        else:
            out.append((e[0], e[1] + inserted) + e[2:])
            next_dim = e[1] + 1
    return out, tuple(new_shape)


def _prepare(x, idx, check_bounds=False, wrap_negative=True):
    """(operand, entries): the index parsed against x, with x reshaped if 0-d booleans
    need new axes. With `check_bounds`, a static integer index out of bounds raises."""
    x = _operand(x)
    entries, shape = _resolve_bools(x.aval.shape, _parse(x.aval.shape, idx, check_bounds,
                                                         wrap_negative))
    return st.reshape(x, shape), entries


def _shape_of(v):
    return () if isinstance(v, int) else tuple(v.shape)


def _normalize(v, n):
    """Negative indices count from the end (static values on the host)."""
    if isinstance(v, int):
        return v + n if v < 0 else v
    if isinstance(v, np.ndarray):
        if v.dtype.kind != "i" or not (v < 0).any():
            return v
        if not is_symbolic_dim(n):
            return np.where(v < 0, v + n, v)
        v = as_array(v)   # counted from a symbolic size: computed in the program
    if v.aval.dtype.kind == "u":
        return v
    n = st.dim_as_value(n, v.aval.dtype)
    return ew.select(ew.lt(v, np.zeros((), v.aval.dtype)), ew.add(v, n), v)


# --- the gather/scatter form of an index ------------------------------------------------

class _Indexer:
    """An index as XLA gather/scatter operands: `indices` (NumPy or traced), dimension
    numbers, slice sizes, and the shapes with and without the new (None) axes."""

    def __init__(self, shape, entries, wrap_negative=True, scatter=False):
        adv = [(k, e) for k, e in enumerate(entries) if e[0] == "adv"]
        try:
            adv_shape = lnp.broadcast_shapes(*[_shape_of(e[2]) for _, e in adv])
        except ValueError:
            shapes = " ".join(str(_shape_of(e[2])) for _, e in adv)
            raise IndexError(f"shape mismatch: indexing arrays could not be broadcast "
                             f"together with shapes {shapes}") from None
        positions = [k for k, _ in adv]
        contiguous = positions == list(range(positions[0], positions[-1] + 1)) if adv \
            else True
        layout, final = [], []
        if adv and not contiguous:
            layout.append("adv")
            final += adv_shape
        for k, e in enumerate(entries):
            if e[0] == "new":
                final.append(e[1])
            elif e[0] == "slice":
                layout.append(e)
                final.append(e[4])
            elif contiguous and k == positions[0]:
                layout.append("adv")
                final += adv_shape
        batch, offset_dims, collapsed, columns = [], [], [], []
        slice_sizes = [1] * len(shape)
        for item in layout:
            out_pos = len(batch) + len(offset_dims)
            if item == "adv":
                axes = tuple(range(len(batch), len(batch) + len(adv_shape)))
                batch += adv_shape
                for _, (_, dim, value) in adv:
                    collapsed.append(dim)
                    columns.append((dim, _normalize(value, shape[dim]) if wrap_negative
                                    else value, axes[len(axes) - len(_shape_of(value)):]))
                continue
            _, dim, start, step, length = item
            if step == 1:
                offset_dims.append(out_pos)
                slice_sizes[dim] = length
                if start:
                    columns.append((dim, start, ()))
            else:
                collapsed.append(dim)
                columns.append((dim, start + step * np.arange(length), (len(batch),)))
                batch.append(length)
        self.final_shape, self.batch_shape = tuple(final), tuple(batch)
        self.gather_shape = sum((adv_shape if item == "adv" else (item[4],)
                                 for item in layout), ())
        self.empty = prod(final) == 0
        # an array index into an empty dimension scatters nothing (as XLA, and JAX); a
        # gather from it, or an integer index, is out of bounds
        scattered = {e[1] for _, e in adv if scatter and not isinstance(e[2], int)}
        for dim in collapsed:
            if shape[dim] == 0 and not self.empty and dim not in scattered:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
        self.indices = self._indices(columns)
        self.slice_sizes = tuple(slice_sizes)
        self.dnums = GatherDimensionNumbers(
            offset_dims=tuple(offset_dims), collapsed_slice_dims=tuple(sorted(collapsed)),
            start_index_map=tuple(dim for dim, _, _ in columns))
        self.scatter_dnums = ScatterDimensionNumbers(
            update_window_dims=self.dnums.offset_dims,
            inserted_window_dims=self.dnums.collapsed_slice_dims,
            scatter_dims_to_operand_dims=self.dnums.start_index_map)

    def _indices(self, columns):
        batch = self.batch_shape
        traced = [v for _, v, _ in columns if isinstance(v, Tracer)]
        wide = any(get_aval(v).dtype.itemsize == 8 for v in traced) or any(
            isinstance(v, np.ndarray) and v.dtype.itemsize == 8 and v.size and
            np.abs(v).max() > np.iinfo(np.int32).max for _, v, _ in columns)
        dtype = dtypes.canonicalize_dtype(np.int64 if wide else np.int32)
        if not traced:
            cols = [_place_host(np.asarray(v), axes, batch) for _, v, axes in columns]
            return np.stack(cols, -1).astype(dtype) if cols else np.zeros(batch + (0,), dtype)
        cols = []
        symbolic = any(is_symbolic_dim(d) for d in batch)   # (jax.export)
        for _, v, axes in columns:
            if isinstance(v, Tracer) or symbolic:   # broadcast in the program
                v = ew.convert_element_type(v, dtype)
                cols.append(st.broadcast_in_dim(v, batch + (1,), axes))
            else:
                cols.append(_place_host(np.asarray(v), axes, batch)[..., None].astype(dtype))
        return st.concatenate(cols, len(batch))


def _place_host(value, axes, batch):
    expanded = [1] * len(batch)
    for axis, size in zip(axes, value.shape):
        expanded[axis] = size
    return np.broadcast_to(value.reshape(expanded), batch)


# --- jax.ds: dynamic slices ---------------------------------------------------------------

@tree_util.register_pytree_node_class
class Slice:
    """`jax.ds(start, size, stride)`: `size` elements from `start` (static or traced),
    `stride` apart. As an index it reads like `x[start:start + size*stride:stride]`, with
    a start that may be traced; like lax.dynamic_slice, the start is clamped so the
    elements lie inside the array."""

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride=1):
        if stride < 0:
            raise ValueError("`stride` must be >= 0.")
        self.start, self.size, self.stride = start, size, stride

    def __repr__(self):
        return f"Slice(start={self.start!r}, size={self.size!r}, stride={self.stride!r})"

    def __eq__(self, other):
        return type(other) is Slice and (self.start, self.size, self.stride) == (
            other.start, other.size, other.stride)

    __hash__ = None

    def tree_flatten(self):   # a static start is aux data, a traced one a child
        static = isinstance(self.start, (int, np.integer))
        return ((None if static else self.start,),
                (self.start if static else None, self.size, self.stride))

    @classmethod
    def tree_unflatten(cls, aux, children):
        start, size, stride = aux
        return cls(children[0] if start is None else start, size, stride)

    @classmethod
    def from_slice(cls, slc: slice, size: int):
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, max(0, -(-(stop - start) // step)), step)


def ds(start, size=None, stride=None):
    """A dynamic slice index, read like the builtin slice: ds(None) is `:`, ds(j) is
    `:j`, ds(i, j) is `i:i+j` and ds(i, j, stride) is `i:i+j:stride`; i may be traced."""
    if start is None:
        return slice(None)
    stride = 1 if stride is None else stride
    if not isinstance(stride, int):
        raise ValueError("Non-static stride in `dslice`")
    if size is None:
        start, size = 0, start
    return Slice(start, operator.index(size), stride)


def _axes_taken(entry, ndim_left):
    """How many operand dimensions one index entry consumes."""
    if entry is None:
        return 0
    if entry is Ellipsis:
        return ndim_left
    if isinstance(entry, (bool, np.bool_)):
        return 0
    dtype = getattr(entry, "dtype", None)
    return np.ndim(entry) if dtype is not None and np.dtype(dtype) == np.bool_ else 1


def _split_dynamic_slices(x, idx):
    """For an index holding jax.ds Slices: the window of x they lie in (dynamic_slice
    starts and sizes, over all of x's dimensions) and idx with each Slice replaced by the
    strided slice of that window. None when idx holds no Slice."""
    items = idx if isinstance(idx, tuple) else (idx,)
    if not any(type(e) is Slice for e in items):
        return None
    shape = get_aval(x).shape
    explicit = sum(_axes_taken(e, 0) for e in items if e is not Ellipsis)
    starts, sizes, rest, axis = [0] * len(shape), list(shape), [], 0
    for e in items:
        if type(e) is Slice:
            if axis >= len(shape):
                raise IndexError(f"Too many indices: {len(shape)}-dimensional array "
                                 "indexed with more indices")
            span = 0 if e.size == 0 else (e.size - 1) * e.stride + 1
            if span > shape[axis]:
                raise IndexError(f"jax.ds: {e!r} needs {span} elements of a dimension "
                                 f"of size {shape[axis]}")
            starts[axis], sizes[axis] = e.start, span
            rest.append(slice(None, None, max(e.stride, 1)))
        else:
            rest.append(e)
        axis += _axes_taken(e, len(shape) - explicit)
    return starts, sizes, tuple(rest)


# --- x[idx] and x.at[idx].get() ---------------------------------------------------------

def getitem(x, idx):
    """x[idx] with NumPy's rules; out-of-bounds integer indices are clamped."""
    return _take(x, idx)


def _take(x, idx, **options):
    split = _split_dynamic_slices(x, idx)
    if split is None:
        return _take_static(x, idx, **options)
    starts, sizes, rest = split
    return _take_static(sl.dynamic_slice(_operand(x), starts, sizes), rest, **options)


def _take_static(x, idx, *, mode=None, fill_value=None, indices_are_sorted=False,
                 unique_indices=False, wrap_negative_indices=True):
    mode = PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    x, entries = _prepare(x, idx, config.check_static_indices.value
                          and mode is PROMISE_IN_BOUNDS, wrap_negative_indices)
    shape = x.aval.shape
    adv = [e for e in entries if e[0] == "adv"]
    if wrap_negative_indices and all(_shape_of(e[2]) == () for e in adv) and (
            mode is not FILL_OR_DROP or all(isinstance(e[2], int)
                                            and -shape[e[1]] <= e[2] < shape[e[1]]
                                            for e in adv)):
        return _basic_take(x, shape, entries, clip=mode is GatherScatterMode.CLIP)
    ix = _Indexer(shape, entries, wrap_negative_indices)
    if ix.empty:
        return _empty_result(x, ix.final_shape)
    out = li.gather(x, ix.indices, ix.dnums, ix.slice_sizes, mode=mode,
                    fill_value=fill_value, indices_are_sorted=indices_are_sorted,
                    unique_indices=unique_indices)
    return st.reshape(out, ix.final_shape)


def _basic_take(x, shape, entries, clip=False):
    """Integers and slices as slice / dynamic_slice / rev / squeeze (no gather). As in
    JAX, integers go to one dynamic_slice unless all are static and in bounds (so
    checkify sees out-of-bounds ones); with `clip`, static ones are clamped first."""
    ndim = len(shape)
    starts, limits, strides = [0] * ndim, list(shape), [1] * ndim
    reversed_dims, int_dims, dynamic, final = [], [], {}, []
    if clip:
        entries = [(e[0], e[1], min(max(_normalize(e[2], shape[e[1]]), 0), shape[e[1]] - 1))
                   if e[0] not in ("new", "slice") and isinstance(e[2], int) and shape[e[1]]
                   else e for e in entries]
    all_static = all(isinstance(e[2], int) and 0 <= _normalize(e[2], shape[e[1]]) < shape[e[1]]
                     for e in entries if e[0] not in ("new", "slice"))
    for e in entries:
        if e[0] == "new":
            final.append(e[1])
        elif e[0] == "slice":
            _, dim, start, step, length = e
            final.append(length)
            if length == 0:
                starts[dim] = limits[dim] = 0
            elif step > 0:
                starts[dim], limits[dim], strides[dim] = \
                    start, start + (length - 1) * step + 1, step
            else:
                starts[dim], limits[dim], strides[dim] = \
                    start + (length - 1) * step, start + 1, -step
                reversed_dims.append(dim)
        else:
            _, dim, value = e
            if shape[dim] == 0:
                raise IndexError(f"index is out of bounds for axis {dim} with size 0")
            int_dims.append(dim)
            if all_static:
                i = _normalize(value, shape[dim])
                starts[dim], limits[dim] = i, i + 1
            else:   # traced or out of bounds: dynamic_slice clamps (checkify sees it, as JAX)
                dynamic[dim] = _normalize(value, shape[dim])
    # (Empty slices alone slice x, keeping its type's sharding, as JAX's.)
    if prod(final) == 0 and (int_dims or reversed_dims or any(
            e[0] == "new" and not e[1] for e in entries)):
        return _empty_result(x, final)
    y = x
    if starts != [0] * ndim or limits != list(shape) or strides != [1] * ndim:
        y = sl.slice(y, starts, limits, strides)
    if dynamic:
        sizes = [1 if d in dynamic else s for d, s in enumerate(y.aval.shape)]
        y = sl.clamped_dynamic_slice(y, [dynamic.get(d, 0) for d in range(ndim)], sizes)
    if reversed_dims:
        y = st.rev(y, reversed_dims)
    y = st.squeeze(y, int_dims)
    new_dims = []
    k = 0
    for e in entries:
        if e[0] == "new":
            new_dims.append(k)
        if e[0] != "adv":
            k += 1
    return st.expand_dims(y, new_dims) if new_dims else y


# --- x.at[idx].set(...) and friends -----------------------------------------------------

def _scatter(x, idx, y, prim, **options):
    split = _split_dynamic_slices(x, idx)
    if split is None:
        return _scatter_static(x, idx, y, prim, **options)
    starts, sizes, rest = split
    x = _operand(x)
    window = _scatter_static(sl.dynamic_slice(x, starts, sizes), rest, y, prim, **options)
    return sl.dynamic_update_slice(x, window, starts)


def _scatter_static(x, idx, y, prim, *, mode=None, indices_are_sorted=False,
                    unique_indices=False, wrap_negative_indices=True, **extra):
    original = _operand(x)
    x, entries = _prepare(original, idx)
    ix = _Indexer(x.aval.shape, entries, wrap_negative_indices, scatter=True)
    y = _values(y, x.aval.dtype, ix.final_shape)
    if ix.empty:
        return original
    mode = GatherScatterMode.from_any(mode)
    updates = st.reshape(y, ix.gather_shape)
    out = prim.bind(x, ix.indices, updates, dimension_numbers=ix.scatter_dnums,
                    indices_are_sorted=bool(indices_are_sorted), mode=mode,
                    unique_indices=bool(unique_indices), **extra)
    return st.reshape(out, original.aval.shape)


def _values(y, dtype, shape):
    """Update values cast to the array's dtype and broadcast to the indexed shape."""
    if isinstance(y, (list, tuple)):
        y = lnp.asarray(y)
    refuse_masked(y)
    if dtypes.result_type(y, dtype) != dtype:
        warnings.warn(
            f"scatter inputs have incompatible types: cannot safely cast value from "
            f"dtype={np.dtype(get_aval(y).dtype).name} to dtype={np.dtype(dtype).name}. "
            "In future JAX releases this will result in an error.", FutureWarning,
            stacklevel=4)
    y = ew.convert_element_type(y, dtype) if isinstance(y, (Array, Tracer)) else \
        np.asarray(y).astype(dtype)
    y_shape = get_aval(y).shape
    try:
        np.broadcast_shapes(y_shape, shape)
        if len(y_shape) > len(shape) or np.broadcast_shapes(y_shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: the update values have "
                         f"shape {y_shape} but the indexed array has shape {shape}.") \
            from None
    return st.broadcast_to_shape(y, shape)


class _IndexUpdateHelper:
    """The object returned by `x.at`: `x.at[idx]` gives an _IndexUpdateRef."""

    __slots__ = ("array",)

    def __init__(self, array):
        self.array = array

    def __getitem__(self, index):
        return _IndexUpdateRef(self.array, index)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.array!r})"


IndexUpdateHelper = _IndexUpdateHelper


class _IndexUpdateRef:
    """`x.at[idx]`: functional versions of `x[idx] = y`, `x[idx] += y`, ... Each returns a
    new array. `mode` ("promise_in_bounds", "clip", "drop", "fill") says what out-of-bounds
    indices do; updates default to dropping them, `get` to clamping them. Negative indices
    count from the end unless wrap_negative_indices=False (then they are out of bounds)."""

    __slots__ = ("array", "index")

    def __init__(self, array, index):
        self.array, self.index = array, index

    def __repr__(self):
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None,
            fill_value=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx], with an out-of-bounds `mode` and `fill_value` for mode="fill"."""
        out = _take(self.array, self.index, mode=mode, fill_value=fill_value,
                    indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                    wrap_negative_indices=wrap_negative_indices)
        return apply_out_sharding(out, out_sharding, "x.at[].get")

    def _update(self, prim, values, indices_are_sorted, unique_indices, mode,
                wrap_negative_indices, out_sharding, **extra):
        out = _scatter(self.array, self.index, values, prim, mode=mode,
                       indices_are_sorted=indices_are_sorted,
                       unique_indices=unique_indices,
                       wrap_negative_indices=wrap_negative_indices, **extra)
        return apply_out_sharding(out, out_sharding, f"x.at[] ({prim.name})")

    def set(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] = values."""
        return self._update(li.scatter_p, values, indices_are_sorted, unique_indices, mode,
                            wrap_negative_indices, out_sharding, update_jaxpr=None)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] += values (repeated indices accumulate)."""
        return self._update(li.scatter_add_p, values, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding)

    def subtract(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] -= values (repeated indices accumulate)."""
        return self._update(li.scatter_add_p, ufuncs.negative(values), indices_are_sorted,
                            unique_indices, mode, wrap_negative_indices, out_sharding)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False,
                 mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] *= values (repeated indices accumulate)."""
        return self._update(li.scatter_mul_p, values, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] /= values (true division: integer arrays become floating)."""
        out = ufuncs.divide(self.array, self._ones_updated(values, indices_are_sorted,
                                                    unique_indices, mode,
                                                    wrap_negative_indices))
        return apply_out_sharding(out, out_sharding, "x.at[].divide")

    def power(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] **= values."""
        out = ufuncs.power(self.array, self._ones_updated(values, indices_are_sorted,
                                                   unique_indices, mode,
                                                   wrap_negative_indices))
        return apply_out_sharding(out, out_sharding, "x.at[].power")

    def _ones_updated(self, values, indices_are_sorted, unique_indices, mode,
                      wrap_negative_indices):
        x = _operand(self.array)
        ones = st.full(x.aval.shape, np.ones((), x.aval.dtype))
        return _scatter(ones, self.index, values, li.scatter_mul_p, mode=mode,
                        indices_are_sorted=indices_are_sorted, unique_indices=unique_indices,
                        wrap_negative_indices=wrap_negative_indices)

    def min(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] = minimum(x[idx], values)."""
        return self._update(li.scatter_min_p, values, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False,
            mode=None, out_sharding=None, wrap_negative_indices=True):
        """x[idx] = maximum(x[idx], values)."""
        return self._update(li.scatter_max_p, values, indices_are_sorted, unique_indices,
                            mode, wrap_negative_indices, out_sharding)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False,
            mode=None, wrap_negative_indices=True):
        """x[idx] = func(x[idx]) for a scalar function `func` (like ufunc.at)."""
        original = _operand(self.array)
        x, entries = _prepare(original, self.index)
        ix = _Indexer(x.aval.shape, entries, wrap_negative_indices)
        if ix.empty:
            return original
        out = li.scatter_apply(x, ix.indices, func, ix.scatter_dnums,
                               update_shape=ix.gather_shape,
                               indices_are_sorted=indices_are_sorted,
                               unique_indices=unique_indices, mode=mode)
        return st.reshape(out, original.aval.shape)


# --- take, take_along_axis, put_along_axis ----------------------------------------------

def _int_indices(indices, name):
    indices = _operand(indices)
    if indices.aval.dtype.kind not in "iu":
        raise TypeError(f"{name} indices must be of integer type, got {indices.aval.dtype}")
    return indices


def _take_mode(mode, name):
    if mode is None or mode == "fill":
        return FILL_OR_DROP
    if mode == "raise":
        raise NotImplementedError(f"The 'raise' mode to jnp.{name} is not supported.")
    if mode in ("clip", "promise_in_bounds") or isinstance(mode, GatherScatterMode):
        return GatherScatterMode.from_any(mode)
    if mode == "wrap":
        return "wrap"
    raise ValueError(f"Invalid mode '{mode}' for jnp.{name}; expected 'fill', 'clip', "
                     "'wrap' or 'promise_in_bounds'.")


def _wrap_or_normalize(indices, n, mode):
    """indices taken modulo n (mode "wrap", then gathered as in bounds) or with negative
    ones counted from the end, and the gather mode to use."""
    if mode != "wrap":
        return _normalize(indices, n), mode
    if n == 0:
        return indices, PROMISE_IN_BOUNDS
    n_ = np.array(n, indices.aval.dtype)
    r = ew.rem(indices, n_)
    return (ew.select(ew.lt(r, np.zeros((), r.aval.dtype)), ew.add(r, n_), r)
            if r.aval.dtype.kind == "i" else r), PROMISE_IN_BOUNDS


def _take_without_gather(out_shape, n, dtype):
    """The result of a take that gathers nothing (an empty result), else None; taking
    from an empty axis is an IndexError in every mode, as in JAX."""
    if prod(out_shape) == 0:
        return st.full(out_shape, np.zeros((), dtype))
    if n == 0:
        raise IndexError("Cannot do a non-empty jnp.take() from an empty axis.")
    return None


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False,
         indices_are_sorted=False, fill_value=None):
    """Elements of `a` at `indices` along `axis` (of the flattened array if None).
    mode: "fill" (default: out-of-bounds indices give fill_value, NaN for floats),
    "clip", "wrap" or "promise_in_bounds"."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.take is not supported.")
    keys_dtype = extended_dtype(a)
    if keys_dtype is not None:   # typed keys: taken from their data (its dims last)
        if axis is None:
            a, axis = a.ravel(), 0
        axis = canonicalize_axis(axis, a.ndim)
        return keys_dtype.from_physical(take(
            keys_dtype.to_physical(a), indices, axis, mode=mode,
            unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
            fill_value=fill_value))
    a = _operand(a)
    indices = _int_indices(indices, "take")
    if axis is None:
        a, axis = st.reshape(a, (a.aval.size,)), 0
    axis = canonicalize_axis(axis, a.aval.ndim)
    gmode = _take_mode(mode, "take")
    n = a.aval.shape[axis]
    idx_shape = indices.aval.shape
    out_shape = a.aval.shape[:axis] + idx_shape + a.aval.shape[axis + 1:]
    empty = _take_without_gather(out_shape, n, a.aval.dtype)
    if empty is not None:
        return empty
    if mode != "clip":   # as in NumPy and JAX, "clip" clamps a negative index to 0
        indices, gmode = _wrap_or_normalize(indices, n, gmode)
    k = len(idx_shape)
    dnums = GatherDimensionNumbers(
        offset_dims=tuple(range(axis)) + tuple(range(axis + k, a.aval.ndim - 1 + k)),
        collapsed_slice_dims=(axis,), start_index_map=(axis,))
    slice_sizes = a.aval.shape[:axis] + (1,) + a.aval.shape[axis + 1:]
    return li.gather(a, st.expand_dims(indices, (k,)), dnums, slice_sizes, mode=gmode,
                     fill_value=fill_value, unique_indices=unique_indices,
                     indices_are_sorted=indices_are_sorted)


def _along_axis(name, arr, indices, axis):
    arr, indices = _operand(arr), _int_indices(indices, name)
    if axis is None:
        if indices.aval.ndim != 1:
            raise ValueError(f"jnp.{name}: when axis=None, indices must be 1-D, got shape "
                             f"{indices.aval.shape}")
        arr, axis = st.reshape(arr, (arr.aval.size,)), 0
    if arr.aval.ndim != indices.aval.ndim:
        raise ValueError(f"jnp.{name}: indices and arr must have the same number of "
                         f"dimensions; {indices.aval.ndim} vs. {arr.aval.ndim}")
    return arr, indices, canonicalize_axis(axis, arr.aval.ndim)


def _batched_dnums(ndim, axis):
    others = tuple(d for d in range(ndim) if d != axis)
    return dict(collapsed=(axis,), index_map=(axis,), batching=others)


def _index_dtype_for(n):
    """The signed int dtype that holds every index (and negative index + n) of an axis of
    size n."""
    return np.dtype(np.int32) if n <= np.iinfo(np.int32).max else np.dtype(np.int64)


# jitted as in JAX (its jaxpr holds one `jit` equation named take_along_axis)
@functools.partial(jit, static_argnames=("axis", "mode", "fill_value",
                                         "wrap_negative_indices"))
def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *,
                    wrap_negative_indices=None):
    """out[..., j, ...] = arr[..., indices[..., j, ...], ...] along `axis`; other
    dimensions broadcast. mode as in jnp.take (default "fill"), or "one_hot" (a one-hot
    matrix product instead of a gather). Negative indices count from the end unless
    wrap_negative_indices=False (by default they do, except with "promise_in_bounds")."""
    check_arraylike("take_along_axis", arr, indices)
    arr, indices, axis = _along_axis("take_along_axis", arr, indices, axis)
    if mode == "wrap":
        raise ValueError('Unknown gather mode "wrap" for jnp.take_along_axis; expected '
                         "'fill', 'clip', 'promise_in_bounds' or 'one_hot'.")
    gmode = mode if mode == "one_hot" else _take_mode(mode, "take_along_axis")
    a_shape, i_shape = arr.aval.shape, indices.aval.shape
    try:
        common = [d if k == axis else np.broadcast_shapes((d,), (i,))[0]
                  for k, (d, i) in enumerate(zip(a_shape, i_shape))]
    except ValueError:
        raise ValueError(f"jnp.take_along_axis: arr shape {a_shape} and indices shape "
                         f"{i_shape} do not broadcast outside axis {axis}") from None
    i_common = list(common)
    i_common[axis] = i_shape[axis]
    n = common[axis]
    if n == 0 or prod(i_common) == 0:   # nothing to gather: zeros, as in JAX
        return st.full(tuple(i_common), np.zeros((), arr.aval.dtype))
    if wrap_negative_indices is None:
        wrap_negative_indices = mode != "promise_in_bounds"
    if wrap_negative_indices:   # in a dtype wide enough for index + n
        indices = _normalize(ew.convert_element_type(indices, _index_dtype_for(n)), n)
    if gmode == "one_hot":
        return _take_along_axis_one_hot(arr, indices, axis)
    arr = st.broadcast_to_shape(arr, tuple(common))
    indices = st.broadcast_to_shape(indices, tuple(i_common))
    d = _batched_dnums(len(common), axis)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=d["collapsed"],
                                   start_index_map=d["index_map"],
                                   operand_batching_dims=d["batching"],
                                   start_indices_batching_dims=d["batching"])
    return li.gather(arr, st.expand_dims(indices, (len(common),)), dnums,
                     (1,) * len(common), mode=gmode, fill_value=fill_value)


def _take_along_axis_one_hot(arr, indices, axis):
    """take_along_axis as a product with a one-hot matrix (indices[..., None] == iota)
    summed over arr's axis: an out-of-bounds index selects nothing and gives 0."""
    n = arr.aval.shape[axis]
    i_ndim = indices.aval.ndim
    hot = ew.eq(st.expand_dims(indices, (i_ndim,)),
                st.broadcasted_iota(indices.aval.dtype, indices.aval.shape + (n,), i_ndim))
    # arr's axis moves last and a size-1 axis takes its place, facing indices' axis
    moved = st.expand_dims(lnp.moveaxis(arr, axis, -1), (axis,))
    return red.reduce_sum(ew.mul(*_broadcast_same(ew.convert_element_type(
        hot, arr.aval.dtype), moved)), (i_ndim,))


def _broadcast_same(*xs):
    shape = tuple(np.broadcast_shapes(*(x.aval.shape for x in xs)))
    return [st.broadcast_to_shape(x, shape) for x in xs]


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """A copy of `arr` with `values` written at `indices` along `axis` (the functional
    numpy.put_along_axis; pass inplace=False). Out-of-bounds indices are dropped."""
    if inplace:
        raise ValueError("jax.numpy.put_along_axis cannot modify arrays in-place, because "
                         "JAX arrays are immutable. Pass inplace=False to instead return an "
                         "updated array.")
    arr, indices, values = ensure_arraylike("put_along_axis", arr, indices, values)
    original = _operand(arr)
    arr, indices, axis = _along_axis("put_along_axis", original, indices, axis)
    shape = arr.aval.shape
    i_shape = list(shape)
    i_shape[axis] = indices.aval.shape[axis]
    try:
        indices = st.broadcast_to_shape(indices, tuple(i_shape))
    except ValueError:
        raise ValueError(f"jnp.put_along_axis: indices shape {indices.aval.shape} does not "
                         f"broadcast to {tuple(i_shape)}") from None
    values = _values(values, arr.aval.dtype, tuple(i_shape))
    if prod(i_shape) == 0:
        return original
    indices = _normalize(indices, shape[axis])
    d = _batched_dnums(len(shape), axis)
    dnums = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=d["collapsed"],
                                    scatter_dims_to_operand_dims=d["index_map"],
                                    operand_batching_dims=d["batching"],
                                    scatter_indices_batching_dims=d["batching"])
    out = li.scatter(arr, st.expand_dims(indices, (len(shape),)), values, dnums, mode=mode)
    return st.reshape(out, original.aval.shape)


# --- nonzero, argwhere, flatnonzero -----------------------------------------------------

def _concrete_or_error(a, name):
    if isinstance(a, Array):
        return a._value
    value = a.to_concrete_value()
    if value is None:
        raise errors.ConcretizationTypeError(
            a, f"The error arose in jnp.{name}: the size of its result depends on the "
               f"values of its input. Pass a static `size=` argument (and optionally "
               f"`fill_value=`) to use jnp.{name} inside jit and other transformations.\n")
    return np.asarray(value)


def _nonzero(a, size, fill_value, name):
    a = _operand(a)
    shape = a.aval.shape
    if not shape:
        raise ValueError(f"Calling {name} on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    int_dtype = dtypes.default_int_dtype()
    if size is None:
        found = np.nonzero(_concrete_or_error(a, name))
        return tuple(Array(f.astype(int_dtype)) for f in found)
    size = operator.index(size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else \
        (0 if fill_value is None else fill_value,) * len(shape)
    if len(fills) != len(shape):
        raise ValueError(f"jnp.{name}: fill_value must be a scalar or a tuple of length "
                         f"{len(shape)}, got {fill_value}")
    n = prod(shape)
    flat = st.reshape(a, (n,))
    mask = flat if a.aval.dtype == np.bool_ else ew.ne(flat, np.zeros((), a.aval.dtype))
    count = ew.convert_element_type(mask, int_dtype)
    slot = ew.sub(red.cumsum(count, 0), np.ones((), int_dtype)) if n else count
    slot = ew.select(mask, slot, st.full((n,), np.array(size, int_dtype)))
    dnums = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                    scatter_dims_to_operand_dims=(0,))
    positions = li.scatter(st.full((size,), np.array(-1, int_dtype)),
                           st.expand_dims(slot, (1,)), st.iota(int_dtype, n), dnums,
                           mode="drop", indices_are_sorted=True)
    found = ew.ge(positions, np.zeros((), int_dtype))
    out = []
    for d, fill in enumerate(fills):
        stride = np.array(prod(shape[d + 1:]), int_dtype)
        coord = ew.rem(ew.div(positions, stride), np.array(shape[d], int_dtype))
        out.append(ew.select(found, coord, st.full((size,), _fill_scalar(fill, int_dtype))))
    return tuple(out)


def _fill_scalar(fill, dtype):
    if isinstance(fill, Tracer):
        return ew.convert_element_type(fill, dtype)
    return np.array(fill if not isinstance(fill, Array) else fill._value).astype(dtype)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """jnp.where: elementwise x if condition else y; with only condition, the indices of
    its nonzeros (as nonzero)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be "
                         "provided to jax.numpy.where")
    return lnp.where(condition, x, y)


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements, one array per dimension. Under jit, pass a static
    `size` (results are truncated or padded with `fill_value`, default 0)."""
    return _nonzero(a, size, fill_value, "nonzero")


def argwhere(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements as a (count, ndim) array; `size` as in nonzero."""
    a = _operand(a)
    if a.aval.ndim == 0:
        found = _nonzero(st.reshape(a, (1,)), size, fill_value, "argwhere")[0]
        return st.full((found.aval.shape[0], 0), np.zeros((), found.aval.dtype))
    found = _nonzero(a, size, fill_value, "argwhere")
    return st.concatenate([st.expand_dims(f, (1,)) for f in found], 1)


def flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero elements of the flattened array; `size` as in nonzero."""
    a = _operand(a)
    return _nonzero(st.reshape(a, (a.aval.size,)), size, fill_value, "flatnonzero")[0]
