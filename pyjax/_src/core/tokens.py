"""XLA tokens: the values that order side effects in a program and carry no data.
AbstractToken is their aval (printed `Tok` in jaxprs, `!stablehlo.token` in StableHLO);
Token is the value lax.create_token and lax.after_all return. Imports only avals."""
from __future__ import annotations

from pyjax._src.core.avals import AbstractValue


class AbstractToken(AbstractValue):
    """The aval of every token: tokens have no shape, dtype or contents."""

    __slots__ = ()
    _instance: AbstractToken | None = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = object.__new__(cls)
        return cls._instance

    def __reduce__(self):
        return AbstractToken, ()

    weak_type = False

    def same_type(self, other):
        return type(other) is AbstractToken

    def strip_weak_type(self):
        return self

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return "Tok"

    def __repr__(self):
        return "AbstractToken()"


abstract_token = AbstractToken()


class Token:
    """A token value (what lax.create_token returns): it orders effects and holds nothing,
    so every token is as good as another."""

    __slots__ = ()
    aval = abstract_token

    def block_until_ready(self):
        return self
