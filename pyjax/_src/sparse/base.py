"""JAXSparse, the base class of jax.experimental.sparse's array formats (BCOO, BCSR, COO,
CSR, CSC): shape and its derived sizes, `T`, `block_until_ready`, the repr, and the
operators a format that lacks them refuses with NotImplementedError (as JAX's)."""
from __future__ import annotations

import abc
import math

from pyjax._src.core.trace import Tracer


class JAXSparse(abc.ABC):
    """Base class for high-level JAX sparse objects."""

    __hash__ = None  # type: ignore[assignment]

    @property
    @abc.abstractmethod
    def dtype(self): ...

    @property
    @abc.abstractmethod
    def nse(self): ...

    def __len__(self):
        return self.shape[0]

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __init__(self, args, *, shape):
        self.shape = tuple(int(d) for d in shape)

    def __repr__(self):
        name = self.__class__.__name__
        try:
            nse, dtype, shape = self.nse, self.dtype, list(self.shape)
        except Exception:
            repr_ = f"{name}(<invalid>)"
        else:
            repr_ = f"{name}({dtype}{shape}, nse={nse})"
        if isinstance(self.data, Tracer):
            repr_ = f"{type(self.data).__name__}[{repr_}]"
        return repr_

    @abc.abstractmethod
    def tree_flatten(self): ...

    @classmethod
    @abc.abstractmethod
    def tree_unflatten(cls, aux_data, children): ...

    @abc.abstractmethod
    def transpose(self, axes=None): ...

    @abc.abstractmethod
    def todense(self): ...

    @property
    def T(self):
        return self.transpose()

    def block_until_ready(self):
        for arg in self.tree_flatten()[0]:
            arg.block_until_ready()
        return self

    def _unsupported(self, name):
        raise NotImplementedError(f"{self.__class__}.{name}")

    def sum(self, *args, **kwargs):
        self._unsupported("sum")

    def __neg__(self):
        self._unsupported("__neg__")

    def __pos__(self):
        self._unsupported("__pos__")

    def __matmul__(self, other):
        self._unsupported("__matmul__")

    def __rmatmul__(self, other):
        self._unsupported("__rmatmul__")

    def __mul__(self, other):
        self._unsupported("__mul__")

    def __rmul__(self, other):
        self._unsupported("__rmul__")

    def __add__(self, other):
        self._unsupported("__add__")

    def __radd__(self, other):
        self._unsupported("__radd__")

    def __sub__(self, other):
        self._unsupported("__sub__")

    def __rsub__(self, other):
        self._unsupported("__rsub__")

    def __getitem__(self, item):
        self._unsupported("__getitem__")
