"""The Python array API standard's metadata for jax.numpy: the version it implements,
Array.__array_namespace__ and __array_namespace_info__() (devices, dtypes, capabilities)."""
from __future__ import annotations

import importlib
from types import ModuleType

import numpy as np

from pyjax._src import config, dtypes
from pyjax._src.backends import devices as devices_mod

__array_api_version__ = "2024.12"


def __array_namespace__(self, *, api_version: str | None = None) -> ModuleType:
    """The array API namespace of an Array: pyjax.numpy."""
    if api_version is not None and api_version != __array_api_version__:
        raise ValueError(f"{api_version=!r} is not available; "
                         f"available versions are: {[__array_api_version__]}")
    return importlib.import_module("pyjax.numpy")


def __array_namespace_info__() -> ArrayNamespaceInfo:
    return ArrayNamespaceInfo()


_KINDS = {
    "bool": ("bool",),
    "signed integer": ("int8", "int16", "int32", "int64"),
    "unsigned integer": ("uint8", "uint16", "uint32", "uint64"),
    "real floating": ("float32", "float64"),
    "complex floating": ("complex64", "complex128"),
}
_KINDS["integral"] = _KINDS["signed integer"] + _KINDS["unsigned integer"]
_KINDS["numeric"] = _KINDS["integral"] + _KINDS["real floating"] + _KINDS["complex floating"]
_X64_ONLY = {"int64", "uint64", "float64", "complex128"}


class ArrayNamespaceInfo:
    """What the array API's inspection functions report about pyjax.numpy."""

    _capabilities = {
        "boolean indexing": False,       # not within transformations (data-dependent shape)
        "data-dependent shapes": False,  # likewise
        "max dimensions": 64,            # XLA's limit
    }

    def capabilities(self) -> dict:
        return self._capabilities

    def default_device(self):
        # Arrays are uncommitted by default (device=None): placement is left to pyjax.
        return None

    def devices(self) -> list:
        return [None, *devices_mod.devices()]

    def default_dtypes(self, *, device=None) -> dict:
        del device  # the defaults do not depend on the device
        return {
            "real floating": np.dtype(dtypes.default_float_dtype()),
            "complex floating": np.dtype(dtypes.default_complex_dtype()),
            "integral": np.dtype(dtypes.default_int_dtype()),
            "indexing": np.dtype(dtypes.default_int_dtype()),
        }

    def dtypes(self, *, device=None, kind: str | tuple[str, ...] | None = None) -> dict:
        del device  # the supported dtypes do not depend on the device
        kinds = ("numeric", "bool") if kind is None else (
            kind if isinstance(kind, tuple) else (kind,))
        unknown = [k for k in kinds if k not in _KINDS]
        if unknown:
            raise KeyError(f"Unknown dtype kind {unknown[0]!r}: expected one of "
                             f"{sorted(_KINDS)} (or a tuple of them).")
        return {name: np.dtype(name) for k in kinds for name in _KINDS[k]
                if config.enable_x64.value or name not in _X64_ONLY}
