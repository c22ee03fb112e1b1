"""jax.experimental.ode.odeint: adaptive Dormand-Prince (RK45) integration of dy/dt =
func(y, t, *args), with outputs at the requested times by 4th-order interpolation and
gradients by the adjoint method (a second ODE solved backwards in time), so memory does
not grow with the number of steps."""
from __future__ import annotations

import functools
import math

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.api.autodiff import vjp
from pyjax._src.api.custom_derivatives import closure_convert, custom_vjp
from pyjax._src.api.jit import jit
from pyjax._src.api.vmap import vmap
from pyjax._src.core.avals import is_valid_jax_type
from pyjax._src.core.trace import Tracer
from pyjax._src.flatten_util import ravel_pytree
from pyjax._src.lax import control_flow
from pyjax._src.lax.precision_ops import Precision
from pyjax._src.numpy import array_methods  # noqa: F401  (operators on arrays)
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.numpy import linalg, reductions, ufuncs
from pyjax._src.numpy.polynomial import polyval

# The Dormand-Prince 5(4) tableau: stage times, stage weights (row i builds stage i + 1
# from stages 0..i), the 5th-order solution weights and the 5th-minus-4th error weights.
_STAGE_TIMES = np.array([1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_STAGE_WEIGHTS = np.array([
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]])
_SOLUTION = np.array([35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0])
_ERROR = np.array([35 / 384 - 1951 / 21600, 0, 500 / 1113 - 22642 / 50085,
                   125 / 192 - 451 / 720, -2187 / 6784 + 12231 / 42400,
                   11 / 84 - 649 / 6300, -1 / 60])
# Weights giving the solution at the middle of a step (for the interpolating polynomial).
_MIDPOINT = np.array([6025192743 / 30085553152 / 2, 0, 51252292925 / 65400821598 / 2,
                      -2691868925 / 45128329728 / 2, 187940372067 / 1594534317056 / 2,
                      -1776094331 / 19743644256 / 2, 11237099 / 235043384 / 2])


def _weighted(weights, stages):
    return jnp.dot(jnp.asarray(weights, stages.dtype), stages, precision=Precision.HIGHEST)


def _dopri_step(f, y0, f0, t0, dt):
    """One Dormand-Prince step: (y1, f(y1), error estimate, the 7 stage slopes)."""
    def add_stage(i, stages):
        y = y0 + dt.astype(y0.dtype) * _weighted(jnp.asarray(_STAGE_WEIGHTS)[i], stages)
        t = t0 + dt * jnp.asarray(_STAGE_TIMES)[i]
        return stages.at[i + 1].set(f(y, t))

    stages = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0].set(f0)
    stages = control_flow.fori_loop(0, 6, add_stage, stages)
    y1 = dt.astype(y0.dtype) * _weighted(_SOLUTION, stages) + y0
    error = dt.astype(y0.dtype) * _weighted(_ERROR, stages)
    return y1, stages[-1], error, stages


def _interpolant(y0, y1, stages, dt):
    """Coefficients (highest power first) of the quartic through the step, in the step's
    relative time s in [0, 1]: matches y and dy/dt at both ends and y at the middle."""
    y_mid = y0 + dt.astype(y0.dtype) * _weighted(_MIDPOINT, stages)
    dy0, dy1 = dt * stages[0], dt * stages[-1]
    return jnp.stack([
        -2.0 * dy0 + 2.0 * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid,
        5.0 * dy0 - 3.0 * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid,
        -4.0 * dy0 + dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid,
        dy0,
        y0])


def _error_ratio(error, rtol, atol, y0, y1):
    """RMS of the error relative to the tolerance (real for complex y too): a step is
    accepted when it is <= 1."""
    tolerance = atol + rtol * ufuncs.maximum(ufuncs.abs(y0), ufuncs.abs(y1))
    ratio = error / tolerance.astype(error.dtype)
    return ufuncs.sqrt(reductions.mean(ufuncs.real(ratio * ufuncs.conjugate(ratio))))


def _next_step(dt, ratio, safety=0.9, max_growth=10.0, max_shrink=0.2, order=5.0):
    """The step to try next: grow after an accepted step, shrink (at most 5x) after a
    rejected one, never more than 10x either way."""
    shrink = jnp.where(ratio < 1, 1.0, max_shrink)
    factor = ufuncs.minimum(max_growth,
                            ufuncs.maximum(ratio ** (-1.0 / order) * safety, shrink))
    return jnp.where(ratio == 0, dt * max_growth, dt * factor)


def _first_step(f, t0, y0, order, rtol, atol, f0):
    """Hairer's starting step: small enough that an explicit Euler step stays accurate."""
    scale = atol + ufuncs.abs(y0) * rtol
    d0 = linalg.norm(y0 / scale.astype(y0.dtype))
    d1 = linalg.norm(f0 / scale.astype(f0.dtype))
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = f(y0 + h0.astype(y0.dtype) * f0, t0 + h0)
    d2 = linalg.norm((f1 - f0) / scale.astype(f0.dtype)) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), ufuncs.maximum(1e-6, h0 * 1e-3),
                   (0.01 / ufuncs.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return ufuncs.minimum(100.0 * h0, h1)


def _integrate(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """The solution (flat y) at every time of ts, ts[0] being the initial time."""
    def f(y, t):
        return func(y, t, *args)

    def advance_to(carry, target):
        def more(state):
            steps, _, _, t, dt, _, _ = state
            return (t < target) & (steps < mxstep) & (dt > 0)

        def step(state):
            steps, y, fy, t, dt, last_t, coeffs = state
            y1, f1, error, stages = _dopri_step(f, y, fy, t, dt)
            ratio = _error_ratio(error, rtol, atol, y, y1)
            new_dt = jnp.clip(_next_step(dt, ratio), 0.0, hmax)
            accepted = (steps + 1, y1, f1, t + dt, new_dt, t, _interpolant(y, y1, stages, dt))
            rejected = (steps + 1, y, fy, t, new_dt, last_t, coeffs)
            return tuple(jnp.where(ratio <= 1.0, a, r) for a, r in zip(accepted, rejected))

        carry = control_flow.while_loop(more, step, (0, *carry))[1:]
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return carry, polyval(coeffs, s.astype(coeffs.dtype))   # row-wise: coeffs is (5, n)

    f0 = f(y0, ts[0])
    dt = jnp.clip(_first_step(f, ts[0], y0, 4, rtol, atol, f0), 0.0, hmax)
    coeffs = jnp.stack([y0] * 5)
    _, ys = control_flow.scan(advance_to, (y0, f0, ts[0], dt, ts[0], coeffs), ts[1:])
    return jnp.concatenate([y0[None], ys])


def _integrate_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    # the differentiable solver, so that differentiating this forward pass (second-order
    # gradients) uses the adjoint rule again rather than the solver's while_loop
    ys = _integrate_with_adjoint(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _integrate_bwd(func, rtol, atol, mxstep, hmax, residuals, ys_bar):
    """The adjoint method: between consecutive output times, integrate y backwards
    together with its cotangent and the cotangents of t0 and of the args."""
    ys, ts, args = residuals

    def adjoint_dynamics(state, minus_t, *args):
        y, y_bar = state[0], state[1]
        y_dot, pullback = vjp(func, y, -minus_t, *args)
        return (-y_dot, *pullback(y_bar))

    def back_one_interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        # moving output time i (time is real, even where y is complex)
        t_bar = ufuncs.real(jnp.dot(func(ys[i], ts[i], *args), ys_bar[i]))
        start = (ys[i], y_bar, t0_bar - t_bar, args_bar)
        _, y_bar, t0_bar, args_bar = tree_util.tree_map(
            lambda x: x[1], odeint(adjoint_dynamics, start, jnp.stack([-ts[i], -ts[i - 1]]),
                                   *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax))
        return (y_bar + ys_bar[i - 1], t0_bar, args_bar), t_bar

    start = (ys_bar[-1], jnp.zeros((), ts.dtype), tree_util.tree_map(jnp.zeros_like, args))
    (y_bar, t0_bar, args_bar), ts_bar = control_flow.scan(
        back_one_interval, start, jnp.arange(ts.shape[0] - 1, 0, -1))
    return (y_bar, jnp.concatenate([t0_bar[None], ts_bar[::-1]]), *args_bar)


_integrate_with_adjoint = custom_vjp(_integrate, nondiff_argnums=(0, 1, 2, 3, 4))
_integrate_with_adjoint.defvjp(_integrate_fwd, _integrate_bwd)


def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=math.inf, hmax=math.inf):
    """Solves dy/dt = func(y, t, *args) from y(t[0]) = y0 and returns y at every time in
    t (increasing; ys[0] is y0). y0 may be a pytree (func then takes and returns that
    pytree); args are arrays or scalars. rtol/atol bound each step's error, mxstep the
    steps between outputs, hmax the step size. Differentiable in y0, t and args."""
    for arg in tree_util.tree_leaves(args):
        if not isinstance(arg, Tracer) and not is_valid_jax_type(arg):
            raise TypeError(f"odeint: the contents of *args must be arrays or scalars, got "
                            f"{arg!r:.100} of type {type(arg).__name__}. Close over other "
                            "values in func instead.")
    t = jnp.asarray(t)
    if t.ndim != 1:
        raise ValueError(f"odeint: t must be a 1-D array of times, got shape {t.shape}")
    flat_y0, unravel = ravel_pytree(y0)
    if not dtypes.issubdtype(flat_y0.dtype, np.inexact):
        flat_y0 = flat_y0.astype(dtypes.canonicalize_dtype(np.float64))

    def flat_func(y, time, *args):
        return ravel_pytree(func(unravel(y), time, *args))[0]

    converted, consts = closure_convert(flat_func, flat_y0, t[0], *args)
    # Compiled as one program, as JAX does: eager calls then round like jitted ones and
    # skip running the solver loop op by op.
    integrate = jit(functools.partial(_integrate_with_adjoint, converted, rtol, atol, mxstep,
                                      hmax))
    ys = integrate(flat_y0, t, *args, *consts)
    return vmap(unravel)(ys)
