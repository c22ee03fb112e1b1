"""Public jax.extend: the API for libraries that build on JAX's internals: `core`
(Primitive, jaxpr types, trace state), `linear_util`, `random` (PRNG implementations),
`source_info_util`, and `mlir` (MLIR's Python bindings, loaded on first access: they load
jaxlib). Re-exports only."""
import importlib

from pyjax.extend import core, linear_util, random, source_info_util  # noqa: F401


def __getattr__(name):
    if name == "mlir":
        return importlib.import_module("pyjax.extend.mlir")
    raise AttributeError(f"module 'jax.extend' has no attribute {name!r}")
