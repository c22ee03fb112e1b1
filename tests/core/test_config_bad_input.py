"""Bad input to jax.config (unknown names, values of the wrong kind): each case raises the
exception JAX raises, with a message naming the option (see harness.assert_named_error),
and a failed update leaves the value unchanged."""
import pytest

import pyjax as jax
from harness import assert_named_error, bad_input_case as case

CASES = [
    case("config_unknown_name", AttributeError, "Unrecognized config option",
         lambda: jax.config.update("jax_foo", True)),
    case("config_bad_bool", ValueError, "invalid truth value",
         lambda: jax.config.update("jax_enable_x64", "maybe")),
    case("config_bad_enum", ValueError, r"must be one of \['allow', 'warn', 'raise'\]",
         lambda: jax.config.update("jax_numpy_rank_promotion", "foo")),
    case("config_bad_precision", ValueError, "jax_default_matmul_precision",
         lambda: jax.config.update("jax_default_matmul_precision", "foo")),
    case("config_bad_executor", ValueError, "pyjax_executor",
         lambda: jax.config.update("pyjax_executor", "tpu")),
    case("config_bool_flag_non_bool", TypeError, "takes a bool",
         lambda: jax.enable_x64(2).__enter__()),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)


def test_failed_config_update_leaves_the_value_unchanged():
    before = jax.config.jax_numpy_rank_promotion
    with pytest.raises(ValueError):
        jax.config.update("jax_numpy_rank_promotion", "sometimes")
    assert jax.config.jax_numpy_rank_promotion == before
