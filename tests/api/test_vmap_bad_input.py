"""Bad input to vmap (in_axes, out_axes, axis_size, sizes that disagree, arguments and
results that are not JAX types) and to collectives outside their axis, table-driven: each
case raises a named exception whose message names the problem (see
harness.assert_named_error)."""
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from harness import assert_named_error, bad_input_case as case
from pyjax import lax

x = jnp.ones((2, 3))

CASES = [
    case("vmap_size_mismatch", ValueError, "inconsistent sizes",
         lambda: jax.vmap(lambda a, b: a + b)(jnp.ones(2), jnp.ones(3))),
    case("vmap_in_axes_out_of_range", ValueError, "along axis 3",
         lambda: jax.vmap(lambda a: a, in_axes=3)(x)),
    case("vmap_in_axes_float", TypeError, "in_axes must be an int",
         lambda: jax.vmap(lambda a: a, in_axes=1.5)(x)),
    case("vmap_in_axes_length", ValueError, r"len\(in_axes\)=3",
         lambda: jax.vmap(lambda a, b: a, in_axes=(0, 0, 0))(x, x)),
    case("vmap_in_axes_tree", ValueError, "tree prefix",
         lambda: jax.vmap(lambda a: a, in_axes=({"a": 0},))(x)),
    # JAX 0.10.2's layout of the message (its api_test checks it)
    case("vmap_in_axes_tree_details", ValueError,
         r"^vmap in_axes specification must be a tree prefix of the corresponding value; \n"
         r"  Mismatch details \(1 found\):\n  pytree structure error: different types at "
         r"key path\n    vmap in_axes\[0\]\n",
         lambda: jax.vmap(lambda a: a, in_axes=([0],))(x)),
    case("vmap_out_axes_out_of_range", ValueError,
         "axis 4 is out of bounds for array of dimension 2",
         lambda: jax.vmap(lambda a: a, out_axes=4)(x)),
    case("vmap_out_axes_float", TypeError, "out_axes must be an int",
         lambda: jax.vmap(lambda a: a, out_axes=1.5)(x)),
    case("vmap_out_axes_tree", ValueError, "tree prefix",
         lambda: jax.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(x)),
    case("vmap_out_axes_none_but_mapped", ValueError, "got axis spec None but output was batched",
         lambda: jax.vmap(lambda a: a, out_axes=None)(x)),
    case("vmap_scalar_argument", ValueError, "rank should be at least 1",
         lambda: jax.vmap(lambda a: a)(1.0)),
    case("vmap_nothing_mapped", ValueError, "at least one non-None",
         lambda: jax.vmap(lambda a: a, in_axes=None)(x)),
    case("vmap_axis_size_mismatch", ValueError, "the `axis_size` argument was 5",
         lambda: jax.vmap(lambda a: a, axis_size=5)(x)),
    # JAX 0.10.2's words (its api_test checks them)
    case("vmap_nothing_to_map", ValueError,
         r"must be passed at least one argument containing an array or axis_size must be "
         r"specified, got empty \*args=\(\{\},\) and \*\*kwargs=\{\}",
         lambda: jax.vmap(lambda a: a)({})),
    case("vmap_keyword_size_mismatch", ValueError,
         r"most axes \(2 of them\) had size 2, e.g. axis 0 of argument a of type "
         r"float32\[2\];\n  \* one axis had size 1: axis 0 of kwargs\['c'\] of type "
         r"float32\[1\]",
         lambda: jax.vmap(lambda a, b, c: a)(jnp.ones(2), c=jnp.ones(1), b=jnp.ones(2))),
    case("vmap_axis_size_negative", ValueError, "non-negative",
         lambda: jax.vmap(lambda: 1.0, axis_size=-1)()),
    case("vmap_returns_string", TypeError,
         "Output from batched function 's' with type <class 'str'> is not a valid JAX type",
         lambda: jax.vmap(lambda a: "s")(x)),
    case("vmap_string_argument", TypeError, "not a valid JAX type",
         lambda: jax.vmap(lambda a: a)("abc")),
    case("vmap_not_callable", TypeError, "callable", lambda: jax.vmap(5)),
    case("collective_unbound_name", NameError, "unbound axis name: j",
         lambda: jax.vmap(lambda a: lax.psum(a, "j"), axis_name="i")(x)),
    case("collective_outside_map", NameError, "unbound axis name", lambda: lax.psum(x, "i")),
]


@pytest.mark.parametrize("fn, exc, match", CASES)
def test_bad_input_raises_a_named_error(fn, exc, match):
    assert_named_error(fn, exc, match)
