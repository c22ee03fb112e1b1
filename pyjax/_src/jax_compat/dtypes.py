"""jax._src.dtypes: pyjax's dtype rules, with ExtendedDType (the base class of dtypes
NumPy has no type for, such as typed PRNG keys)."""
from pyjax._src.dtypes import *  # noqa: F401,F403
from pyjax._src.dtypes import DType, ExtendedDType, TypePromotionError, extended  # noqa: F401
