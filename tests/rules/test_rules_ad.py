"""The uniform rule harness, autodiff part: for every registered primitive and each sample
with floating-point operands, check_grads in forward (JVP against central differences)
and reverse mode (VJP by <ct, J t> = <J^T ct, t>), in float64, second order where cheap;
plus the completeness of the jvp and transpose slots."""
import numpy as np
import pytest

import pyjax
from harness import rule_gaps, sample_cases
from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import registered_primitives
from pyjax._src.interpreters import ad
from pyjax._src.test_util import check_grads

CASES = sample_cases()

# Modes that JAX itself refuses (the reason is the value).
ONLY_REV = {"custom_vjp_call": "forward mode of a custom_vjp function is an error, as in JAX"}
ONLY_FWD = {"while": "reverse mode of a while_loop is an error, as in JAX",
            "custom_vmap_call": "reverse mode of a custom_vmap function is an error, as in JAX",
            "bcoo_spdot_general": "it has no transpose rule: reverse mode is an error, as in "
                                  "JAX"}
# Primitives whose JVP raises JAX's documented error.
JVP_RAISES = {"pure_callback": ValueError, "io_callback": ValueError, "composite": ValueError,
              "buffer_callback": ValueError}
# Operands JAX does not differentiate (their tangents are not checked).
NONDIFF_OPERANDS = {"polygamma": {0}, "regularized_incomplete_beta": {0, 1}, "zeta": {0}}
# Derivatives JAX defines differently from the numerical slope, so a numerical check does
# not apply (the value is the reason); their JVPs are still run.
NOT_NUMERIC = {
    "stop_gradient": "its derivative is zero by definition",
    ("sign", "complex"): "JAX defines the derivative of sign as zero for complex inputs too",
    ("eigh", "complex"): "complex eigenvectors are defined up to a phase (gauge)",
    "random_gamma": "its derivative is the implicit reparameterization gradient, not the "
                    "slope of the rejection sampler",
    "reduce_precision": "JAX passes the tangent through reduce_precision (straight through), "
                        "not the zero slope of the rounding",
}
# Order-based primitives: at tied values the slope is one-sided, so samples with ties
# are not checked numerically (their rule picks one side, as JAX's does).
ORDER_BASED = {"sort", "top_k", "max", "min", "reduce_max", "reduce_min", "cummax",
               "cummin", "argmax", "argmin", "clamp"}
# First order only (the value is the reason).
FIRST_ORDER_ONLY = {
    "eig": "its JVP needs eigenvectors, whose derivative is not implemented (as in JAX)",
    "igamma": "the derivative in a (igamma_grad_a) has no derivative, as in JAX",
    "igammac": "the derivative in a (igamma_grad_a) has no derivative, as in JAX",
}
# Primitives whose derivative is not defined for complex inputs in the reverse sense
# check_grads uses (non-holomorphic); forward mode is still checked.
NOT_HOLOMORPHIC = {"abs"}


def _widen(x):
    """float32 -> float64, complex64 -> complex128 (x64 is on during the checks)."""
    x = np.asarray(x)
    if x.dtype == np.float32:
        return x.astype(np.float64)
    if x.dtype == np.complex64:
        return x.astype(np.complex128)
    return x


def _widens(prim, widened, params):
    """Whether the primitive computes in float64 when given widened operands."""
    try:
        out = prim.abstract_eval(*[get_aval(a) for a in widened], **params)
    except TypeError:
        return False
    outs = out if prim.multiple_results else [out]
    return all(a.dtype.itemsize >= 8 or not dtypes.is_inexact(a.dtype)
               or a.dtype.itemsize <= 2 for a in outs)


def _differentiable(x):
    return dtypes.is_inexact(np.asarray(x).dtype)


def _bind(prim, params, args, positions):
    def f(*diff_args):
        full = list(args)
        for i, x in zip(positions, diff_args):
            full[i] = x
        out = prim.bind(*full, **params)
        return list(out) if prim.multiple_results else out
    return f


@pytest.mark.parametrize("prim,sample", CASES)
def test_derivatives_match_numerics(prim, sample):
    if not callable(prim.jvp):
        pytest.skip(f"{prim.name} declares {prim.jvp!r}")
    with pyjax.enable_x64(True):
        widened = [_widen(a) for a in sample.args]
        # Primitives whose params fix their types (sub-jaxprs, result shapes) stay in the
        # sample's precision and get float32 tolerances.
        fixed_precision = prim.is_higher_order or not _widens(prim, widened, sample.params)
        args = list(sample.args) if fixed_precision else widened
        skip = NONDIFF_OPERANDS.get(prim.name, set())
        positions = [i for i, a in enumerate(args) if _differentiable(a) and i not in skip]
        if not positions:
            pytest.skip("no floating-point operand")
        f = _bind(prim, sample.params, args, positions)
        diff_args = [args[i] for i in positions]
        out_avals = [get_aval(o) for o in pyjax.tree_util.tree_leaves(f(*diff_args))]
        if not any(dtypes.is_inexact(a.dtype) for a in out_avals):
            _check_zero_tangents(f, diff_args)
            return
        if prim.name in JVP_RAISES:
            with pytest.raises(JVP_RAISES[prim.name]):
                pyjax.jvp(f, diff_args, [np.ones_like(a) for a in diff_args])
            return
        is_complex = any(dtypes.is_complex(np.asarray(a).dtype) for a in args)
        reason = NOT_NUMERIC.get(prim.name) or (
            NOT_NUMERIC.get((prim.name, "complex")) if is_complex else None)
        if prim.name in ORDER_BASED and _has_ties(diff_args):
            reason = "tied values: the numerical slope is not defined there"
        if any(np.isnan(np.asarray(o)).any() for o in pyjax.tree_util.tree_leaves(
                f(*diff_args)) if dtypes.is_inexact(get_aval(o).dtype)):
            reason = "NaN outputs (a NaN fill): the numerical slope is NaN there, as in JAX"
        if reason:
            pyjax.jvp(f, diff_args, [np.ones_like(a) for a in diff_args])
            pytest.skip(reason)
        modes = (("rev",) if prim.name in ONLY_REV else ("fwd",) if prim.name in ONLY_FWD
                 else ("fwd", "rev"))
        if prim.name in NOT_HOLOMORPHIC and is_complex:
            modes = ("fwd",)
        low_precision = any(a.dtype.itemsize <= 2 for a in out_avals)
        order = 1 if low_precision or prim.name in FIRST_ORDER_ONLY else 2
        tol = 2e-2 if fixed_precision else None
        eps = 1e-3 if fixed_precision else 1e-2 if low_precision else 1e-5
        check_grads(f, diff_args, order, modes, atol=tol, rtol=tol, eps=eps)


def _has_ties(args):
    values = np.concatenate([np.ravel(a) for a in args])
    return len(np.unique(values)) < len(values)


def _check_zero_tangents(f, args):
    """Outputs without a tangent space (integer, bool): the JVP gives float0 zeros."""
    tangents = [np.ones_like(a) for a in args]
    _, t_out = pyjax.jvp(f, args, tangents)
    for t in pyjax.tree_util.tree_leaves(t_out):
        assert np.asarray(t).dtype == dtypes.float0


def test_every_primitive_declares_its_jvp():
    gaps = rule_gaps("jvp")
    assert not gaps, "\n".join(gaps)


def test_every_linear_primitive_has_a_transpose():
    gaps = rule_gaps("transpose")
    assert not gaps, "\n".join(gaps)


def test_linear_jvp_declares_its_primitive_linear():
    prims = registered_primitives()
    assert prims["add"].is_linear and prims["split"].is_linear
    assert not prims["sin"].is_linear


def test_check_grads_catches_a_wrong_rule():
    wrong = pyjax.custom_jvp(lambda x: pyjax.numpy.sin(x))
    wrong.defjvps(lambda g, ans, x: g * pyjax.numpy.sin(x))   # should be cos
    x = np.linspace(0.3, 1.2, 4)
    with pyjax.enable_x64(True):
        with pytest.raises(AssertionError):
            check_grads(wrong, (x,), 1, modes=("fwd",))
        with pytest.raises(AssertionError):
            check_grads(wrong, (x,), 1, modes=("rev",))
        check_grads(lambda x: pyjax.numpy.sin(x), (x,), 2)


def test_zero_jvp_rules_give_symbolic_zeros():
    floor = registered_primitives()["floor"]
    x = np.array([0.5, 1.5])
    _, t = floor.jvp([x], [np.ones(2)])
    assert type(t) is ad.Zero
