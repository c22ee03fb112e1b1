"""The FAQ's jit examples: side effects only at trace time, the three strategies for
jitting methods, and the invalid-argument error."""
from functools import partial

import numpy as np
import pytest

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import jit, tree_util


def test_impure_function_prints_only_while_tracing(capsys):
    state = {"y": 0}

    def impure_func(x):
        print("Inside:", state["y"])
        return x + state["y"]

    jitted = jit(impure_func)
    for y in range(3):
        state["y"] = y
        print("Result:", jitted(y))
    assert capsys.readouterr().out.splitlines() == [
        "Inside: 0", "Result: 0", "Result: 1", "Result: 2"]


def test_impure_function_without_jit_prints_every_call(capsys):
    state = {"y": 0}

    def impure_func(x):
        print("Inside:", state["y"])
        return x + state["y"]

    for y in range(3):
        state["y"] = y
        print("Result:", impure_func(y))
    assert capsys.readouterr().out.splitlines() == [
        "Inside: 0", "Result: 0", "Inside: 1", "Result: 2", "Inside: 2", "Result: 4"]


def test_jit_method_without_strategy_names_the_bad_argument():
    class CustomClass:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        @jit
        def calc(self, y):
            return self.x * y if self.mul else y

    with pytest.raises(TypeError, match="of type .*CustomClass.* is not a valid JAX type"):
        CustomClass(2, True).calc(3)


def test_strategy_1_helper_function():
    @partial(jit, static_argnums=0)
    def _calc(mul, x, y):
        return x * y if mul else y

    class CustomClass:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        def calc(self, y):
            return _calc(self.mul, self.x, y)

    assert str(CustomClass(2, True).calc(3)) == "6"


def test_strategy_2_static_self_returns_stale_result_after_mutation():
    class CustomClass:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        @partial(jit, static_argnums=0)
        def calc(self, y):
            return self.x * y if self.mul else y

    c = CustomClass(2, True)
    assert str(c.calc(3)) == "6"
    c.mul = False
    assert str(c.calc(3)) == "6"   # the documented trap: the cache keys on id(self)


def test_strategy_2_with_hash_and_eq_retraces_on_new_value():
    class CustomClass:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        @partial(jit, static_argnums=0)
        def calc(self, y):
            return self.x * y if self.mul else y

        def __hash__(self):
            return hash((self.x, self.mul))

        def __eq__(self, other):
            return isinstance(other, CustomClass) and (self.x, self.mul) == (other.x,
                                                                             other.mul)

    assert str(CustomClass(2, True).calc(3)) == "6"
    assert str(CustomClass(2, False).calc(3)) == "3"


def test_strategy_3_pytree_sees_mutation():
    class CustomClass:
        def __init__(self, x, mul):
            self.x, self.mul = x, mul

        @jit
        def calc(self, y):
            return self.x * y if self.mul else y

        def _tree_flatten(self):
            return (self.x,), {"mul": self.mul}

        @classmethod
        def _tree_unflatten(cls, aux_data, children):
            return cls(*children, **aux_data)

    tree_util.register_pytree_node(CustomClass, CustomClass._tree_flatten,
                                   CustomClass._tree_unflatten)
    c = CustomClass(2, True)
    assert str(c.calc(3)) == "6"
    c.mul = False
    assert str(c.calc(3)) == "3"
    c = CustomClass(jnp.array(2), True)
    assert str(c.calc(3)) == "6"


def test_static_argnums_cache_hits_and_recompiles():
    traces = []

    @partial(jit, static_argnums=(1,))
    def f(x, neg):
        traces.append(neg)
        return -x if neg else x

    assert repr(f(1, True)) == "Array(-1, dtype=int32, weak_type=True)"
    assert repr(f(1, False)) == "Array(1, dtype=int32, weak_type=True)"
    f(2, True)
    assert traces == [True, False] and f._cache_size() == 2


def test_cache_key_includes_shape_dtype_and_weak_type():
    f = jit(lambda x: x * 2)
    f(jnp.ones(3))
    f(jnp.ones(3))
    assert f._cache_size() == 1
    f(jnp.ones(4))
    f(jnp.ones(3, jnp.int32))
    f(1.0)          # weak float32
    f(jnp.float32(1.0))   # strong float32 of the same shape: a new entry
    assert f._cache_size() == 5


def test_non_hashable_static_argument_is_a_clear_error():
    f = jit(lambda x, n: x, static_argnums=1)
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f(1.0, np.ones(3))


def test_static_argnames_and_keyword_arguments():
    @partial(jit, static_argnames="n")
    def f(x, n):
        return x * n

    assert float(f(2.0, n=3)) == 6.0
    assert float(f(x=2.0, n=4)) == 8.0


def test_disable_jit_runs_python_every_time(capsys):
    @jit
    def f(x):
        print("called")
        return x + 1

    with jax.disable_jit():
        f(1)
        f(1)
    assert capsys.readouterr().out.count("called") == 2


def test_pytrees_in_and_out_of_jit():
    @jit
    def f(params, x):
        return {"y": params["w"] * x + params["b"], "aux": (x, None)}

    out = f({"w": jnp.ones(3), "b": 1.0}, 2.0)
    assert set(out) == {"y", "aux"} and out["aux"][1] is None
    np.testing.assert_allclose(out["y"], [3.0, 3.0, 3.0])


def test_explain_cache_misses_logs_the_changed_argument(caplog):
    f = jit(lambda x: x + 1)
    with jax.config._config._flags["jax_explain_cache_misses"](True):
        f(jnp.ones(3))
        f(jnp.ones(4))
    text = caplog.text
    assert "first call" in text
    assert "different input types:\n  * at x, now f32[4] and before f32[3]" in text
