"""jax.experimental.hijax (JAX's high-level types: mutable and structured values that
primitives carry through transformations) is not implemented by pyjax. Its names exist so
that libraries which define hijax types and primitives at import time (flax.nnx) import;
their hijax mode stays off by default, and turning it on reaches `HiPrimitive.bind`,
which raises NotImplementedError saying so. The rest are pyjax's own objects."""
from __future__ import annotations

from pyjax._src.extend.primitives import Primitive
from pyjax._src.extend.trace_state import Effect
from pyjax._src.interpreters.ad import (  # noqa: F401  (re-exported for hijax users)
    Zero, instantiate_zeros, is_undefined_primal,
)

_UNSUPPORTED = ("pyjax does not implement jax.experimental.hijax (high-level types); run "
                "the library with its hijax mode off (flax: flax_hijax_variable=False, "
                "the default)")


class AbstractValue:
    """Base class of abstract values a hijax type defines."""


class HiType(AbstractValue):
    """An immutable high-level type."""


class MutableHiType(AbstractValue):
    """A mutable high-level type."""


class AvalQDD:
    """A hijax aval with its quasi-dynamic data."""

    def __init__(self, aval, qdd):
        self.aval, self.qdd = aval, qdd


class AvalMutableQDD:
    """A hijax aval with its mutable quasi-dynamic data."""

    def __init__(self, aval, mutable_qdd):
        self.aval, self.mutable_qdd = aval, mutable_qdd


class HiPrimitive(Primitive):
    """A primitive over hijax types: subclasses define abstract_eval, to_lojax, jvp and
    transpose. pyjax cannot stage or run it."""

    def __init__(self, name):
        super().__init__(name)
        self.multiple_results = False

    def bind(self, *args, **params):
        raise NotImplementedError(f"{self.name}: {_UNSUPPORTED}.")


class aval_method:
    """A method of a hijax type's values, defined on its aval class."""

    def __init__(self, fun):
        self.fun = fun

    def __get__(self, obj, owner=None):
        return self.fun if obj is None else self.fun.__get__(obj, owner)


class aval_property(property):
    """A property of a hijax type's values, defined on its aval class."""


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


def register_hitype(val_cls, typeof_fn):
    """Declares a Python class a hijax type. pyjax has no hijax types, so there is nothing
    to register: its values stay ordinary Python objects, and the primitives that would
    operate on them (HiPrimitive.bind) raise."""
    del val_cls, typeof_fn
