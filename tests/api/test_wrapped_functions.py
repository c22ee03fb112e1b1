"""What the functions the transformations return say about the function they wrap:
name, qualname, module, docstring, __dict__ and __wrapped__ (which libraries follow:
equinox warns when a Module field holds a transformed Module), as JAX 0.10.2 sets them,
and transformations of callables whose attributes do not fit a function."""
import functools

import numpy as np

import pyjax as jax
import pyjax.numpy as jnp


def f(x, y):
    "Doc of f."
    return x * y


f.extra = 3

GRAD_0 = ("Gradient of f with respect to positional argument(s) 0. Takes the same arguments "
          "as f but returns the gradient, which has the same shape as the arguments at "
          "positions 0.")
JACOBIAN_0 = ("Jacobian of f with respect to positional argument(s) 0. Takes the same "
              "arguments as f but returns the jacobian of the output with respect to the "
              "arguments at positions 0.")


def test_transformed_functions_describe_the_wrapped_one():
    # (name, qualname, module, doc) as JAX 0.10.2 gives them
    expected = [
        (jax.grad(f), ("f", "f", __name__, GRAD_0)),
        (jax.grad(f, argnums=(0, 1)), ("f", "f", __name__, GRAD_0.replace("0", "(0, 1)"))),
        (jax.value_and_grad(f, 1), ("f", "f", __name__, (
            "Value and gradient of f with respect to positional argument(s) 1. Takes the "
            "same arguments as f but returns a two-element tuple where the first element is "
            "the value of f and the second element is the gradient, which has the same shape "
            "as the arguments at positions 1."))),
        (jax.jacfwd(f), ("f", "f", __name__, JACOBIAN_0)),
        (jax.jacrev(f), ("f", "f", __name__, JACOBIAN_0)),
        (jax.hessian(f), ("f", "f", __name__, JACOBIAN_0)),
        (jax.vmap(f), ("f", "f", __name__, (
            "Vectorized version of f. Takes similar arguments as f but with additional array "
            "axes over which f is mapped.\n\nOriginal documentation:\n\nDoc of f."))),
        (jax.checkpoint(f), ("f", "f", __name__, "Doc of f.")),
        (jax.jit(f), ("f", "f", __name__, "Doc of f.")),
        (jax.make_jaxpr(f), ("make_jaxpr(f)", "make_jaxpr(f)", "jax", "Doc of f.")),
    ]
    for g, (name, qualname, module, doc) in expected:
        assert (g.__name__, g.__qualname__, g.__module__, g.__doc__) == \
            (name, qualname, module, doc)
        assert g.extra == 3 and g.__annotations__ == {}
    for i, (g, _) in enumerate(expected):
        if i != 5:
            assert g.__wrapped__ is f
    assert jax.hessian(f).__wrapped__.__wrapped__ is f   # jacfwd of jacrev


def test_partial_is_named_by_its_function():
    p = functools.partial(f, 2.0)
    g = jax.grad(p)
    assert (g.__name__, g.__qualname__, g.__wrapped__) == ("f", "f", p)
    assert g.__doc__ == GRAD_0
    assert g(3.0) == 2.0


class Scale:
    "Doubles."
    __name__ = 42   # no string: a function cannot take it as its name

    def __call__(self, x):
        return 2 * x


def test_callable_whose_name_is_no_string_is_still_transformed():
    # JAX leaves the wrapper's own name and no docstring, and transforms as usual
    scale = Scale()
    vmapped = jax.vmap(scale)
    assert (vmapped.__name__, vmapped.__doc__) == ("vmap_f", None)
    np.testing.assert_array_equal(vmapped(jnp.ones(2)), [2.0, 2.0])
    for transform, name in [(jax.grad, "grad_f"), (jax.jacfwd, "jacfun"),
                            (jax.checkpoint, "fun_remat")]:
        g = transform(scale)
        assert (g.__name__, g.__doc__) == (name, None)
        assert g(jnp.float32(1.0)) == 2.0


def test_docstring_with_braces_leaves_the_rest_unset():
    # JAX formats vmap's docstring with the wrapped one inside: braces there fail the
    # formatting, which leaves the docstring (and the attributes set after it) unset
    def k(x):
        "Has {braces}."
        return x
    g = jax.vmap(k)
    assert (g.__name__, g.__doc__) == ("k", None)
