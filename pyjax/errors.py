"""Public error classes, mirroring `jax.errors` (JAX 0.10.2's, but for
InconclusiveDimensionOperation: pyjax has no symbolic dimensions to compare)."""
from pyjax._src.core.jaxpr import JaxprTypeError  # noqa: F401
from pyjax._src.errors import (  # noqa: F401
    ConcretizationTypeError,
    JAXIndexError,
    JAXTypeError,
    JaxRuntimeError,
    KeyReuseError,
    NonConcreteBooleanIndexError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = ["ConcretizationTypeError", "JAXIndexError", "JAXTypeError", "JaxRuntimeError",
           "JaxprTypeError", "KeyReuseError", "NonConcreteBooleanIndexError",
           "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError"]
