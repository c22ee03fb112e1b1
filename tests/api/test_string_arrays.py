"""Arrays of strings (NumPy's StringDType), as JAX 0.10.2 has them: device_put and
jnp.asarray place a NumPy string array on CPU devices (one, or a sharding over several)
and device_get gives it back; no computation takes them (jit, grad and eager ops refuse
them, type promotion rejects them), while vmap of the identity passes them through.
Expected messages are JAX's."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import checks_on_devices

STRINGS = np.array(["abcd", "efgh"], dtype=np.dtypes.StringDType())


def _on_cpu():
    return jax.device_put(STRINGS, jax.devices("cpu")[0])


@pytest.mark.parametrize("make", [
    lambda d: jax.device_put(STRINGS, d), lambda d: jnp.asarray(STRINGS, device=d),
    lambda d: jnp.array(STRINGS, device=d),
    lambda d: jnp.asarray(STRINGS, device=d, dtype=np.dtypes.StringDType())])
def test_placed_on_a_cpu_device_and_read_back(make):
    x = make(jax.devices("cpu")[0])
    assert isinstance(x, jax.Array)
    assert (x.shape, x.dtype, x.committed) == ((2,), np.dtypes.StringDType(), True)
    assert x.devices() == {jax.devices("cpu")[0]}
    assert repr(x) == "Array(['abcd', 'efgh'], dtype=StringDType128)"
    assert str(jax.typeof(x)) == "StringDType128[2]"
    back = jax.device_get(x.block_until_ready())
    assert back.dtype == np.dtypes.StringDType()
    assert back.tolist() == ["abcd", "efgh"] and x.tolist() == ["abcd", "efgh"]


# --- checks run with two devices ---------------------------------------------------------

def check_sharded_over_cpu_devices():
    strings = np.array([["abcd", "efgh"], ["ijkl", "mnop"]], dtype=np.dtypes.StringDType())
    mesh = jax.sharding.Mesh(np.array(jax.devices("cpu")[:2]).reshape((2, 1)), ("x", "y"))
    sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("x", "y"))
    for x in [jnp.asarray(strings, device=sharding), jax.device_put(strings, sharding)]:
        assert x.sharding == sharding
        assert jax.device_get(x.block_until_ready()).tolist() == [["abcd", "efgh"],
                                                                  ["ijkl", "mnop"]]


def check_moved_to_another_cpu_device():
    y = jax.device_put(_on_cpu(), jax.devices("cpu")[1])
    assert y.devices() == {jax.devices("cpu")[1]}
    assert y.tolist() == ["abcd", "efgh"]


test_on_two_devices = checks_on_devices(globals(), 2)


def test_without_a_device_is_an_error():
    with pytest.raises(TypeError, match="String arrays can only be sharded to CPU devices. "
                                        "Received unsupported device or sharding: None"):
        jax.device_put(STRINGS)


def test_dtype_conversions_are_errors():
    with pytest.raises(TypeError, match="Cannot make an array with dtype bfloat16 from an "
                                        "object with dtype StringDType()"):
        jnp.asarray(STRINGS, device=jax.devices("cpu")[0], dtype=jnp.bfloat16)
    with pytest.raises(TypeError, match=r"Cannot make an array with dtype StringDType\(\) "
                                        "from an object with dtype int32."):
        jnp.asarray(np.arange(2, dtype=np.int32), device=jax.devices("cpu")[0],
                    dtype=np.dtypes.StringDType())
    with pytest.raises(TypeError, match="string arrays can only be made from NumPy arrays"):
        jnp.array(_on_cpu(), device=jax.devices("cpu")[0])


@pytest.mark.parametrize("transform", [jax.jit, jax.grad])
def test_no_computation_takes_them(transform):
    with pytest.raises(TypeError, match=r"Argument '\['abcd' 'efgh'\]' of type .* is not a "
                                        "valid JAX type"):
        transform(lambda x: x)(_on_cpu())


@pytest.mark.parametrize("op", [lambda x: x[0], lambda x: x.reshape(2, 1)])
def test_eager_ops_refuse_them(op):
    with pytest.raises(TypeError, match="is not a valid JAX type"):
        op(_on_cpu())


def test_vmap_of_the_identity_passes_them_through():
    x = _on_cpu()
    out = jax.vmap(lambda v: v)(x)
    assert out.dtype == x.dtype and out.tolist() == ["abcd", "efgh"]
    with pytest.raises(ValueError, match=r"dtype=StringDType\(\) is not a valid dtype for "
                                         "JAX type promotion."):
        jax.vmap(lambda v: v + jnp.arange(2))(x)


def test_traced_types():
    x = _on_cpu()
    assert str(jax.make_jaxpr(lambda v: v)(x)) == \
        "{ lambda ; a:StringDType128[2]. let  in (a,) }"
    assert str(jax.eval_shape(lambda v: v, x)) == \
        "ShapeDtypeStruct(shape=(2,), dtype=StringDType128)"
