"""lax.ragged_all_to_all under vmap: JAX 0.10.2's docstring example, and random ragged
exchanges against a NumPy transcription of JAX's documented pseudocode. (JAX cannot run it
on CPU: XLA:CPU lacks the instruction, and JAX has no vmap rule for it.)"""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax


def _vmapped(*args):
    return jax.vmap(lambda *a: lax.ragged_all_to_all(*a, axis_name="x"), axis_name="x")(*args)


def test_jax_docstring_example():
    args = (jnp.array([[1, 2, 2], [3, 4, 0]], jnp.float32), jnp.zeros((2, 4), jnp.float32),
            jnp.array([[0, 1], [0, 1]], jnp.int32), jnp.array([[1, 2], [1, 1]], jnp.int32),
            jnp.array([[0, 0], [1, 2]], jnp.int32), jnp.array([[1, 1], [2, 1]], jnp.int32))
    expected = [[1, 3, 0, 0], [2, 2, 4, 0]]
    assert _vmapped(*args).tolist() == expected
    assert jax.jit(_vmapped)(*args).tolist() == expected


def _reference(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes):
    """JAX's documented semantics, member by member."""
    members, n = input_offsets.shape
    per = n // members
    result = output.copy()
    for r in range(members):
        for s in range(members):
            for k in range(per):
                i = r * per + k            # s's slice for r
                size = recv_sizes[r, s * per + k]
                start, at = input_offsets[s, i], output_offsets[s, i]
                result[r, at:at + size] = operand[s, start:start + size]
    return result


@pytest.mark.parametrize("seed", range(4))
def test_random_exchanges_match_the_documented_semantics(seed):
    operand, output, *offsets = _random_exchange(np.random.RandomState(seed))
    output = np.full_like(output, -1.0)   # untouched rows must stay as they were
    args = (operand, output, *offsets)
    np.testing.assert_array_equal(_vmapped(*args), _reference(*args))


def _random_exchange(rng, members=3, per=2, rows=10, width=2):
    n = members * per
    send = rng.randint(0, 3, size=(members, n)).astype(np.int32)
    input_offsets = np.zeros_like(send)
    for s in range(members):
        input_offsets[s] = np.concatenate([[0], np.cumsum(send[s])[:-1]])
    recv, output_offsets = np.zeros_like(send), np.zeros_like(send)
    for r in range(members):
        at = 0
        for s in range(members):
            for k in range(per):
                size = send[s, r * per + k]
                recv[r, s * per + k] = size
                output_offsets[s, r * per + k] = at
                at += size
    operand = rng.randn(members, rows, width).astype(np.float32)
    output = rng.randn(members, 3 * n, width).astype(np.float32)
    return operand, output, input_offsets, send, output_offsets, recv


@pytest.mark.parametrize("seed", range(3))
def test_transpose_is_the_adjoint(seed):
    """<ct, J t> == <J^T ct, t> for the exchange (linear in operand and output)."""
    rng = np.random.RandomState(seed)
    operand, output, *offsets = _random_exchange(rng)

    def f(x, y):
        return _vmapped(x, y, *offsets)
    t_x, t_y = rng.randn(*operand.shape), rng.randn(*output.shape)
    t_x, t_y = t_x.astype(np.float32), t_y.astype(np.float32)
    _, jt = jax.jvp(f, (operand, output), (t_x, t_y))
    ct = rng.randn(*output.shape).astype(np.float32)
    _, pullback = jax.vjp(f, operand, output)
    ct_x, ct_y = pullback(ct)
    lhs = float(np.sum(ct * np.asarray(jt)))
    rhs = float(np.sum(np.asarray(ct_x) * t_x) + np.sum(np.asarray(ct_y) * t_y))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)
    grad = jax.grad(lambda x: jnp.sum(f(x, output) ** 2))(operand)
    assert grad.shape == operand.shape


def test_errors():
    with pytest.raises(NameError):
        lax.ragged_all_to_all(jnp.ones(3), jnp.ones(3), jnp.zeros(1, jnp.int32),
                              jnp.zeros(1, jnp.int32), jnp.zeros(1, jnp.int32),
                              jnp.zeros(1, jnp.int32), axis_name="x")
    with pytest.raises(ValueError, match="input_offsets must be integer type"):
        _vmapped(jnp.ones((2, 3)), jnp.ones((2, 3)), jnp.zeros((2, 2)),
                 *[jnp.zeros((2, 2), jnp.int32)] * 3)
