"""jax.experimental.buffer_callback: a host callback that writes its results in place.
The callback gets an ExecutionContext, the output Buffers (the structure of
`result_shape_dtypes`) and the input Buffers (the structure of the call's arguments), and
fills the outputs. A Buffer is a host array view: read-only for inputs, writable for
outputs, with NumPy's `__array__` and DLPack. An output aliased to an input
(`input_output_aliases`) starts as that input's values, and the input's Buffer views the
same memory. Runs on the host like pure_callback (`callbacks.lower_host_call` under
XLA). Imports core, interpreters and the lax families."""
from __future__ import annotations

import enum
import traceback

import numpy as np

from pyjax._src import tree_util
from pyjax._src.core.avals import ShapedArray, get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.errors import JaxRuntimeError
from pyjax._src.lax import builders as b
from pyjax._src.lax import callbacks


class ExecutionStage(enum.Enum):
    """The stage of an XLA FFI call at which a callback runs (buffer callbacks run at
    EXECUTE)."""
    INSTANTIATE = 0
    PREPARE = 1
    INITIALIZE = 2
    EXECUTE = 3


ExecutionStage.__module__ = "jax.experimental.buffer_callback"


class ExecutionContext:
    """What a buffer callback learns of the call: its stage, and on GPU the stream."""

    __slots__ = ()
    __module__ = "jax.experimental.buffer_callback"

    def __init__(self):
        raise TypeError("jax.experimental.buffer_callback.ExecutionContext: no "
                        "constructor defined (buffer_callback makes it)")

    @property
    def stage(self):
        return ExecutionStage.EXECUTE

    @property
    def stream(self):
        raise JaxRuntimeError("UNIMPLEMENTED: XLA FFI GPU context is not available")


class Buffer:
    """One argument or result of a buffer callback: an array on the host that the
    callback reads (`writeable` False) or fills in place (`writeable` True)."""

    __slots__ = ("_array",)
    __module__ = "jax.experimental.buffer_callback"

    def __init__(self):
        raise TypeError("jax.experimental.buffer_callback.Buffer: no constructor defined "
                        "(buffer_callback makes it)")

    @property
    def shape(self):
        return self._array.shape

    @property
    def dtype(self):
        return self._array.dtype

    @property
    def ndim(self):
        return self._array.ndim

    @property
    def writeable(self):
        return bool(self._array.flags.writeable)

    def __array__(self, dtype=None, copy=None):
        if dtype is not None:
            raise ValueError("dtype parameter is not supported by Buffer.__array__.")
        if copy:
            raise ValueError("Buffer.__array__ with copy=True is not supported.")
        return self._array

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._array.__dlpack_device__()

    @property
    def __cuda_array_interface__(self):
        raise JaxRuntimeError("UNIMPLEMENTED: Buffer.__cuda_array_interface__ is only "
                              "supported on CUDA and ROCm.")


def _buffer(array, writeable):
    buf = object.__new__(Buffer)
    view = array.view()
    view.flags.writeable = writeable
    buf._array = view
    return buf


class _BufferCall:
    """The callback on numpy values: makes the output arrays (an aliased one a copy of
    its input, which the input's Buffer then views), calls the user's function with
    Buffers, and gives the outputs."""

    def __init__(self, callback, in_tree, out_tree, result_avals, input_output_aliases):
        self.callback, self.in_tree, self.out_tree = callback, in_tree, out_tree
        self.result_avals, self.aliases = result_avals, dict(input_output_aliases)

    def __call__(self, *values):
        values = [np.asarray(v) for v in values]
        outs = [np.zeros(a.shape, a.dtype) for a in self.result_avals]
        for i, o in self.aliases.items():
            outs[o] = np.array(values[i], dtype=self.result_avals[o].dtype)
            values[i] = outs[o]
        args, kwargs = tree_util.tree_unflatten(
            self.in_tree, [_buffer(v, False) for v in values])
        out = tree_util.tree_unflatten(self.out_tree, [_buffer(o, True) for o in outs])
        ctx = object.__new__(ExecutionContext)
        if self.callback(ctx, out, *args, **kwargs) is not None:
            raise ValueError("buffer_callback callback must not return any values.")
        return outs


class BufferCallbackEffect(callbacks.Effect):
    name = "BufferCallback"


buffer_callback_effect = BufferCallbackEffect()


def _call(params):
    return _BufferCall(params["callback"], params["in_tree"], params["out_tree"],
                       params["result_avals"], params["input_output_aliases"])


def _impl(*args, **params):
    """As JAX's (which runs the callback in an XLA program even eagerly), a failure is a
    JaxRuntimeError holding the callback's traceback."""
    try:
        return _call(params)(*args)
    except Exception:
        raise JaxRuntimeError("INTERNAL: Error when calling buffer callback: "
                              + traceback.format_exc().rstrip()) from None


def _abstract_eval(*avals, result_avals, **params):
    return list(result_avals)


def _effects(*, has_side_effect, **params):
    return frozenset({buffer_callback_effect}) if has_side_effect else frozenset()


def _jvp(primals, tangents, **params):
    raise ValueError("Buffer callbacks do not support JVP. Please use `jax.custom_jvp` to "
                     "use callbacks while taking gradients.")


def _transpose(cts, *args, **params):
    raise ValueError("Buffer callbacks do not support transpose. Please use "
                     "`jax.custom_vjp` to use callbacks while taking gradients.")


def _batch(args, dims, **params):
    return callbacks.batch_by_vmap_method(buffer_callback_p, args, dims, params)


def _lower(ctx, *args, **params):
    return callbacks.lower_host_call(ctx, args, callbacks.HostImpl(_call(params)),
                                     params["result_avals"], "buffer_callback",
                                     params["has_side_effect"])


def _add_in_place(ctx, out, x, y):
    np.add(np.asarray(x), np.asarray(y), out=np.asarray(out))


def _samples():
    x, y = b.random_values((2, 3), np.float32), b.random_values((2, 3), np.float32, seed=1)
    aval = ShapedArray((2, 3), np.dtype(np.float32))
    params = {"callback": _add_in_place, "result_avals": (aval,),
              "in_tree": tree_util.tree_structure(((0, 0), {})),
              "out_tree": tree_util.tree_structure(0), "vmap_method": "sequential",
              "has_side_effect": False, "input_output_aliases": (),
              "command_buffer_compatible": False}
    return [b.Sample([x, y], params),
            b.Sample([x, y], dict(params, vmap_method="broadcast_all", has_side_effect=True,
                                  input_output_aliases=((0, 0),)))]


buffer_callback_p = define_primitive(
    "buffer_callback", multiple_results=True, impl=_impl, abstract_eval=_abstract_eval,
    effects=_effects, jvp=_jvp, transpose=_transpose, batch=_batch, lower=_lower,
    samples=_samples)


def buffer_callback(callback, result_shape_dtypes, *, has_side_effect=False,
                    vmap_method=None, input_output_aliases=None,
                    command_buffer_compatible=False):
    """A function that calls `callback(ctx, out, *args, **kwargs)` on the host, where
    `out` is the pytree of writable Buffers of `result_shape_dtypes` the callback fills in
    place and `args`/`kwargs` are the call's arguments as read-only Buffers; the callback
    returns None. `input_output_aliases` maps a flat input's index to the flat output it
    aliases (the output starts with its values); `vmap_method` is as for
    jax.pure_callback; `command_buffer_compatible` concerns GPU command buffers only."""
    result_avals, out_tree = callbacks.shape_dtype_avals(result_shape_dtypes, "buffer_callback")

    def wrapped_callback(*args, **kwargs):
        flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            if i >= len(args):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"input index {i} outside the range [0, {len(args)}).")
            if o >= len(result_avals):
                raise ValueError(f"input_output_aliases contains the mapping '{i}:{o}' with "
                                 f"output index {o} outside the range "
                                 f"[0, {len(result_avals)}).")
            in_aval, out_aval = get_aval(flat_args[i]), result_avals[o]
            if (in_aval.shape, in_aval.dtype) != (out_aval.shape, out_aval.dtype):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' referring to an "
                    f"input with abstract value {in_aval} and an output with a different "
                    f"abstract value {out_aval}.")
            aliases.append((i, o))
        outs = buffer_callback_p.bind(
            *flat_args, callback=callback, result_avals=result_avals, in_tree=in_tree,
            out_tree=out_tree, vmap_method=vmap_method,
            has_side_effect=bool(has_side_effect), input_output_aliases=tuple(aliases),
            command_buffer_compatible=bool(command_buffer_compatible))
        return tree_util.tree_unflatten(out_tree, outs)

    return wrapped_callback


__all__ = ["Buffer", "ExecutionContext", "ExecutionStage", "buffer_callback",
           "buffer_callback_p"]
