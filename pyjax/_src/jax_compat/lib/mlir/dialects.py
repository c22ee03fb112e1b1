"""jax._src.lib.mlir.dialects: jaxlib's MLIR dialect bindings by name, `hlo` being
StableHLO's, loaded on first access as JAX's are."""
from pyjax._src.backends.mlir_bindings import bindings as _bindings

_DIALECTS = ("arith", "builtin", "cf", "chlo", "func", "gpu", "llvm", "math", "memref",
             "mhlo", "mpmd", "nvgpu", "nvvm", "scf", "sdy", "sparse_tensor", "stablehlo",
             "vector")


def __getattr__(name):
    if name == "hlo" or name in _DIALECTS:
        return _bindings("dialects." + ("stablehlo" if name == "hlo" else name))
    raise AttributeError(f"module 'jax._src.lib.mlir.dialects' has no attribute {name!r}")


def __dir__():
    return sorted(["hlo", *_DIALECTS])
