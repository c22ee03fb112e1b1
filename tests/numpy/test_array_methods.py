"""Array methods that mirror jnp functions, and the Array's buffer queries (values observed
from JAX 0.10.2)."""
import collections.abc

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_methods_delegate_to_jnp_functions():
    a = jnp.arange(6.0).reshape(2, 3)
    assert a.sort(axis=0, descending=True).tolist() == [[3, 4, 5], [0, 1, 2]]
    assert a.argsort().tolist() == [[0, 1, 2], [0, 1, 2]]
    assert a.argpartition(1).shape == (2, 3)
    assert int(jnp.arange(5.0).searchsorted(2.5)) == 3
    assert a.take(jnp.array([0, 4])).tolist() == [0.0, 4.0]
    assert jnp.arange(3).nonzero()[0].tolist() == [1, 2]
    assert a.repeat(2, axis=0).shape == (4, 3)
    assert a.diagonal().tolist() == [0.0, 4.0] and float(a.trace()) == 4.0
    assert a.compress(jnp.array([True, False]), axis=0).tolist() == [[0.0, 1.0, 2.0]]
    assert jnp.array([0, 1]).choose([jnp.ones(2), jnp.zeros(2)]).tolist() == [1.0, 0.0]
    assert a.clone().tolist() == a.tolist()
    traced = jax.jit(lambda x: x.sort().argsort().take(jnp.array([0])))(jnp.array([3., 1., 2.]))
    assert traced.tolist() == [0]
    assert jax.vmap(lambda x: x.trace())(jnp.ones((2, 3, 3))).tolist() == [3.0, 3.0]


def test_staged_tracers_have_every_array_method():
    # a jit tracer's own attributes do not hide the Array's methods (var)
    x = jnp.arange(4.0)
    assert float(jax.jit(lambda x: x.var())(x)) == 1.25
    assert jax.jit(lambda x: x.var(-1, keepdims=True))(x).tolist() == [1.25]
    assert jax.jit(jax.grad(lambda x: x.var()))(x).tolist() == [-0.75, -0.25, 0.25, 0.75]


def test_buffer_queries():
    a = jnp.arange(6.0).reshape(2, 3)
    assert a.is_ready() and a.on_device_size_in_bytes() == 24
    assert a.is_fully_addressable and a.is_fully_replicated
    assert a.tobytes()[:8] == b"\x00\x00\x00\x00\x00\x00\x80?"
    assert a.to_device(jax.devices()[0]).committed
    with pytest.raises(NotImplementedError, match="arr.flatten"):
        _ = a.flat
    a.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        a.is_ready()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2,3\]"):
        repr(a)   # as JAX's: the repr reads the deleted value
    assert a.shape == (2, 3) and a.dtype == np.float32   # its type stays


def test_view_keeps_the_byte_of_a_bool_made_from_other_bytes(executor):
    # NumPy's bool view of byte 96 is a non-canonical True; JAX (XLA) reads it back as 96
    # through view(uint8/int8) and astype(uint8), and as 1 through other conversions.
    a = jnp.array(np.array([96, 1, 0], np.uint8).view(np.bool_))
    for f in (lambda v: v.view(np.int8), lambda v: v.view(np.uint8),
              lambda v: v.astype(np.uint8)):
        assert f(a).tolist() == [96, 1, 0]
        assert jax.jit(f)(a).tolist() == [96, 1, 0]
    assert a.astype(np.int8).tolist() == [1, 1, 0]
    assert a.astype(np.float32).tolist() == [1.0, 1.0, 0.0]


def test_arrays_and_tracers_are_not_hashable():
    # JAX 0.10.2: __hash__ is None, so hash() raises and they are not Hashable
    x = jnp.ones(2)
    assert not isinstance(x, collections.abc.Hashable)
    with pytest.raises(TypeError, match="unhashable"):
        hash(x)
    seen = []
    jax.jit(lambda v: seen.append(isinstance(v, collections.abc.Hashable)) or v)(x)
    assert seen == [False]


def test_reshape_takes_any_sequence():
    class Dims:    # the old sequence protocol only: no __iter__
        def __len__(self):
            return 2

        def __getitem__(self, i):
            if i >= 2:
                raise IndexError(i)
            return (2, 3)[i]

    x = jnp.arange(6)
    assert x.reshape(Dims()).shape == (2, 3)
    assert jnp.reshape(x, Dims()).shape == (2, 3)
    assert x.reshape(6).shape == (6,) and x.reshape(range(2, 4)).shape == (2, 3)


@pytest.mark.parametrize("jit", [False, True])
def test_complex_astype_bool_is_nonzero(jit):
    # JAX 0.10.2: true where either part is nonzero (lax.convert_element_type alone takes
    # the real part: [F, F, F, T, F, T, F])
    z = jnp.array([0j, 1j, complex(0, np.nan), complex(np.nan, 0), complex(-0.0, -0.0), 2 + 0j,
                   complex(0, np.inf)], jnp.complex64)
    f = jax.jit(lambda z: z.astype(bool)) if jit else (lambda z: jnp.astype(z, bool))
    assert f(z).tolist() == [False, True, True, True, False, True, True]
    assert jax.lax.convert_element_type(z, bool).tolist() == [False, False, False, True, False,
                                                              True, False]
