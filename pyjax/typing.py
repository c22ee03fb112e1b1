"""Public jax.typing: annotations for functions that take array-like values or dtypes."""
from typing import Any, Protocol, Union

import numpy as np

from pyjax._src.basearray import Array


class SupportsDType(Protocol):
    @property
    def dtype(self) -> np.dtype: ...


# What jnp functions accept as an array: a pyjax Array, a NumPy array or scalar, or a
# Python scalar (not lists or tuples, which JAX rejects).
ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]
