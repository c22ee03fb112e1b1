"""The call signatures of a primitive's rules, one Protocol per rule kind (what
define_primitive's slots hold). `params` are the primitive's hashable parameters."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from pyjax._src.core.avals import ShapedArray


class ImplRule(Protocol):
    """Runs the primitive on NumPy values: one value, or a list with multiple_results."""

    def __call__(self, *values: Any, **params: Any) -> Any: ...


class AbstractEvalRule(Protocol):
    """Checks the operands' avals and gives the result's (a list with multiple_results)."""

    def __call__(self, *avals: ShapedArray,
                 **params: Any) -> ShapedArray | Sequence[ShapedArray]: ...


class JvpRule(Protocol):
    """(primal out, tangent out) from primals and tangents (ad.Zero where none)."""

    def __call__(self, primals: Sequence[Any], tangents: Sequence[Any],
                 **params: Any) -> tuple[Any, Any]: ...


class TransposeRule(Protocol):
    """Cotangents of the operands (None for non-linear ones) from the output's; linear
    operands arrive as ad.UndefinedPrimal."""

    def __call__(self, cts: Any, *args: Any, **params: Any) -> Sequence[Any]: ...


class BatchRule(Protocol):
    """(out, out batch dim) from values and their batch dims (None: not batched)."""

    def __call__(self, args: Sequence[Any], dims: Sequence[int | None],
                 **params: Any) -> tuple[Any, Any]: ...


class AxisBatchRule(Protocol):
    """A batch rule of a primitive defined with batch_needs_axis=True: also given the
    vmap's batching.AxisData (name, size)."""

    def __call__(self, axis: Any, args: Sequence[Any], dims: Sequence[int | None],
                 **params: Any) -> tuple[Any, Any]: ...


class LowerRule(Protocol):
    """Emits the primitive's StableHLO into `ctx` (a stablehlo lowering context) and
    returns the result value(s)."""

    def __call__(self, ctx: Any, *operands: Any, **params: Any) -> Any: ...
