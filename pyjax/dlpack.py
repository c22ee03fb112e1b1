"""Public jax.dlpack: arrays from other libraries through the DLPack protocol."""
import numpy as np

from pyjax._src import dtypes
from pyjax._src.numpy.functional import from_dlpack  # noqa: F401

_DLPACK_KINDS = "biufc"   # bool, integers, floats and complex have DLPack type codes


def is_supported_dtype(dtype):
    """Whether arrays of `dtype` can cross DLPack: booleans, integers, the IEEE floats and
    bfloat16, complex numbers (not the float8 and other narrow ML types)."""
    dtype = np.dtype(dtype)
    if dtype == dtypes.bfloat16:
        return True
    return dtype.kind in _DLPACK_KINDS and dtype.type.__module__ == "numpy"
