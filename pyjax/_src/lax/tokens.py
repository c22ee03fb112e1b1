"""create_token and after_all, the primitives that make and join XLA tokens (values that
order side effects and hold no data; see core/tokens.py), and psend/precv, the
point-to-point transfers tokens order, with all their rules. Imports core and
interpreters."""
from __future__ import annotations

import operator

from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.tokens import AbstractToken, Token, abstract_token
from pyjax._src.core.trace import (NO_BATCHING, NO_TRANSPOSE, NOT_DIFFERENTIABLE,
                                   define_primitive, no_samples)
from pyjax._src.interpreters import batching
from pyjax._src.lax import parallel

_NOT_ARRAYS = no_samples("tokens are not arrays: the harness compares array values; "
                         "tests/lax/test_tokens.py covers them")


def _lower_token_op(name):
    def lower(ctx, *tokens):
        return ctx.op(name, list(tokens), abstract_token)
    return lower


create_token_p = define_primitive(
    "create_token", impl=Token, abstract_eval=lambda: abstract_token,
    eager=Token, jvp=NOT_DIFFERENTIABLE, transpose=NO_TRANSPOSE, batch=NO_BATCHING,
    lower=_lower_token_op("stablehlo.create_token"), samples=_NOT_ARRAYS)


def _after_all_abstract_eval(*avals):
    if any(type(a) is not AbstractToken for a in avals):
        raise TypeError("Arguments to after_all must be tokens")
    return abstract_token


def _after_all_eager(*tokens):
    _after_all_abstract_eval(*(getattr(t, "aval", None) for t in tokens))
    return Token()


after_all_p = define_primitive(
    "after_all", impl=lambda *tokens: Token(), abstract_eval=_after_all_abstract_eval,
    eager=_after_all_eager, jvp=NOT_DIFFERENTIABLE, transpose=NO_TRANSPOSE,
    batch=NO_BATCHING, lower=_lower_token_op("stablehlo.after_all"), samples=_NOT_ARRAYS)


def create_token(_=None):
    """A new token, with nothing to wait for (the argument is ignored, as in JAX)."""
    return create_token_p.bind()


def after_all(*operands):
    """A token that comes after every token in `operands` (which must all be tokens)."""
    return after_all_p.bind(*operands)


# --- psend / precv: point-to-point transfers inside shard_map, ordered by tokens ----------

def _gpu_only(name):
    def lower(ctx, *args, **params):
        raise NotImplementedError(f"{name} is currently only implemented on GPU")
    return lower


def _unbound(*args, axis_name, **params):
    raise batching.unbound_axis_error(axis_name)


def _psend_abstract_eval(x, *, axis_name, perm):
    return abstract_token


def _precv_abstract_eval(token, *, out_shape, axis_name, perm):
    if type(token) is not AbstractToken:
        raise TypeError(f"precv takes a token (from psend) first, got {token.str_short(True)}")
    return ShapedArray(out_shape.shape, out_shape.dtype)


_COLLECTIVE = no_samples("a collective runs only under shard_map binding its axis")

psend_p = define_primitive(
    "psend", impl=_unbound, abstract_eval=_psend_abstract_eval, jvp=NOT_DIFFERENTIABLE,
    transpose=NO_TRANSPOSE, batch=NO_BATCHING, lower=_gpu_only("psend"),
    samples=_COLLECTIVE, is_collective=True)

precv_p = define_primitive(
    "precv", impl=_unbound, abstract_eval=_precv_abstract_eval, jvp=NOT_DIFFERENTIABLE,
    transpose=NO_TRANSPOSE, batch=NO_BATCHING, lower=_gpu_only("precv"),
    samples=_COLLECTIVE, is_collective=True)


def _axis_and_perm(name, axis_name, perm):
    names = parallel.axis_names(axis_name, name)   # NameError outside its shard_map
    try:
        perm = tuple((operator.index(s), operator.index(t)) for s, t in perm)
    except (TypeError, ValueError):
        raise TypeError(f"{name}: perm must be a sequence of (source, destination) integer "
                        f"pairs, got {perm!r}.") from None
    return names, perm


def psend(x, axis_name, perm):
    """Sends x to the members of the named axis that `perm` pairs it with; returns the
    token that precv waits on. JAX implements it on GPU only."""
    axis_name, perm = _axis_and_perm("psend", axis_name, perm)
    return psend_p.bind(x, axis_name=axis_name, perm=perm)


def precv(token, out_shape, axis_name, perm):
    """Receives an array of `out_shape` (a ShapeDtypeStruct) sent by psend over the named
    axis, after `token`. JAX implements it on GPU only."""
    axis_name, perm = _axis_and_perm("precv", axis_name, perm)
    return precv_p.bind(token, out_shape=out_shape, axis_name=axis_name, perm=perm)
