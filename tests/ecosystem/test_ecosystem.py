"""Libraries written for JAX (optax, flax, equinox, numpyro, blackjax, chex, einops,
jaxtyping), pinned in pyproject's `ecosystem` group and installed by ./dev with
--no-deps, run unmodified on pyjax through pyjax.alias_jax(). Each program
(tests/ecosystem/ecosystem_programs.py) is compared with what it gave on JAX 0.10.2 with the same
library versions. A test skips, saying why, when its library is not installed."""
import importlib.util

import ecosystem_programs as programs
import numpy as np
import pytest

import pyjax


def _needs(*modules):
    """Skips unless each library module is installed, then aliases jax to pyjax and
    imports them (an import failure, e.g. a jax name pyjax lacks, fails the test)."""
    for name in modules:
        if importlib.util.find_spec(name.split(".")[0]) is None:
            pytest.skip(f"{name} is not installed (./dev installs the `ecosystem` group)")
    pyjax.alias_jax()
    for name in modules:
        importlib.import_module(name)


def _close(got, want, rtol):
    assert got.keys() == want.keys()
    for key in want:
        floats = want[key] if isinstance(want[key], list) else [want[key]]
        if all(isinstance(v, float) for v in floats):
            np.testing.assert_allclose(got[key], want[key], rtol=rtol, err_msg=key)
        else:
            assert got[key] == want[key], key


def test_optax_training_matches_jax():
    _needs("optax")
    _close(programs.optax_mlp_training(),
           {"first_loss": 0.434002161026001, "last_loss": 0.2805929183959961, "leaves": 16},
           rtol=1e-5)


def test_equinox_training_and_primitives_match_jax():
    _needs("equinox", "jaxtyping")
    _close(programs.equinox_mlp_training(),
           {"last_loss": 0.4073903560638428, "error_if_raised": "EquinoxRuntimeError",
            "unvmap_any": [True, True]}, rtol=1e-5)


def test_numpyro_nuts_and_svi_match_jax():
    _needs("numpyro")
    _close(programs.numpyro_regression(),
           {"nuts_mean_a": 0.5000089406967163, "nuts_mean_b": 1.93393874168396,
            "svi_last_loss": 14.182376861572266}, rtol=1e-4)


def test_chex_assertions_match_jax():
    _needs("chex")
    _close(programs.chex_assertions(),
           {"jit_sum": 24.0, "shape_error": True, "dataclass_shapes": [[3, 4], [4]],
            "chexify_sum": 12.0, "finite_error": True}, rtol=1e-6)


def test_einops_and_jaxtyping_match_jax():
    _needs("einops", "jaxtyping")
    _close(programs.einops_and_jaxtyping(),
           {"rearranged_shape": [4, 3, 2], "rearranged_sum": 39.0,
            "reduced": [60.0, 92.0, 124.0], "jaxtyping": [True, False, False, True]},
           rtol=1e-6)


def test_flax_linen_training_matches_jax():
    _needs("flax.linen", "optax")
    _close(programs.flax_linen_training(), {"last_loss": 0.36548104882240295, "leaves": 6},
           rtol=1e-5)


def test_flax_nnx_training_matches_jax():
    _needs("flax.nnx", "optax")
    _close(programs.flax_nnx_training(), {"last_loss": 0.38161465525627136}, rtol=1e-5)


def test_blackjax_nuts_matches_jax():
    _needs("blackjax")
    _close(programs.blackjax_nuts(), {"mean": [0.8436570763587952, -2.0378780364990234]},
           rtol=1e-5)
