"""jax.experimental.random: a PRNG with implicitly updated state, like NumPy's
default_rng: a typed base key and a counter held in a jax.Ref. Each draw folds the
counter into the base key and increments it, so it works under jit (the counter ref is
read and written through the trace) as JAX's does. Imports random.keys and
distributions, and state.refs."""
from __future__ import annotations

import dataclasses
import operator

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.basearray import Array
from pyjax._src.core.avals import AbstractRef
from pyjax._src.core.trace import Trace, Tracer, current_trace
from pyjax._src.numpy import lax_numpy as jnp
from pyjax._src.random import distributions, keys
from pyjax._src.state import refs


def _canonicalize_size(size, *args) -> tuple[int, ...]:
    if size is None:
        return np.broadcast_shapes(*(np.shape(arg) for arg in args))
    if isinstance(size, (int, np.integer)):
        return (operator.index(size),)
    return tuple(map(operator.index, size))


@tree_util.register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class StatefulPRNG:
    """Stateful JAX random generator (make one with `stateful_rng(seed)`): a typed PRNG
    key `_base_key` and a scalar integer `_counter` held in a jax.Ref."""

    _base_key: Array
    _counter: refs.Ref

    def __post_init__(self):
        if self._counter is tree_util.SENTINEL:   # rebuilt over placeholders (vmap axes)
            return
        if not (isinstance(self._base_key, (Array, Tracer))
                and dtypes.issubdtype(self._base_key.dtype, dtypes.prng_key)):
            raise ValueError(f"Expected base_key to be a typed PRNG key; got {self._base_key}")
        if not (isinstance(self._counter, refs.Ref) or (
                isinstance(self._counter, Tracer)
                and isinstance(self._counter.aval, AbstractRef))):
            raise ValueError(f"Expected counter to be a scalar integer ref; got "
                             f"{self._counter}")

    def key(self, shape=()):
        """A new independent PRNG key (or `shape` of them), updating the state."""
        if self._base_key.shape:
            raise ValueError("cannot operate on split stateful generator")
        key = keys.fold_in(self._base_key, refs.get(self._counter))
        refs.addupdate(self._counter, ..., 1)
        shape = _canonicalize_size(shape)
        return keys.split(key, shape) if shape else key

    def random(self, size=None, dtype=float):
        """Random floats in the half-open interval [0.0, 1.0)."""
        return distributions.uniform(self.key(), shape=_canonicalize_size(size), dtype=dtype)

    def uniform(self, low=0, high=1, size=None, *, dtype=float):
        """Uniformly distributed values in [low, high)."""
        return distributions.uniform(self.key(), _canonicalize_size(size, low, high),
                                     minval=low, maxval=high, dtype=dtype)

    def normal(self, loc=0, scale=1, size=None, *, dtype=float):
        """Normally distributed values of mean `loc` and standard deviation `scale`."""
        norm = distributions.normal(self.key(), _canonicalize_size(size, loc, scale), dtype)
        return (jnp.asarray(loc) + jnp.asarray(scale) * norm).astype(dtype)

    def integers(self, low, high=None, size=None, *, dtype=int):
        """Integers in [low, high) (in [0, low) when `high` is None)."""
        if high is None:
            low, high = 0, low
        return distributions.randint(self.key(), _canonicalize_size(size, low, high),
                                     minval=low, maxval=high, dtype=dtype)

    def split(self, num):
        """One generator of split state (keys of shape `num`), for jax.vmap."""
        return StatefulPRNG(self.key(num), refs.new_ref(jnp.zeros(num, dtype=int)))

    def spawn(self, n_children: int):
        """A list of `n_children` independent generators."""
        return [self.__class__(key, refs.new_ref(0)) for key in self.key(n_children)]


def stateful_rng(seed=None, *, impl=None) -> StatefulPRNG:
    """A StatefulPRNG seeded with `seed` (at top level, NumPy's entropy when None)."""
    if seed is None:
        if current_trace() is not Trace.root:
            raise TypeError(
                "When used within transformed code, jax.experimental.random.stateful_rng()"
                " requires an explicit seed to be set.")
        entropy = np.random.SeedSequence().entropy
        seed = np.int64(int(entropy) & np.iinfo(np.int64).max)
    return StatefulPRNG(keys.key(seed, impl=impl), refs.new_ref(0))
