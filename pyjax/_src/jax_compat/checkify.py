"""jax._src.checkify: pyjax's checkify (the public names, and `Out`, the type variable
of a checkified function's result)."""
from typing import TypeVar

from pyjax._src.checkify.errors import (  # noqa: F401
    DivisionByZeroError, Error, ErrorCategory, FailedCheckError, JaxException,
    JaxRuntimeError, NaNError, OOBError, check, check_error, debug_check, init_error)
from pyjax._src.checkify.transform import (  # noqa: F401
    all_checks, automatic_checks, checkify, div_checks, float_checks, index_checks,
    nan_checks, user_checks)

Out = TypeVar("Out")
