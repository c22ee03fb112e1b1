"""jax.experimental.hijax's objects (JAX's high-level types): the types and primitives
live in the core (core/hijax.py); the autodiff helpers hijax rules use come from
interpreters/ad.py, the effect set control flow admits from extend/trace_state.py."""
from __future__ import annotations

from pyjax._src.core.avals import AbstractValue  # noqa: F401
from pyjax._src.core.hijax import (  # noqa: F401
    AvalMutableQDD, AvalQDD, HiPrimitive, HiType, MutableHiType, aval_method,
    aval_property, cur_qdd, register_hitype,
)
from pyjax._src.extend.trace_state import Effect
from pyjax._src.interpreters.ad import (  # noqa: F401  (re-exported for hijax users)
    Zero, instantiate_zeros, is_undefined_primal,
)


class _EffectTypeSet:
    """The effect types that control flow (cond, scan, while) lets through."""

    def __init__(self):
        self._types = set()

    def add_type(self, effect_type):
        if not (isinstance(effect_type, type) and issubclass(effect_type, Effect)):
            raise TypeError(f"add_type: expected a subclass of Effect, got {effect_type!r}")
        self._types.add(effect_type)

    def contains(self, effect):
        return isinstance(effect, tuple(self._types))


control_flow_allowed_effects = _EffectTypeSet()
