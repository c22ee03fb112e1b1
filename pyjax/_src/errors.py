"""The exceptions a user can meet (level 0). Messages say what happened, where the value
came from (tracers describe their own origin), and what to do. Imports only NumPy."""
from __future__ import annotations

import numpy as np

_ERRORS_PAGE = "https://docs.jax.dev/en/latest/errors.html"


def origin_of(tracer) -> str:
    """Where a traced value came from, as its tracer tells it ('' for other values)."""
    describe = getattr(tracer, "_origin_description", None)
    return describe() if describe else ""



class _JAXErrorMixin:
    """JAX's own errors end their message with the page that explains them, as JAX's do:
    "See https://docs.jax.dev/en/latest/errors.html#jax.errors.<the class's name>"."""

    def __init__(self, message: str):
        super().__init__(  # type: ignore[call-arg]
            f"{message}\nSee {_ERRORS_PAGE}#jax.errors.{type(self).__name__}")


class JAXTypeError(_JAXErrorMixin, TypeError):
    pass


class AxisError(np.exceptions.AxisError):
    """An axis argument out of bounds for the array's rank. Like NumPy's AxisError it is
    both a ValueError (what most JAX functions raise) and an IndexError (what jnp.mean,
    argmax, split and swapaxes raise in JAX), so code catching either class works."""


class JAXIndexError(_JAXErrorMixin, IndexError):
    pass


class ShardingTypeError(Exception):
    """Operands whose shardings in their types (over a mesh's Explicit axes) do not
    determine the result's: say it with the operation's out_sharding argument, or
    jax.reshard an operand first."""


def traced_array(tracer) -> str:
    """A traced value as JAX's errors name it: 'traced array with shape float32[3]' (a
    tracer of no type, which a Tracer subclass may build, as itself)."""
    aval = getattr(tracer, "aval", None)
    if aval is None:
        return str(tracer)
    return (f"traced array with shape {aval.dtype.name}"
            f"[{','.join(map(str, aval.shape))}]")


_STATIC_ADVICE = (
    "If the value depends only on static information, mark that argument static with "
    "`static_argnums`/`static_argnames` on `jit`; if it is data, use a structured control "
    "flow primitive (`lax.cond`, `lax.while_loop`, `jnp.where`) or compute it with `jnp` "
    "instead of `np`.")


class ConcretizationTypeError(JAXTypeError):
    """A concrete Python value was needed from an abstract (traced) array."""

    def __init__(self, tracer, context="", head=None):
        """`head`: the first line, JAX's 'Abstract tracer value encountered ...' when
        not given."""
        self.tracer = tracer
        if head is None:
            head = ("Abstract tracer value encountered where concrete value is expected: "
                    f"{traced_array(tracer)}")
        super().__init__(f"{head}\n{context}{origin_of(tracer)}\n{_STATIC_ADVICE}")


class TracerBoolConversionError(ConcretizationTypeError):
    """`bool()` (an `if`, `while`, `and`, `or`, `not`) of a traced array."""

    def __init__(self, tracer):
        super().__init__(
            tracer,
            "The problem arose with the `bool` function: Python control flow such as "
            "`if x > 0:` needs a concrete value, but this traced value is only known when "
            "the transformed computation runs. Use `lax.cond` or `jnp.where` for "
            "data-dependent branches (`lax.while_loop`/`lax.fori_loop` for loops), or make "
            "the argument static.\n",
            head=f"Attempted boolean conversion of {traced_array(tracer)}.")


class TracerIntegerConversionError(JAXTypeError):
    """`int()`/`__index__` of a traced array (e.g. as a shape or a Python index)."""

    def __init__(self, tracer):
        self.tracer = tracer
        super().__init__(
            f"The __index__() method was called on traced array {tracer}.\n"
            f"{origin_of(tracer)}\nShapes and Python indices must be concrete. Compute them "
            "from static information (e.g. `np.prod(x.shape)`, not `jnp.array(x.shape).prod()`), "
            "or mark the argument static with `static_argnums`. For a loop over a traced "
            "count (`for i in range(n)`), use `lax.fori_loop`.")


class TracerArrayConversionError(JAXTypeError):
    """`np.asarray` (or any NumPy function) applied to a traced array."""

    def __init__(self, tracer):
        self.tracer = tracer
        super().__init__(
            f"The numpy.ndarray conversion method __array__() was called on {tracer}.\n"
            f"{origin_of(tracer)}\nNumPy cannot work on traced values: use `jax.numpy` "
            "(`jnp`) instead of `np` inside transformed functions, `jax.debug.print` to see "
            "a value, or `jax.pure_callback` to run NumPy code at run time.")


class NonConcreteBooleanIndexError(JAXIndexError):
    """Boolean-mask indexing of a traced array: the result shape would depend on data."""

    def __init__(self, tracer):
        self.tracer = tracer
        aval = getattr(tracer, "aval", None)   # named by its type, as JAX does
        super().__init__(
            "Array boolean indices must be concrete; got "
            f"{tracer if aval is None else aval.str_short()}\n{origin_of(tracer)}\n"
            "The size of `x[mask]` "
            "depends on the values in `mask`, which are not known while tracing. Use "
            "`jnp.where(mask, x, fill)` to keep the shape, or `jnp.nonzero(mask, size=n)` "
            "with a static size.")


class UnexpectedTracerError(JAXTypeError):
    """A tracer was used outside the transformation that created it (a leak)."""

    def __init__(self, message, escaped=True):
        """escaped=False: a tracer passed where none may go, rather than one that leaked."""
        if escaped:
            message = str(message) + (
                "\nThis tracer escaped its transformation: JAX transformations require "
                "that functions explicitly return their outputs, and disallow saving "
                "intermediate values to global state (a global, a closure or an object "
                "attribute set during tracing). Return the value instead. "
                "`jax.checking_leaks()` finds where it leaked.")
        super().__init__(message)


class KeyReuseError(JAXTypeError):
    pass


class JaxRuntimeError(RuntimeError):
    """A failure reported by the runtime (XLA compile or execute)."""


class InvalidDonatedBufferError(RuntimeError):
    """An array was used after it was donated to a jitted function."""


# x[idx] = y on an Array or a tracer, in JAX 0.10.2's words
IMMUTABLE_ARRAY_MESSAGE = (
    "JAX arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")


class InconclusiveDimensionOperation(Exception):
    """A computation with symbolic dimensions whose result the dimension variables'
    bounds and the scope's constraints do not decide (JAX's)."""

    _HELP = """
This error arises for comparison operations with shapes that
are non-constant, and the result of the operation cannot be represented as
a boolean value for all values of the symbolic dimensions involved.

Please see https://docs.jax.dev/en/latest/export/shape_poly.html#comparison-of-symbolic-dimensions-is-partially-supported
for more details.
"""

    def __init__(self, message: str):
        super().__init__(f"{message}{self._HELP}")
