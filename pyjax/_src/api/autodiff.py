"""Automatic differentiation API with JAX's signatures: jvp, linearize, vjp, grad,
value_and_grad, jacfwd, jacrev, hessian, linear_transpose. Built on interpreters.ad (JVP
trace, linearize by partial evaluation, transposition); imports api siblings and below."""
from __future__ import annotations

import dataclasses
import functools
import operator
from collections.abc import Callable

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.api.jit import jit
from pyjax._src.api.shapes import abstractify
from pyjax._src.api.vmap import vmap
from pyjax._src.array import Array, as_array
from pyjax._src.core.avals import get_aval, refuse_strings
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import ad
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural as st
from pyjax._src.lax.sharding_constraint import as_cotangent_of
from pyjax._src.lax.slicing import slice_in_dim
from pyjax._src.util import check_callable, fun_name, wraps
from pyjax._src.traceback_util import api_boundary


def _as_jax_value(x):
    """Arguments of transformed functions are JAX values (Python scalars stay weak)."""
    if isinstance(x, Tracer):
        return x
    try:
        x = as_array(x)
        refuse_strings(x, x.aval)
        return x
    except TypeError:
        raise TypeError(f"Argument '{x!s:.100}' of type {type(x)} is not a valid JAX type; "
                        "differentiated functions take arrays, scalars or pytrees of them."
                        ) from None


def _as_forward_value(x):
    """Forward mode keeps a Python scalar primal or tangent as given (as JAX does): a
    function returning its input unchanged returns the float, and custom_jvp rules see
    it."""
    return x if dtypes.is_python_scalar(x) else _as_jax_value(x)


def _flatten_args(args, as_value=_as_jax_value):
    leaves, tree = tree_util.flatten(args)
    return [as_value(x) for x in leaves], tree


def _flatten_outputs(out, name):
    leaves, tree = tree_util.flatten(out)
    for x in leaves:
        if not (isinstance(x, Tracer) or hasattr(x, "aval") or isinstance(
                x, (np.ndarray, np.generic)) or dtypes.is_python_scalar(x)):
            raise TypeError(f"{name}: the function returned a value of type {type(x)}, "
                            "which is not a valid JAX type. Differentiated functions must "
                            "return arrays, scalars or pytrees of them.")
    return leaves, tree


def _split_aux(out, has_aux):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError("expected function with aux output to return a two-element tuple, "
                        f"but got type {type(out)} with value {out!r:.200}")
    return out[0], out[1]


class _FlatFun:
    """fun over pytrees as a function of leaves returning output leaves (and aux leaves);
    a call stores the output and aux treedefs on it. An object rather than a closure that
    stores them on itself: that would be a reference cycle, garbage left for the gc."""

    __slots__ = ("fun", "in_tree", "has_aux", "name", "out_tree", "aux_tree")

    def __init__(self, fun, in_tree, has_aux, name):
        self.fun, self.in_tree, self.has_aux, self.name = fun, in_tree, has_aux, name

    def __call__(self, *leaves):
        out, aux = _split_aux(self.fun(*tree_util.tree_unflatten(self.in_tree, leaves)),
                              self.has_aux)
        out_leaves, self.out_tree = _flatten_outputs(out, self.name)
        if not self.has_aux:
            return out_leaves
        aux_leaves, self.aux_tree = tree_util.flatten(aux)
        return out_leaves, aux_leaves


def _instantiate(t):
    return ad.instantiate_zeros(t)


def _match_weak_type(ct, aval):
    """Cotangents of weakly typed inputs are weakly typed, like the inputs."""
    if not aval.weak_type or aval.dtype == dtypes.float0:
        return ct
    ct_aval = get_aval(ct)
    if ct_aval.weak_type or ct_aval.dtype != aval.dtype:
        return ct
    return ew.convert_element_type_p.bind(ct, new_dtype=aval.dtype, weak_type=True)


# --- forward mode -------------------------------------------------------------------------

def _dtype_str(dtype):
    return "float0" if dtype == dtypes.float0 else dtype.name


def _aval_str(aval):
    return f"{_dtype_str(aval.dtype)}[{','.join(map(str, aval.shape))}]"


def _check_tangent(p_aval, tangent, where):
    try:
        t_aval = get_aval(tangent)
    except TypeError:
        raise TypeError(f"{where}: tangent {tangent!r:.100} of type {type(tangent)} is not a "
                        "valid JAX type.") from None
    expected = ad.tangent_aval(p_aval).dtype
    if where != "jax.jvp" and (t_aval.dtype != expected or t_aval.shape != p_aval.shape):
        raise ValueError(   # JAX's words
            "linearized function called on tangent values inconsistent with the original "
            f"primal values: got tangent aval {_aval_str(t_aval)} for primal aval "
            f"{_aval_str(p_aval)} but expected {_aval_str(ad.tangent_aval(p_aval))}.")
    if t_aval.dtype != expected:
        error = TypeError if where == "jax.jvp" else ValueError   # JAX's types
        raise error(
            f"primal and tangent arguments to {where} do not match; dtypes must be equal, "
            "or in case of int/bool primal dtype the tangent dtype must be float0. Got "
            f"primal dtype {p_aval.dtype.name} and so expected tangent dtype "
            f"{_dtype_str(expected)}, but got tangent dtype {_dtype_str(t_aval.dtype)} "
            "instead.")
    if t_aval.shape != p_aval.shape:
        raise ValueError(f"{where} called with different primal and tangent shapes; got "
                         f"primal shape {p_aval.shape} and tangent shape as {t_aval.shape}")


def _check_linearized_varying(primal, tangent):
    """Inside shard_map, a linearized function takes tangents varying along the manual
    axes its primal did (JAX's message)."""
    if primal.vma == tangent.vma:
        return
    expected = ad.tangent_aval(primal)
    fixes = []
    if left := tangent.vma - primal.vma:
        fixes.append(f"applying `jax.lax.pcast(..., {tuple(sorted(left))}, to='varying')` to "
                     "the primal value passed to `jax.linearize`")
    if left := primal.vma - tangent.vma:
        fixes.append(f"applying `jax.lax.pcast(..., {tuple(sorted(left))}, to='varying')` to "
                     "the tangent value passed to the callable `f_jvp` returned by "
                     "`jax.linearize`")
    raise ValueError("linearized function called on tangent values inconsistent with the "
                     f"original primal values:\nGot tangent aval {tangent} for primal aval "
                     f"{primal} but expected {expected}. \nThis might be fixed by:\n"
                     + "\n".join(f"  * {d};" for d in fixes))


def _tangents_in(p_avals, tangents, where):
    """The tangents of primals of avals `p_avals`, checked against them. jvp's tangents
    of weakly typed primals are weakly typed too, as in JAX (whose linearized functions
    keep the tangents' own types)."""
    out = []
    for p_aval, t in zip(p_avals, tangents):
        _check_tangent(p_aval, t, where)
        if where != "jax.jvp":
            _check_linearized_varying(p_aval, get_aval(t))
        if get_aval(t).dtype == dtypes.float0:
            out.append(ad.Zero(ad.tangent_aval(p_aval)))
        elif where == "jax.jvp":
            out.append(_match_weak_type(_as_forward_value(t), p_aval))
        else:
            out.append(_as_forward_value(t))
    return out


@api_boundary
def jvp(fun, primals, tangents, has_aux=False):
    """Forward mode: (fun(*primals), the directional derivative of fun at primals along
    tangents). primals and tangents are tuples or lists of matching pytrees."""
    check_callable(fun, "jvp")
    if not (isinstance(primals, (tuple, list)) and isinstance(tangents, (tuple, list))):
        raise TypeError("primal and tangent arguments to jax.jvp must be tuples or lists; "
                        f"found {type(primals).__name__} and {type(tangents).__name__}.")
    p_leaves, p_tree = _flatten_args(tuple(primals), _as_forward_value)
    t_leaves, t_tree = tree_util.flatten(tuple(tangents))
    if p_tree != t_tree or type(primals) is not type(tangents):   # JAX compares the two
        _, p_tree = tree_util.flatten(primals)
        _, t_tree = tree_util.flatten(tangents)
        raise TypeError("primal and tangent arguments to jax.jvp must have the same tree "
                        f"structure; primals have tree structure {p_tree} whereas tangents "
                        f"have tree structure {t_tree}.")
    flat = _FlatFun(lambda *a: fun(*a), p_tree, has_aux, "jvp")
    result = ad.jvp_flat(flat, p_leaves,
                         _tangents_in(map(get_aval, p_leaves), t_leaves, "jax.jvp"), has_aux)
    out_p, out_t = result[0], [_instantiate(t) for t in result[1]]
    outs = (tree_util.tree_unflatten(flat.out_tree, out_p),
            tree_util.tree_unflatten(flat.out_tree, out_t))
    if has_aux:
        return outs + (tree_util.tree_unflatten(flat.aux_tree, result[2]),)
    return outs


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class _LinearSignature:
    """What a linearized or vjp function knows besides its linear jaxpr and residuals:
    the differentiated function's name, the avals of its primal inputs and outputs, and
    which tangents the jaxpr takes and gives."""
    name: str
    p_avals: tuple
    out_p_avals: tuple
    in_avals: tuple
    out_avals: tuple
    in_nonzeros: tuple
    out_nonzeros: tuple

    @staticmethod
    def of(fun, p_leaves, out_p, linear):
        return _LinearSignature(
            fun_name(fun), tuple(map(get_aval, p_leaves)), tuple(map(get_aval, out_p)),
            tuple(linear.in_avals), tuple(linear.out_avals), tuple(linear.in_nonzeros),
            tuple(linear.out_nonzeros))

    def linear(self, jaxpr, residuals):
        return ad.Linearized(jaxpr, residuals, self.in_avals, self.out_avals,
                             self.in_nonzeros, self.out_nonzeros)


def _lift_linearized(jaxpr, sig, p_tree, out_tree, consts, *tangents):
    """The linearized function: the tangents of the outputs, from the linear `jaxpr`
    over residuals `consts`."""
    t_leaves, t_tree = tree_util.flatten(tangents)
    if t_tree != p_tree:
        raise TypeError(f"linearized function called on tangent values inconsistent "
                        f"with the original primal values: expected tree structure "
                        f"{p_tree}, got {t_tree}.")
    outs = sig.linear(jaxpr, consts).jvp(
        _tangents_in(sig.p_avals, t_leaves, "the linearized function"))
    return tree_util.tree_unflatten(out_tree, [_instantiate(t) for t in outs])


@api_boundary
def linearize(fun, *primals, has_aux=False):
    """(fun(*primals), f_jvp) where f_jvp(*tangents) evaluates the JVP at primals without
    re-running fun: the tangent computation was staged into a linear jaxpr. As in JAX,
    f_jvp is a Partial over the residuals whose func is a functools.partial of the
    linear jaxpr (`f_jvp.func.args[0]`)."""
    check_callable(fun, "linearize")
    p_leaves, p_tree = _flatten_args(primals, _as_forward_value)
    flat = _FlatFun(fun, p_tree, has_aux, "linearize")
    result = ad.linearize_flat(flat, p_leaves, has_aux)
    out_p, linear = result[0], result[1]
    sig = _LinearSignature.of(fun, p_leaves, out_p, linear)
    f_jvp = tree_util.Partial(
        functools.partial(_lift_linearized, linear.jaxpr, sig, p_tree, flat.out_tree),
        list(linear.consts))
    out = tree_util.tree_unflatten(flat.out_tree, out_p)
    if has_aux:
        return out, f_jvp, tree_util.tree_unflatten(flat.aux_tree, result[2])
    return out, f_jvp


# --- reverse mode -------------------------------------------------------------------------

def _check_cotangent(ct, p_aval):
    try:
        c_aval = get_aval(ct)
    except TypeError:
        raise TypeError(f"Cotangent {ct!r:.100} of type {type(ct)} passed to the vjp "
                        "function is not a valid JAX type.") from None
    expected = ad.tangent_aval(p_aval)
    # an integer output's cotangent is ignored; JAX accepts any dtype there
    if c_aval.shape != expected.shape or (c_aval.dtype != expected.dtype
                                          and expected.dtype != dtypes.float0):
        raise ValueError(f"unexpected JAX type (e.g. shape/dtype) for argument to VJP "
                         f"function: got {c_aval.str_short()}, but expected "
                         f"{expected.str_short()} because the corresponding output of the "
                         f"differentiated function had JAX type {p_aval.str_short()}")


@dataclasses.dataclass(frozen=True, slots=True)
class _Residual:
    """Where a vjp's residual comes from: its primal input `idx` (primal) or its opaque
    residual `idx`."""
    idx: int
    primal: bool


@dataclasses.dataclass(slots=True, weakref_slot=True, eq=False)
class VJP:
    """The function vjp returns, as JAX's: cotangents of the outputs -> cotangents of the
    inputs. Its residuals are the primal inputs the backward pass reads (`args_res`, one
    entry per positional primal, NotNeeded() where unused; they may be dropped and given
    back before the call) and the values computed for it (`opaque_residuals`); `jaxpr`
    is the linear jaxpr it transposes. A pytree of those residuals, so it passes in and
    out of jit: fwd_and_bwd's backward function compiles once."""
    fun: Callable   # functools.partial(_vjp_callable, sources, signature, jaxpr)
    in_tree: tree_util.PyTreeDef
    out_tree: tree_util.PyTreeDef
    args_res: list
    opaque_residuals: list
    jaxpr = property(lambda self: self.fun.args[2])

    def __call__(self, out_ct, *extra_args):
        if extra_args:
            raise TypeError(
                f"The function returned by `jax.vjp` applied to {self.fun.args[1].name} "
                f"was called with {len(extra_args) + 1} arguments, but functions returned "
                "by `jax.vjp` must be called with a single argument corresponding to the "
                "single value returned by the function being differentiated (even if that "
                "returned value is a tuple or other container).")
        return self.fun(self.in_tree, self.out_tree, self.args_res,
                        self.opaque_residuals)(out_ct)

    def with_refs(self, *maybe_ct_refs):
        """This pullback with a choice per primal leaf (a pytree like the primals): its
        cotangent returned (jax.ad.GradValue()), not wanted (jax.ad.DontWant(): the
        result holds jax.ad.DidntWant()), or added into a jax.Ref given in its place (the
        result holds jax.ad.GradRef())."""
        targets, tree = tree_util.tree_flatten(maybe_ct_refs)
        if tree != self.in_tree:
            raise ValueError(f"vjp with_refs: expected one entry per primal leaf, in the "
                             f"structure {self.in_tree}, got {tree}.")

        def pullback(ct):
            grads = tree_util.tree_leaves(self(ct))
            out = []
            for target, grad in zip(targets, grads):
                if isinstance(target, GradValue):
                    out.append(grad)
                elif isinstance(target, DontWant):
                    out.append(DidntWant())
                else:   # a mutable reference: the cotangent accumulates into it
                    target[...] = target[...] + grad
                    out.append(GradRef())
            return tree_util.tree_unflatten(self.in_tree, out)
        return pullback


tree_util.register_pytree_node(
    VJP, lambda f: ((f.args_res, f.opaque_residuals), (f.fun, f.in_tree, f.out_tree)),
    lambda static, res: VJP(*static, *res))


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class NotNeeded:
    """In a vjp's args_res: this primal input is not a residual."""


def _vjp_callable(sources, sig, jaxpr, in_tree, out_tree, args_res, opaque_residuals):
    """The backward function of a VJP's residuals."""
    primal_res = tree_util.tree_leaves(args_res, is_leaf=lambda x: isinstance(x, NotNeeded))
    residuals = [primal_res[r.idx] if r.primal else opaque_residuals[r.idx]
                 for r in sources]
    return functools.partial(_vjp_bwd, sig, sig.linear(jaxpr, residuals), in_tree, out_tree)


def _vjp_bwd(sig, linear, in_tree, out_tree, out_ct):
    ct_leaves, ct_tree = tree_util.flatten(out_ct)
    if ct_tree != out_tree:
        raise ValueError(f"unexpected tree structure of the argument to the VJP function "
                         f"of {sig.name}: got {ct_tree}, but it must match the pytree "
                         f"structure of the differentiated function's output, "
                         f"{out_tree}.")
    cts = []
    for c, p_aval in zip(ct_leaves, sig.out_p_avals):
        _check_cotangent(c, p_aval)
        ct_aval = ad.tangent_aval(p_aval)
        cts.append(ad.Zero(ct_aval) if ct_aval.dtype == dtypes.float0
                   else as_cotangent_of(c, p_aval))
    cts_in = linear.vjp(cts)
    leaves = [as_cotangent_of(_instantiate(c), a) for c, a in zip(cts_in, sig.p_avals)]
    return tree_util.tree_unflatten(in_tree, leaves)


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """vjp with_refs: return this primal's cotangent (the default)."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """In with_refs' result: this cotangent was added into the Ref given for it."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """vjp with_refs: this primal's cotangent is not wanted."""


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """In with_refs' result: the cotangent asked for with DontWant()."""


@api_boundary
def vjp(fun, *primals, has_aux=False):
    """(fun(*primals), vjp_fun) where vjp_fun(cotangent) returns a tuple with one
    cotangent per primal: the transposed linearization of fun at primals."""
    check_callable(fun, "vjp")
    p_leaves, p_tree = _flatten_args(primals)
    flat = _FlatFun(fun, p_tree, has_aux, "vjp")
    result = ad.linearize_flat(flat, p_leaves, has_aux)
    out_p, linear = result[0], result[1]
    # residuals that are primal inputs are the VJP's args_res (as in JAX)
    position = {id(x): i for i, x in enumerate(p_leaves)}
    used, opaque, sources = set(), [], []
    for r in linear.consts:
        if id(r) in position:
            used.add(id(r))
            sources.append(_Residual(position[id(r)], True))
        else:
            sources.append(_Residual(len(opaque), False))
            opaque.append(r)
    args_res = p_tree.walk(lambda xs, _: tuple(xs), lambda x: x if id(x) in used
                           else NotNeeded(), p_leaves)
    sig = _LinearSignature.of(fun, p_leaves, out_p, linear)
    pullback = VJP(functools.partial(_vjp_callable, sources, sig, linear.jaxpr), p_tree,
                   flat.out_tree, list(args_res), opaque)
    out = tree_util.tree_unflatten(flat.out_tree, out_p)
    if has_aux:
        return out, pullback, tree_util.tree_unflatten(flat.aux_tree, result[2])
    return out, pullback


def fwd_and_bwd(fun, argnums, has_aux=False, jitted=True):
    """vjp split in two functions that can each be compiled once and reused every step:
    fwd(*args) -> (fun(*args), residuals) (and fun's aux last, with has_aux), and
    bwd(residuals, cotangent) -> the cotangents of the arguments `argnums` picks (a tuple
    when it is a sequence). The residuals are a pytree of arrays."""
    check_callable(fun, "fwd_and_bwd")
    argnums = _normalize_argnums(argnums)

    def fwd(*args):
        nums, diff = _select_args("fwd_and_bwd", argnums, args)

        def of_differentiated(*diff_args):
            full = list(args)
            for i, value in zip(nums, diff_args):
                full[i] = value
            return fun(*full)
        return vjp(of_differentiated, *diff, has_aux=has_aux)

    def bwd(residuals, cotangent):
        cotangents = residuals(cotangent)
        return cotangents if isinstance(argnums, tuple) else cotangents[0]

    return (jit(fwd), jit(bwd)) if jitted else (fwd, bwd)


def _normalize_argnums(argnums):
    try:
        if isinstance(argnums, (tuple, list)):
            return tuple(operator.index(a) for a in argnums)
        return operator.index(argnums)
    except TypeError:
        raise TypeError(f"argnums must be an integer or a tuple of integers, got "
                        f"{argnums!r}") from None


def _select_args(name, argnums, args):
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    if not nums and isinstance(argnums, tuple):
        raise ValueError(f"{name}: argnums must not be an empty tuple.")
    top = max(n if n >= 0 else -n - 1 for n in nums)
    if top >= len(args):
        error = ValueError if name in ("jacfwd", "jacrev") else TypeError   # JAX's types
        raise error(f"differentiating with respect to argnums={argnums} requires at "
                    f"least {top + 1} positional arguments to be passed by the caller, "
                    f"but got only {len(args)} positional arguments.")
    nums = tuple(n % len(args) for n in nums)
    if len(set(nums)) != len(nums):
        raise ValueError(f"{name}: argnums {argnums} contains duplicates.")
    return nums, tuple(args[i] for i in nums)


def _partial_fun(fun, args, kwargs, nums):
    def f(*dyn):
        full = list(args)
        for i, x in zip(nums, dyn):
            full[i] = x
        return fun(*full, **kwargs)
    return f


def _check_input_dtype_rev(name, holomorphic, allow_int, x):
    dtype = get_aval(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires inputs with complex dtype, "
                        f"but got {dtype.name}.")
    if not dtypes.is_inexact(dtype) and not allow_int:
        raise TypeError(f"{name} requires real- or complex-valued inputs (input dtype that "
                        f"is a sub-dtype of np.inexact), but got {dtype.name}. If you want "
                        "to use Boolean- or integer-valued inputs, use vjp or set allow_int "
                        "to True.")


def _check_output_dtype_rev(name, holomorphic, x):
    dtype = get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires outputs with complex "
                            f"dtype, but got {dtype.name}.")
    elif dtypes.is_complex(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex outputs, use jax.vjp "
                        "directly.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued outputs (output dtype that is a "
                        f"sub-dtype of np.floating), but got {dtype.name}. For "
                        "differentiation of functions with integer outputs, use jax.vjp "
                        "directly.")


def _check_scalar(x):
    try:
        aval = get_aval(x)
    except TypeError:
        raise TypeError("Gradient only defined for scalar-output functions. Output was "
                        f"{x!r:.100}.") from None
    if aval.shape != ():
        raise TypeError("Gradient only defined for scalar-output functions. Output had "
                        f"shape: {aval.shape}.")


def value_and_grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False,
                   reduce_axes=()):
    """A function returning (fun(*args), the gradient of fun with respect to the args at
    argnums); with has_aux, ((value, aux), gradient). fun must return a real scalar."""
    check_callable(fun, "value_and_grad")
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    argnums = _normalize_argnums(argnums)
    return _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "value_and_grad")


def _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, name):
    @wraps(fun, docstr=_VALUE_AND_GRAD_DOC, argnums=argnums)
    @api_boundary
    def value_and_grad_f(*args, **kwargs):
        nums, dyn = _select_args(name, argnums, args)
        for x in tree_util.tree_leaves(dyn):
            _check_input_dtype_rev(name, holomorphic, allow_int, _as_jax_value(x))
        f = _partial_fun(fun, args, kwargs, nums)
        if has_aux:
            ans, pullback, aux = vjp(f, *dyn, has_aux=True)
        else:
            ans, pullback = vjp(f, *dyn)
        _check_scalar(ans)
        _check_output_dtype_rev(name, holomorphic, ans)
        g = pullback(_ones_like_output(ans))
        g = g if isinstance(argnums, tuple) else g[0]
        return ((ans, aux) if has_aux else ans), g
    return value_and_grad_f


def _ones_like_output(ans):
    """The seed cotangent 1, weakly typed like a weakly typed output (so the gradient of
    a function of a Python scalar is weakly typed, as in JAX). An array, not a Python
    scalar: it is the gradient itself when fun returns an input unchanged. Of the
    output's own dtype even where that is not canonical now (a float64 output computed
    inside `with enable_x64():`)."""
    aval = get_aval(ans)
    one = 1.0 if dtypes.is_float(aval.dtype) else 1.0 + 0j
    if aval.weak_type and get_aval(one).dtype == aval.dtype:
        return as_array(one)
    return Array(np.ones((), aval.dtype))


_GRAD_DOC = ("Gradient of {fun} with respect to positional argument(s) {argnums}. Takes the "
             "same arguments as {fun} but returns the gradient, which has the same shape "
             "as the arguments at positions {argnums}.")
_VALUE_AND_GRAD_DOC = (
    "Value and gradient of {fun} with respect to positional argument(s) {argnums}. Takes "
    "the same arguments as {fun} but returns a two-element tuple where the first element "
    "is the value of {fun} and the second element is the gradient, which has the same "
    "shape as the arguments at positions {argnums}.")
_JACOBIAN_DOC = ("Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes "
                 "the same arguments as {fun} but returns the jacobian of the output with "
                 "respect to the arguments at positions {argnums}.")


def grad(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False, reduce_axes=()):
    """The gradient of a scalar-valued fun with respect to the positional argument(s) at
    argnums (an int or a tuple of ints); with has_aux, (gradient, aux)."""
    check_callable(fun, "grad")
    if reduce_axes:
        raise NotImplementedError("reduce_axes argument to grad is deprecated")
    argnums = _normalize_argnums(argnums)
    vg = _value_and_grad(fun, argnums, has_aux, holomorphic, allow_int, "grad")

    @wraps(fun, docstr=_GRAD_DOC, argnums=argnums)
    @api_boundary
    def grad_f(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


# --- Jacobians ----------------------------------------------------------------------------

def _std_basis(leaves):
    """The standard basis of the flattened leaves, stacked: for each leaf, an array of
    shape (n,) + leaf.shape where n is the total size of all leaves."""
    avals = [ad.tangent_aval(get_aval(x)) for x in leaves]
    total = sum(a.size for a in avals)
    eye, start, out = np.eye(total), 0, []
    for a in avals:
        out.append(np.asarray(eye[:, start:start + a.size].reshape((total,) + a.shape),
                              a.dtype))
        start += a.size
    return out


def _split_stacked(stacked, out_shape, in_leaves, front):
    """Jacobian blocks out_shape + in_shape from one output leaf's stack over the basis
    of all input leaves: (n,) + out_shape when `front`, else n is the last axis."""
    blocks, start = [], 0
    n_out = len(out_shape)
    axis = 0 if front else n_out
    for x in in_leaves:
        shape, size = get_aval(x).shape, get_aval(x).size
        part = slice_in_dim(stacked, start, start + size, axis=axis)
        if front:   # (size,) + out_shape -> in_shape + out_shape -> out_shape + in_shape
            part = st.reshape(part, shape + out_shape)
            perm = tuple(range(len(shape), len(shape) + n_out)) + tuple(range(len(shape)))
            part = st.transpose(part, perm)
        else:
            part = st.reshape(part, out_shape + shape)
        blocks.append(part)
        start += size
    return blocks


def _check_input_dtype_fwd(name, holomorphic, x):
    dtype = get_aval(x).dtype
    if holomorphic:
        if not dtypes.is_complex(dtype):
            raise TypeError(f"{name} with holomorphic=True requires inputs with complex "
                            f"dtype, but got {dtype.name}.")
    elif not dtypes.is_float(dtype):
        raise TypeError(f"{name} requires real-valued inputs (input dtype that is a "
                        f"sub-dtype of np.floating), but got {dtype.name}. For holomorphic "
                        "differentiation, pass holomorphic=True. For differentiation of "
                        "non-holomorphic functions involving complex inputs or integer "
                        "inputs, use jax.jvp directly.")


def _check_output_dtype_fwd(name, holomorphic, x):
    dtype = get_aval(x).dtype
    if holomorphic and not dtypes.is_complex(dtype):
        raise TypeError(f"{name} with holomorphic=True requires outputs with complex dtype, "
                        f"but got {dtype.name}.")


def _float0_as_zeros(block, primal):
    """A Jacobian block of an integer primal is zeros of its dtype (as in JAX), not float0."""
    aval = get_aval(block)
    if aval.dtype != dtypes.float0:
        return block
    return as_array(np.zeros(aval.shape, get_aval(primal).dtype))


def _jacobian_tree(out_tree, in_tree, blocks):
    """blocks[o][i]: the Jacobian of output leaf o with respect to input leaf i. Returns
    the output tree of input trees, as JAX does."""
    return tree_util.tree_unflatten(
        out_tree, [tree_util.tree_unflatten(in_tree, row) for row in blocks])


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Jacobian of fun by forward mode: the JVP pushed forward along every input basis
    vector at once (vmap over jvp, as JAX: fun sees JVP tracers with batched tangents).
    Each block has shape output shape + input shape."""
    check_callable(fun, "jacfwd")
    argnums = _normalize_argnums(argnums)

    @wraps(fun, docstr=_JACOBIAN_DOC, argnums=argnums)
    def jacfun(*args, **kwargs):
        nums, dyn = _select_args("jacfwd", argnums, args)
        in_leaves, in_tree = _flatten_args(dyn)
        for x in in_leaves:
            _check_input_dtype_fwd("jacfwd", holomorphic, x)
        f = _partial_fun(fun, args, kwargs, nums)
        primals = tree_util.tree_unflatten(in_tree, in_leaves)

        def pushforward(*tangents):
            return jvp(f, primals, tangents, has_aux=has_aux)
        basis = tree_util.tree_unflatten(in_tree, _std_basis(in_leaves))
        result = vmap(pushforward, out_axes=(None, 0, None) if has_aux else (None, 0))(
            *basis)
        out = result[0]
        out_leaves, out_tree = tree_util.flatten(out)
        for y in out_leaves:
            _check_output_dtype_fwd("jacfwd", holomorphic, y)
        stacked = tree_util.tree_leaves(result[1])
        blocks = [[_float0_as_zeros(b, y) for b in
                   _split_stacked(col, get_aval(y).shape, in_leaves, front=True)]
                  for col, y in zip(stacked, out_leaves)]
        if not isinstance(argnums, tuple):
            in_tree = in_tree.children()[0]
        jac = _jacobian_tree(out_tree, in_tree, blocks)
        return (jac, result[2]) if has_aux else jac
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """The Jacobian of fun by reverse mode: the VJP pulled back along every output basis
    vector at once (vmap over the pullback). Each block has shape output shape + input
    shape."""
    check_callable(fun, "jacrev")
    argnums = _normalize_argnums(argnums)

    @wraps(fun, docstr=_JACOBIAN_DOC, argnums=argnums)
    def jacfun(*args, **kwargs):
        nums, dyn = _select_args("jacrev", argnums, args)
        for x in tree_util.tree_leaves(dyn):
            _check_input_dtype_rev("jacrev", holomorphic, allow_int, _as_jax_value(x))
        f = _partial_fun(fun, args, kwargs, nums)
        result = vjp(f, *dyn, has_aux=has_aux)
        out, pullback = result[0], result[1]
        out_leaves, out_tree = tree_util.flatten(out)
        for y in out_leaves:
            _check_output_dtype_rev("jacrev", holomorphic, y)
        in_leaves, in_tree = _flatten_args(dyn)
        basis = tree_util.tree_unflatten(out_tree, _std_basis(out_leaves))
        rows = tree_util.tree_leaves(vmap(pullback)(basis))
        total = sum(get_aval(y).size for y in out_leaves)
        blocks, start = [], 0
        for y in out_leaves:
            y_shape, size = get_aval(y).shape, get_aval(y).size
            row = []
            for r, x in zip(rows, in_leaves):
                part = slice_in_dim(r, start, start + size, axis=0) if size != total else r
                # as JAX's: in the input's type, weakly typed where the input is
                block = st.reshape(part, y_shape + get_aval(x).shape)
                row.append(_match_weak_type(_float0_as_zeros(block, x), get_aval(x)))
            blocks.append(row)
            start += size
        if not isinstance(argnums, tuple):
            in_tree = in_tree.children()[0]
        jac = _jacobian_tree(out_tree, in_tree, blocks)
        return (jac, result[2]) if has_aux else jac
    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """The Hessian of a scalar fun: jacfwd of jacrev (forward-over-reverse)."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


# --- linear_transpose ----------------------------------------------------------------------

@api_boundary
def linear_transpose(fun, *primals, reduce_axes=()):
    """The transpose of a linear fun, traced at the shapes and dtypes of primals: a
    function from output cotangents to a tuple of input cotangents."""
    check_callable(fun, "linear_transpose")
    leaves, in_tree = tree_util.flatten(primals)
    in_avals = [abstractify(x) for x in leaves]
    flat = _FlatFun(fun, in_tree, False, "linear_transpose")
    jaxpr, consts = pe.trace_to_jaxpr(flat, in_avals)
    in_dtypes = [a.dtype for a in in_avals]
    out_dtypes = [a.dtype for a in jaxpr.out_avals]
    if not (all(map(dtypes.is_inexact, in_dtypes + out_dtypes))
            or all(map(dtypes.is_int, in_dtypes + out_dtypes))):
        raise TypeError("linear_transpose only supports [float or complex] -> [float or "
                        "complex], and integer -> integer functions, but got "
                        f"{[d.name for d in in_dtypes]} -> {[d.name for d in out_dtypes]}.")
    out_tree = flat.out_tree

    def transposed(*cts):
        ct = cts[0] if len(cts) == 1 else cts
        ct_leaves, ct_tree = tree_util.flatten(ct)
        if ct_tree != out_tree:
            raise TypeError(f"cotangent tree does not match function output, expected "
                            f"{out_tree} but got {ct_tree}")
        for c, a in zip(ct_leaves, jaxpr.out_avals):
            if get_aval(c).shape != a.shape or get_aval(c).dtype != a.dtype:
                raise TypeError(f"cotangent type does not match function output, expected "
                                f"{a.str_short(True)} but got {get_aval(c).str_short(True)}")
        args = [ad.UndefinedPrimal(a) for a in in_avals]
        cts_in = ad.backward_pass(jaxpr, consts, args, ct_leaves)
        return tree_util.tree_unflatten(in_tree, [_instantiate(c) for c in cts_in])
    return tree_util.Partial(transposed)
