"""Numerical checks of derivatives (jax.test_util): check_jvp against central differences,
check_vjp by the inner-product identity <ct, J t> = <J^T ct, t>, and check_grads to any
order in forward and reverse mode. Host NumPy arithmetic plus the autodiff API."""
from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.api.autodiff import jvp, vjp
from pyjax._src.array import as_array
from pyjax._src.core.avals import get_aval

EPS = 1e-4

# JAX's tolerances for derivative checks (its public_test_util's
# default_gradient_tolerance), and for dtypes that table leaves out, its default ones.
_GRADIENT_TOLERANCE = {
    **{d: 1e-1 for d in dtypes.float8_dtypes}, **{
        np.dtype(getattr(ml_dtypes, name)): 1e0 for name in ("float4_e2m1fn", "float8_e8m0fnu")
        if hasattr(ml_dtypes, name)},
    dtypes.bfloat16: 1e-1, dtypes.float16: 1e-2, dtypes.float32: 2e-3, dtypes.float64: 1e-5,
    dtypes.complex64: 1e-3, dtypes.complex128: 1e-5}
_FALLBACK_TOLERANCE = {dtypes.float32: 1e-6, dtypes.float64: 1e-15, dtypes.complex64: 1e-6,
                       dtypes.complex128: 1e-15}


def _tolerance(dtype, given):
    """JAX's rule: a number holds for every dtype; a dict {dtype: tolerance} overrides the
    defaults for its dtypes (which are looked up canonicalized, as JAX does)."""
    if given is not None and not isinstance(given, dict):
        return given
    overrides = {np.dtype(k): v for k, v in (given or {}).items()}
    dtype = dtypes.canonicalize_dtype(dtype)
    return overrides.get(dtype, _GRADIENT_TOLERANCE.get(dtype, _FALLBACK_TOLERANCE.get(dtype, 0)))


def _is_float0(x):
    return np.asarray(x).dtype == dtypes.float0


def check_close(actual, expected, atol=None, rtol=None, err_msg=""):
    """Leaf by leaf, as JAX's check_close: the larger of the two dtypes' tolerances, scaled
    by the number of elements (atol by the actual's, rtol by the expected's)."""
    a_leaves, a_tree = tree_util.tree_flatten(actual)
    e_leaves, e_tree = tree_util.tree_flatten(expected)
    if a_tree != e_tree:
        raise AssertionError(f"{err_msg}: tree structures differ, {a_tree} vs {e_tree}")
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        if _is_float0(a) or _is_float0(e):
            if a.shape != e.shape:
                raise AssertionError(f"{err_msg}: float0 shapes differ, {a.shape} vs "
                                     f"{e.shape}")
            continue
        tol_a = max(_tolerance(a.dtype, atol), _tolerance(e.dtype, atol)) * a.size
        tol_r = max(_tolerance(a.dtype, rtol), _tolerance(e.dtype, rtol)) * e.size
        with np.errstate(invalid="ignore"):
            np.testing.assert_allclose(a.astype(np.result_type(a.dtype, np.float64)),
                                       e.astype(np.result_type(e.dtype, np.float64)),
                                       atol=tol_a, rtol=tol_r or 1e-7, err_msg=err_msg)


def _rand_like(rng, tree):
    def rand(x):
        x = np.asarray(x)
        if not dtypes.is_inexact(x.dtype):
            return np.zeros(x.shape, dtypes.float0)
        value = rng.standard_normal(x.shape)
        if dtypes.is_complex(x.dtype):
            value = value + 1j * rng.standard_normal(x.shape)
        return np.asarray(value, x.dtype)
    return tree_util.tree_map(rand, tree)


def _add_scaled(primals, tangents, scale):
    def step(x, t):
        x = np.asarray(x)
        if _is_float0(t):
            return as_array(x)
        return as_array(np.asarray(x + scale * np.asarray(t), x.dtype))
    return tree_util.tree_map(step, primals, tangents)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """(f(p + eps t) - f(p - eps t)) / (2 eps), leaf by leaf; float0 for integer outputs."""
    f_plus = f(*_add_scaled(primals, tangents, eps))
    f_minus = f(*_add_scaled(primals, tangents, -eps))

    def diff(hi, lo):
        hi, lo = np.asarray(hi), np.asarray(lo)
        if not dtypes.is_inexact(hi.dtype):
            return np.zeros(hi.shape, dtypes.float0)
        wide = np.result_type(hi.dtype, np.float64)
        with np.errstate(invalid="ignore"):
            slope = (hi.astype(wide) - lo.astype(wide)) / (2 * eps)
        # Where f is the same infinity on both sides (an overflow), it is locally constant:
        # slope 0, as JAX's numerical_jvp takes it; NaN on either side stays NaN.
        return np.where(hi == lo, 0, slope).astype(hi.dtype)
    return tree_util.tree_map(diff, f_plus, f_minus)


def _inner_product(xs, ys):
    """Re <xs, ys>, summed in double precision and given the dtype JAX's NumPy sum of the
    leaves' dot products has (that dtype picks the tolerance)."""
    total, dtype = 0.0, None
    for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
        x, y = np.asarray(x), np.asarray(y)
        if _is_float0(x) or _is_float0(y):
            continue
        total += np.real(np.vdot(x.astype(np.complex128).ravel(),
                                 y.astype(np.complex128).ravel()))
        pair = np.real(np.zeros((), np.result_type(x.dtype, y.dtype))).dtype
        dtype = pair if dtype is None else np.result_type(dtype, pair)
    return np.asarray(total, dtype or np.float64)


def _as_cotangent(x):
    """An output used as its own cotangent (float0 zeros for integer outputs)."""
    if dtypes.is_inexact(get_aval(x).dtype):
        return x
    return np.zeros(np.shape(x), dtypes.float0)


def _conj(tree):
    return tree_util.tree_map(lambda x: x if _is_float0(x) else np.conj(np.asarray(x)), tree)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """f_jvp(primals, tangents) agrees with f and with central differences of f."""
    rng = np.random.RandomState(0)
    tangent = _rand_like(rng, args)
    v_out, t_out = f_jvp(args, tangent)
    check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    t_expected = numerical_jvp(f, args, tangent, eps)
    check_close(t_out, t_expected, atol, rtol,
                f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """f_vjp(*args) -> (out, pullback) satisfies <ct, J t> = <J^T ct, t>, with J t from
    central differences (cotangents conjugated: JAX's convention for complex values)."""
    v_out, pullback = f_vjp(*args)
    check_close(v_out, f(*args), atol, rtol, f"{err_msg} primal" if err_msg else "primal")
    rng = np.random.RandomState(0)   # JAX's directions: the same checks pass and fail
    tangent = _rand_like(rng, args)
    tangent_out = numerical_jvp(f, args, tangent, eps)
    cotangent = _rand_like(rng, v_out)
    cotangent_out = _conj(pullback(_conj(cotangent)))
    ip = _inner_product(tangent, cotangent_out)
    ip_expected = _inner_product(tangent_out, cotangent)
    check_close(ip, ip_expected, atol, rtol,
                f"{err_msg} cotangent projection" if err_msg else "cotangent projection")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks the derivatives of f at args up to `order`, in forward mode (JVP against
    central differences) and/or reverse mode (VJP against the JVP by inner products);
    higher orders differentiate the JVP and VJP functions themselves."""
    args = tuple(args)
    eps = eps or EPS
    if isinstance(modes, str):
        modes = (modes,)
    unknown = set(modes) - {"fwd", "rev"}
    if unknown:
        raise ValueError(f"check_grads modes must be 'fwd' and/or 'rev', got {modes}")

    def check(f, args, order, fwd_msg="", rev_msg=""):
        if "fwd" in modes:
            msg = f"JVP of {fwd_msg or 'f'} (order {order})"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1,
                      fwd_msg=f"JVP of {fwd_msg or 'f'}")
        if "rev" in modes:
            msg = f"VJP of {rev_msg or 'f'} (order {order})"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, msg)
            if order > 1:
                def f_vjp(*primals):
                    out, pullback = vjp(f, *primals)
                    return pullback(tree_util.tree_map(_as_cotangent, out))
                check(f_vjp, args, order - 1, rev_msg=f"VJP of {rev_msg or 'f'}")

    check(f, args, order)
