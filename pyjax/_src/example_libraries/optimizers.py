"""jax.example_libraries.optimizers: optimizers as (init_fn, update_fn, get_params) triples.

An optimizer is written for a single array (its state is any pytree built from that array);
the `optimizer` decorator lifts it to pytrees of parameters by running it on every leaf. The
lifted state is an OptimizerState pytree, so it passes in and out of jit and the other
transformations."""
from __future__ import annotations

import functools
from collections import namedtuple
from typing import Any, Callable, NamedTuple

import numpy as np

from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.tree_util import (
    register_pytree_node, tree_flatten, tree_leaves, tree_map, tree_unflatten,
)

Step = int
Schedule = Callable[[Step], float]
Params = Any
State = Any
Updates = Params
InitFn = Callable[[Params], "OptimizerState"]
UpdateFn = Callable[[Step, Updates, "OptimizerState"], "OptimizerState"]
ParamsFn = Callable[["OptimizerState"], Params]

# packed_state: one flattened per-leaf state per parameter leaf; tree_def: the structure of
# the parameters; subtree_defs: the structure of each leaf's state.
OptimizerState = namedtuple("OptimizerState", ["packed_state", "tree_def", "subtree_defs"])
register_pytree_node(
    OptimizerState,
    lambda state: ((state.packed_state,), (state.tree_def, state.subtree_defs)),
    lambda aux, children: OptimizerState(children[0], *aux))


class Optimizer(NamedTuple):
    init_fn: InitFn
    update_fn: UpdateFn
    params_fn: ParamsFn


def _flatten_each(trees):
    flat = [tree_flatten(tree) for tree in trees]
    return tuple(leaves for leaves, _ in flat), tuple(treedef for _, treedef in flat)


def optimizer(opt_maker):
    """Decorator: turns a maker of single-array (init, update, get_params) functions into a
    maker of an Optimizer that works on pytrees of arrays."""

    @functools.wraps(opt_maker)
    def tree_opt_maker(*args, **kwargs):
        init, update, get_params = opt_maker(*args, **kwargs)

        @functools.wraps(init)
        def tree_init(x0_tree):
            x0_flat, tree = tree_flatten(x0_tree)
            states_flat, subtrees = _flatten_each([init(x0) for x0 in x0_flat])
            return OptimizerState(states_flat, tree, subtrees)

        @functools.wraps(update)
        def tree_update(i, grad_tree, opt_state):
            states_flat, tree, subtrees = opt_state
            grad_flat, grad_tree_def = tree_flatten(grad_tree)
            if grad_tree_def != tree:
                raise TypeError("optimizer update function was passed a gradient tree that "
                                "did not match the parameter tree structure with which it "
                                f"was initialized: parameter tree {tree} and grad tree "
                                f"{grad_tree_def}.")
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, states_flat)]
            new_states = [update(i, g, state) for g, state in zip(grad_flat, states)]
            new_states_flat, new_subtrees = _flatten_each(new_states)
            for subtree, new_subtree in zip(subtrees, new_subtrees):
                if new_subtree != subtree:
                    raise TypeError("optimizer update function produced an output structure "
                                    "that did not match its input structure: input "
                                    f"{subtree} and output {new_subtree}.")
            return OptimizerState(new_states_flat, tree, subtrees)

        @functools.wraps(get_params)
        def tree_get_params(opt_state):
            states_flat, tree, subtrees = opt_state
            states = [tree_unflatten(s, leaves) for s, leaves in zip(subtrees, states_flat)]
            return tree_unflatten(tree, [get_params(state) for state in states])

        return Optimizer(tree_init, tree_update, tree_get_params)

    return tree_opt_maker


def _first(state):
    return state[0]


@optimizer
def sgd(step_size):
    """Stochastic gradient descent: x <- x - step_size(i) * g."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0

    def update(i, g, x):
        return x - step_size(i) * g

    def get_params(x):
        return x

    return init, update, get_params


def _with_velocity(step_size, mass, look_ahead):
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0)

    def update(i, g, state):
        x, velocity = state
        velocity = mass * velocity + g
        direction = mass * velocity + g if look_ahead else velocity
        return x - step_size(i) * direction, velocity

    return init, update, _first


@optimizer
def momentum(step_size, mass):
    """Heavy-ball momentum: v <- mass * v + g; x <- x - step_size(i) * v."""
    return _with_velocity(step_size, mass, look_ahead=False)


@optimizer
def nesterov(step_size, mass):
    """Nesterov momentum: like momentum, but steps along mass * v + g."""
    return _with_velocity(step_size, mass, look_ahead=True)


@optimizer
def adagrad(step_size, momentum=0.9):
    """Adagrad (steps scaled by the root of the summed squared gradients) with momentum."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0), lnp.zeros_like(x0)

    def update(i, g, state):
        x, g_sq, m = state
        g_sq = g_sq + uf.square(g)
        g_sq_inv_sqrt = lnp.where(g_sq > 0, 1. / uf.sqrt(g_sq), 0.0)
        m = (1. - momentum) * (g * g_sq_inv_sqrt) + momentum * m
        return x - step_size(i) * m, g_sq, m

    return init, update, _first


@optimizer
def rmsprop(step_size, gamma=0.9, eps=1e-8):
    """RMSProp: steps scaled by the root of a moving average of squared gradients."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad = state
        avg_sq_grad = avg_sq_grad * gamma + uf.square(g) * (1. - gamma)
        return x - step_size(i) * g / uf.sqrt(avg_sq_grad + eps), avg_sq_grad

    return init, update, _first


@optimizer
def rmsprop_momentum(step_size, gamma=0.9, eps=1e-8, momentum=0.9):
    """RMSProp whose scaled steps accumulate into a momentum term."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0), lnp.zeros_like(x0)

    def update(i, g, state):
        x, avg_sq_grad, mom = state
        avg_sq_grad = avg_sq_grad * gamma + uf.square(g) * (1. - gamma)
        mom = momentum * mom + step_size(i) * g / uf.sqrt(avg_sq_grad + eps)
        return x - mom, avg_sq_grad, mom

    return init, update, _first


@optimizer
def adam(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """Adam: bias-corrected moving averages of the gradient and its square."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0), lnp.zeros_like(x0)

    def update(i, g, state):
        x, m, v = state
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * uf.square(g) + b2 * v
        m_hat = m / (1 - lnp.asarray(b1, m.dtype) ** (i + 1))
        v_hat = v / (1 - lnp.asarray(b2, m.dtype) ** (i + 1))
        return x - step_size(i) * m_hat / (uf.sqrt(v_hat) + eps), m, v

    return init, update, _first


@optimizer
def adamax(step_size, b1=0.9, b2=0.999, eps=1e-8):
    """AdaMax: Adam with the infinity norm in place of the squared-gradient average."""
    step_size = make_schedule(step_size)

    def init(x0):
        return x0, lnp.zeros_like(x0), lnp.zeros_like(x0)

    def update(i, g, state):
        x, m, u = state
        m = (1 - b1) * g + b1 * m
        u = uf.maximum(b2 * u, uf.abs(g))
        return x - (step_size(i) / (1 - b1 ** (i + 1))) * m / (u + eps), m, u

    return init, update, _first


def _broadcast_along(ndim, v, axis):
    """View the 1-D array v as an ndim-dimensional one that varies along `axis` only."""
    index = [None] * ndim
    index[axis] = slice(None)
    return v[tuple(index)]


@optimizer
def sm3(step_size, momentum=0.9):
    """SM3: memory-efficient adaptive steps that keep one accumulator vector per axis."""
    step_size = make_schedule(step_size)

    def init(x0):
        # A scalar is handled as a 1-vector; the state keeps the shape to give it back.
        x_shape = lnp.shape(x0)
        x0 = lnp.atleast_1d(x0)
        accumulators = [lnp.zeros(size, dtype=x0.dtype) for size in x0.shape]
        return x0, lnp.zeros_like(x0), accumulators, x_shape

    def update(i, g, state):
        x, m, accumulators, x_shape = state
        g = lnp.atleast_1d(g)
        broadcast = [_broadcast_along(g.ndim, v, axis) for axis, v in enumerate(accumulators)]
        accum = functools.reduce(uf.minimum, broadcast) + uf.square(g)
        accum_inv_sqrt = lnp.where(accum > 0, 1. / uf.sqrt(accum), 0)
        m = (1. - momentum) * (g * accum_inv_sqrt) + momentum * m
        x = x - step_size(i) * m
        accumulators = [red.max(accum, axis=tuple(a for a in range(x.ndim) if a != axis))
                        for axis in range(x.ndim)]
        return x, m, accumulators, x_shape

    def get_params(state):
        x, _, _, x_shape = state
        # Only a scalar changed shape. x_shape's entries are leaves (traced under jit), so
        # only their number is used.
        return x if len(x_shape) else lnp.reshape(x, ())

    return init, update, get_params


# --- learning-rate schedules ------------------------------------------------------------------

def constant(step_size) -> Schedule:
    def schedule(i):
        return step_size
    return schedule


def exponential_decay(step_size, decay_steps, decay_rate):
    def schedule(i):
        return step_size * decay_rate ** (i / decay_steps)
    return schedule


def inverse_time_decay(step_size, decay_steps, decay_rate, staircase=False):
    def schedule(i):
        steps = uf.floor(i / decay_steps) if staircase else i / decay_steps
        return step_size / (1 + decay_rate * steps)
    return schedule


def polynomial_decay(step_size, decay_steps, final_step_size, power=1.0):
    def schedule(step_num):
        step_num = uf.minimum(step_num, decay_steps)
        step_mult = (1 - step_num / decay_steps) ** power
        return step_mult * (step_size - final_step_size) + final_step_size
    return schedule


def piecewise_constant(boundaries, values):
    """values[k] for steps in (boundaries[k-1], boundaries[k]]."""
    boundaries, values = lnp.array(boundaries), lnp.array(values)
    if not boundaries.ndim == values.ndim == 1:
        raise ValueError("boundaries and values must be sequences")
    if boundaries.shape[0] != values.shape[0] - 1:
        raise ValueError("boundaries length must be one shorter than values length")

    def schedule(i):
        return values[red.sum(i > boundaries)]
    return schedule


def make_schedule(scalar_or_schedule):
    """A schedule as is; a scalar step size as a constant schedule."""
    if callable(scalar_or_schedule):
        return scalar_or_schedule
    if np.ndim(scalar_or_schedule) == 0:
        return constant(scalar_or_schedule)
    raise TypeError(type(scalar_or_schedule))


# --- utilities --------------------------------------------------------------------------------

def l2_norm(tree):
    """The l2 norm of all the leaves of a pytree taken together as one vector."""
    leaves = tree_leaves(tree)
    return uf.sqrt(sum(lnp.vdot(x, x) for x in leaves))


def clip_grads(grad_tree, max_norm):
    """Scale the gradients down so that their joint l2 norm is at most max_norm."""
    norm = l2_norm(grad_tree)

    def normalize(g):
        return lnp.where(norm < max_norm, g, g * (max_norm / norm))
    return tree_map(normalize, grad_tree)


class JoinPoint:
    """Marks where a parameter leaf's own state tree joins the parameter tree (a leaf of
    the tree that unpack_optimizer_state returns)."""

    def __init__(self, subtree):
        self.subtree = subtree

    def __iter__(self):   # lets `x, *rest = join_point` unpack the leaf's state
        yield from self.subtree


def unpack_optimizer_state(opt_state):
    """OptimizerState -> the parameter tree with each leaf replaced by a JoinPoint holding
    that leaf's state (a plain pytree, e.g. for pickling)."""
    states_flat, tree_def, subtree_defs = opt_state
    subtrees = [tree_unflatten(s, leaves) for s, leaves in zip(subtree_defs, states_flat)]
    return tree_unflatten(tree_def, [JoinPoint(subtree) for subtree in subtrees])


def pack_optimizer_state(marked_pytree):
    """Inverse of unpack_optimizer_state."""
    join_points, tree_def = tree_flatten(marked_pytree,
                                         is_leaf=lambda x: isinstance(x, JoinPoint))
    if not all(isinstance(j, JoinPoint) for j in join_points):
        raise TypeError("pack_optimizer_state expects a tree whose leaves are JoinPoints "
                        "(as unpack_optimizer_state returns)")
    states_flat, subtree_defs = _flatten_each([j.subtree for j in join_points])
    return OptimizerState(states_flat, tree_def, subtree_defs)
