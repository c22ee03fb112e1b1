"""Pickling Arrays and tracers, as in JAX 0.10.2: an unpickled Array takes the dtype JAX
uses at load time (x64 off turns a pickled float64 into float32), and pickling a traced
value raises ConcretizationTypeError from __reduce__."""
import pickle

import pytest

import pyjax as jax
import pyjax.numpy as jnp


def test_unpickling_canonicalizes_the_dtype():
    with jax.enable_x64(True):
        x = pickle.dumps(jnp.array(4.0, dtype="float64"))
        i = pickle.dumps(jnp.array(2**40, dtype="int64"))
        w = pickle.dumps(jnp.array(4.0) * 1)
    with jax.enable_x64(False):
        x, i, w = pickle.loads(x), pickle.loads(i), pickle.loads(w)
    assert (x.dtype, x.aval.dtype, float(x)) == (jnp.float32, jnp.float32, 4.0)
    assert (i.dtype, int(i)) == (jnp.int32, 0)   # wraps, as JAX's conversion does
    assert repr(w) == "Array(4., dtype=float32, weak_type=True)"
    assert pickle.loads(pickle.dumps(jnp.ones(2, jnp.bfloat16))).dtype == jnp.bfloat16


def test_pickling_a_tracer_raises():
    with pytest.raises(jax.errors.ConcretizationTypeError,
                       match="The error occurred in the __reduce__ method, which may indicate "
                       "an attempt to serialize/pickle a traced value."):
        jax.jit(pickle.dumps)(0)
