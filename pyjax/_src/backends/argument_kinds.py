"""What a compiled program's runner expects of each argument leaf of one signature (see
dispatch.kind_of), shared by dispatch's plain runner and the XLA executor's lean one, and
the NO_FIT answer both give for leaves of other kinds."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pyjax._src.array import Array


class CommittedKind(NamedTuple):
    """What a runner expects of a committed Array argument: its aval and device."""
    aval: object
    device: object

    def fits(self, x):
        return (type(x) is Array and x.committed and x._device is self.device
                and x.aval == self.aval)


class HostArrayKind(NamedTuple):
    """What a runner expects of a NumPy-array argument: exactly an ndarray of this dtype
    and shape (the program's aval has the canonical dtype)."""
    dtype: np.dtype
    shape: tuple

    def fits(self, x):
        return type(x) is np.ndarray and x.shape == self.shape and x.dtype == self.dtype


# What a runner returns for leaves that are not of its kinds (results may be any pytree,
# None included).
NO_FIT = object()
