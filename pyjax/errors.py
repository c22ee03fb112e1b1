"""Public error classes, mirroring `jax.errors`."""
from pyjax._src.errors import (  # noqa: F401
    ConcretizationTypeError,
    JaxRuntimeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = ["ConcretizationTypeError", "JaxRuntimeError", "KeyReuseError",
           "NonConcreteBooleanIndexError", "TracerArrayConversionError",
           "TracerBoolConversionError", "TracerIntegerConversionError",
           "UnexpectedTracerError"]
