"""jax_array_garbage_collection_guard: an Array freed by Python's cycle collector (not by
its reference count) is reported on stderr under 'log', with where it was made; JAX
0.10.2 prints the same first line (garbage_collection_guard_test.py's checks)."""
import dataclasses
import gc

import pyjax as jax
import pyjax.numpy as jnp

MESSAGE = ("RuntimeError: `jax.Array` was deleted by the Python garbage collector instead "
           "of reference counting. Break the reference cycle that delays the deletion of "
           "this `jax.Array` to avoid hogging memory. Traceback: ")


def _cycle():
    a, b = jnp.ones((2, 2)), jnp.zeros((2, 2))
    a.next, b.next = b, a   # Arrays take attributes, as JAX's do


@dataclasses.dataclass
class _Holder:
    a: object
    ref: object = None


def test_arrays_in_a_cycle_are_reported_under_log(capsys):
    with jax.array_garbage_collection_guard("log"):
        _cycle()
        gc.collect()
    err = capsys.readouterr().err
    assert err.count(MESSAGE) == 2
    assert "(_cycle)" in err.split(MESSAGE)[1]   # where the Array was made


def test_an_array_reachable_from_a_cycle_is_reported(capsys):
    with jax.array_garbage_collection_guard("log"):
        holder = _Holder(jnp.array([1, 2, 3]))
        holder.ref = holder
        del holder
        gc.collect()
    assert capsys.readouterr().err.count(MESSAGE) == 1


def test_reference_counting_and_the_default_report_nothing(capsys):
    with jax.array_garbage_collection_guard("log"):
        a = jnp.array([1, 2, 3])
        del a
        gc.collect()
    _cycle()   # made under the default ('allow'): not watched
    gc.collect()
    assert jax.config.jax_array_garbage_collection_guard is None
    assert MESSAGE not in capsys.readouterr().err
