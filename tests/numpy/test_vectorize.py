"""jnp.vectorize against JAX 0.10.2: broadcasting through vmap, excluded and None
arguments, the signature's checks of inputs and outputs and their messages, and rank
promotion. Expected values and messages are JAX's, written here as literals."""
import warnings

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp

CONTEXT = "on vectorized function with excluded=frozenset() and signature="


def test_broadcasts_size_one_loop_dimensions():
    out = jnp.vectorize(lambda x, y: x + y)(jnp.ones((1, 3)), jnp.ones((2, 1)))
    assert out.shape == (2, 3)
    out = jnp.vectorize(jnp.dot, signature="(n),(n)->()")(jnp.ones((2, 3)),
                                                          jnp.ones((4, 1, 3)))
    assert out.shape == (4, 2) and out.tolist() == [[3.0, 3.0]] * 4
    pair = jnp.vectorize(lambda x: (x, 2 * x))(jnp.arange(2))
    assert isinstance(pair, tuple) and pair[1].tolist() == [0, 2]


def test_excluded_and_keyword_arguments():
    x = jnp.arange(3.0)
    assert jnp.vectorize(lambda x, n: x * n, excluded={1})(x, 3).tolist() == [0, 3, 6]
    f = jnp.vectorize(lambda x, y=1: x + y, excluded={"y"})
    assert f(x, y=10).tolist() == [10, 11, 12]
    # as JAX: keyword arguments that are not excluded are not passed to pyfunc
    assert jnp.vectorize(lambda x, y=1: x + y)(x, y=10).tolist() == [1, 2, 3]
    with pytest.raises(TypeError, match=r"^jax.numpy.vectorize can only exclude integer or "
                       r"string arguments, but excluded=\{1.5\}$"):
        jnp.vectorize(lambda x: x, excluded={1.5})
    with pytest.raises(ValueError, match=r"^excluded=\{-1\} contains negative numbers$"):
        jnp.vectorize(lambda x: x, excluded={-1})


def test_none_arguments_pass_through():
    f = jnp.vectorize(lambda x, y: x if y is None else x + y)
    assert f(jnp.arange(3), None).tolist() == [0, 1, 2]
    g = jnp.vectorize(lambda x, y: x if y is None else x + y, signature="(k),(k)->(k)")
    with pytest.raises(ValueError, match=r"^Cannot pass None at locations \{1\} with "
                       r"signature='\(k\),\(k\)->\(k\)'$"):
        g(jnp.arange(3), None)


@pytest.mark.parametrize("signature, args, exc, message", [
    ("(n,m),(m,k)->(n,k),()", ((2, 2), (2, 2)), TypeError,
     "output must be a tuple when multiple outputs are expected"),
    ("(n,m),(m,k)->(n)", ((2, 2), (2, 2)), ValueError,
     "output shape (2, 2) does not match core dimensions ('n',) " + CONTEXT +
     "'(n,m),(m,k)->(n)'"),
    ("(n,m),(m,k)->(n,n)", ((2, 3), (3, 4)), ValueError,
     "inconsistent size for core dimension 'n': 4 vs 2 " + CONTEXT + "'(n,m),(m,k)->(n,n)'"),
    ("(n,m),(m,k)->(n,k)", ((2,), (2, 2)), ValueError,
     "input with shape (2,) does not have enough dimensions for all core dimensions "
     "('n', 'm') " + CONTEXT + "'(n,m),(m,k)->(n,k)'"),
    ("(n,m),(m,k)->(n,k)", ((3, 2),), TypeError,
     "wrong number of positional arguments: expected 2, got 1 " + CONTEXT +
     "'(n,m),(m,k)->(n,k)'"),
    ("(n), (n)->()", ((3,), (3,)), ValueError, "not a valid gufunc signature: (n), (n)->()"),
])
def test_signature_errors(signature, args, exc, message):
    f = jnp.vectorize(jnp.dot, signature=signature)
    with pytest.raises(exc) as info:
        f(*(jnp.zeros(s) for s in args))
    assert str(info.value).startswith(message)


def test_wrong_number_of_outputs():
    f = jnp.vectorize(lambda *args: args, signature="(),()->(),(),()")
    with pytest.raises(TypeError, match=r"^wrong number of output arguments: expected 3, "
                       "got 2 on vectorized"):
        f(1, 2)


def test_rank_promotion_is_checked_on_loop_dimensions():
    f = jnp.vectorize(jnp.add, signature="(),()->()")
    rank2, rank1, rank0 = jnp.zeros((10, 10)), jnp.zeros(10), jnp.zeros(())
    message = (r"^operands with shapes \[\(10, 10\), \(10,\)\] require rank promotion for "
               r"jnp.vectorize function with signature \(\),\(\)->\(\).")
    with pyjax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match=message):
            f(rank2, rank1)
        assert f(rank2, rank0).shape == (10, 10)   # scalars need no promotion
    with pyjax.numpy_rank_promotion("warn"):
        with pytest.warns(UserWarning, match=message):
            f(rank2, rank1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(np.asarray(f(rank2, rank1)), np.zeros((10, 10)))
