"""jax.random's PRNG implementations besides threefry2x32 (rbg, unsafe_rbg, philox2x32,
philox4x32, threefry4x32): key data, split, fold_in, bits and samples, with the values
JAX 0.10.2 gives (eager, jitted and vmapped)."""
import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.random as jr
from pyjax._src.random.keys import PRNGKeyArray

# impl -> key_data(key(42)), key_data(key(-3)), split(key(42), 3), fold_in(key(42), 7),
#         bits(key(42), (4,)), uniform(key(42), (3,)), gamma(key(42), 0.8, (2,))
COUNTER_BASED = {
    "philox2x32": ([3991259024], [3533272395],
                   [[2171499443], [413155073], [2864015503]], [684560128],
                   [944504651, 856563819, 3743454102, 2331796311],
                   [0.21990955, 0.19943428, 0.87159073], [0.02498553, 0.8168824]),
    "philox4x32": ([3717705800, 533567081], [2276750982, 3839892034],
                   [[2181901948, 3341115038], [969239790, 3857553174],
                    [3980413867, 158073360]], [41828760, 81464021],
                   [1373712901, 3223971023, 2207559167, 2345961807],
                   [0.31984246, 0.7506392, 0.5139873], [0.6034224, 0.05886601]),
    "threefry4x32": ([1605953687, 3689221460, 1722219033, 3178796034],
                     [492161943, 51732682, 673824916, 1362857221],
                     [[3188509147, 2083947553, 1469629592, 921930771],
                      [361144456, 1418825268, 1547191614, 2559243763],
                      [1650616655, 2909718409, 1895971994, 1205228181]],
                     [2445197787, 3874293641, 4221169969, 2984886860],
                     [2739996017, 3649338001, 3087855958, 731494402],
                     [0.63795495, 0.8496777, 0.7189474], [0.23117833, 3.0524049]),
}


@pytest.mark.parametrize("impl", sorted(COUNTER_BASED))
def test_counter_based_values(impl):
    seed42, seed_neg, split3, fold7, bits4, unif3, gamma2 = COUNTER_BASED[impl]
    k = jr.key(42, impl=impl)
    assert str(k.dtype) == {"philox2x32": "key<phx2>", "philox4x32": "key<phx4>",
                            "threefry4x32": "key<fry4>"}[impl]
    assert jr.key_impl(k) == impl
    np.testing.assert_array_equal(jr.key_data(k), np.array(seed42, np.uint32))
    np.testing.assert_array_equal(jr.key_data(jr.key(-3, impl=impl)), seed_neg)
    np.testing.assert_array_equal(jr.key_data(jr.split(k, 3)), split3)
    np.testing.assert_array_equal(jr.key_data(jr.fold_in(k, 7)), fold7)
    np.testing.assert_array_equal(jr.bits(k, (4,)), bits4)
    np.testing.assert_allclose(jr.uniform(k, (3,)), unif3, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(lambda k: jr.uniform(k, (3,)))(k), unif3, rtol=1e-6)
    np.testing.assert_allclose(jr.gamma(k, 0.8, (2,)), gamma2, rtol=1e-5)


def test_philox4x32_narrow_bits_and_vmap():
    k = jr.key(42, impl="philox4x32")
    np.testing.assert_array_equal(jr.bits(k, (3,), "uint8"), [5, 207, 255])
    np.testing.assert_array_equal(jr.bits(k, (2,), "uint16"), [12805, 58575])
    np.testing.assert_allclose(jax.vmap(lambda k: jr.uniform(k, (2,)))(jr.split(k, 2)),
                               [[0.98992026, 0.9619937], [0.7624445, 0.9010025]], rtol=1e-6)


def test_rbg_values():
    k = jr.key(0, impl="rbg")
    assert str(k.dtype) == "key<rbg>" and k.dtype.itemsize == 16 and k.nbytes == 16
    np.testing.assert_array_equal(jr.key_data(k), [0, 0, 0, 0])
    np.testing.assert_array_equal(jr.key_data(jr.split(k, 2)),
                                  [[1797259609, 2579123966, 1797259609, 2579123966],
                                   [928981903, 3453687069, 928981903, 3453687069]])
    np.testing.assert_array_equal(jr.key_data(jr.fold_in(k, 3)),
                                  [2467461003, 3840466878, 2467461003, 3840466878])
    np.testing.assert_array_equal(jr.bits(k, (3,)), [1713891541, 3781805453, 3159862348])
    np.testing.assert_allclose(jr.uniform(k, (3,)), [0.39904642, 0.8805201, 0.73571277],
                               rtol=1e-6)
    np.testing.assert_allclose(jr.gamma(k, 2.0, (3,)), [2.0929787, 1.0070164, 1.1323421],
                               rtol=1e-5)
    k1 = jr.key(1, impl="rbg")
    np.testing.assert_allclose(jax.jit(lambda k: jr.gamma(k, 0.7, (3,)))(k1),
                               [0.02377944, 1.8638248, 0.44970307], rtol=1e-5)
    np.testing.assert_allclose(jr.dirichlet(k1, jnp.array([1., 2., 3.])),
                               [0.05729963, 0.4926672, 0.4500332], rtol=1e-5)


def test_unsafe_rbg_values():
    k = jr.key(0, impl="unsafe_rbg")
    assert str(k.dtype) == "key<urbg>"
    np.testing.assert_array_equal(jr.key_data(jr.split(k, 2)),
                                  [[1713891541, 3781805453, 3159862348, 2600524760],
                                   [3614953066, 3503513258, 724076422, 3372229774]])
    np.testing.assert_array_equal(jr.key_data(jr.fold_in(k, 3)),
                                  [56543296, 1826787333, 2453521982, 2503663989])
    np.testing.assert_allclose(jr.gamma(k, 0.5, (2,)), [0.00065159, 0.11222721], rtol=1e-5)
    keys = jr.split(jr.key(1, impl="unsafe_rbg"), 3)
    np.testing.assert_allclose(jax.vmap(lambda k: jr.gamma(k, 1.5))(keys),
                               [0.52730733, 1.0763623, 2.891068], rtol=1e-5)


def test_default_impl_config_makes_raw_keys():
    with jax.default_prng_impl("rbg"):
        raw = jr.PRNGKey(1)
        np.testing.assert_array_equal(raw, [0, 1, 0, 1])
        assert jr.uniform(raw, (2,)).shape == (2,)
        assert jr.key_impl(jr.key(0)) == "rbg"
    assert jr.PRNGKey(1).shape == (2,)
    with pytest.raises(TypeError, match=r"expected key_data.shape to end with \(2,\)"):
        jr.uniform(jnp.zeros(4, jnp.uint32))
    with pytest.raises(ValueError, match="jax_default_prng_impl"):
        jax.config.update("jax_default_prng_impl", "mersenne")


def test_enable_custom_prng_gives_typed_keys():
    with jax.enable_custom_prng(True):
        k = jr.PRNGKey(0)
        assert isinstance(k, PRNGKeyArray) and str(k.dtype) == "key<fry>"
        with pytest.warns(FutureWarning, match="Raw arrays as random keys"):
            out = jr.split(jnp.zeros(2, jnp.uint32))
        assert isinstance(out, PRNGKeyArray)
    assert not isinstance(jr.PRNGKey(0), PRNGKeyArray)


def test_random_seed_offset():
    jax.config.update("jax_random_seed_offset", 3)
    try:
        np.testing.assert_array_equal(jr.key_data(jr.key(0)), [0, 3])
        np.testing.assert_array_equal(jr.PRNGKey(0), [0, 3])
        np.testing.assert_array_equal(jr.key_data(jr.key(0, impl="rbg")), [0, 3, 0, 3])
    finally:
        jax.config.update("jax_random_seed_offset", 0)


def test_debug_key_reuse_checks_are_refused():
    with jax.debug_key_reuse(False):
        pass
    with pytest.raises(NotImplementedError, match="jax_debug_key_reuse"):
        jax.config.update("jax_debug_key_reuse", True)
    assert jax.config.jax_debug_key_reuse is False
