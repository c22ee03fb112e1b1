"""jax._src.dtypes: pyjax's dtype rules, and ExtendedDType, the class of dtypes NumPy has
no type for (typed PRNG keys)."""
from pyjax._src.dtypes import *  # noqa: F401,F403
from pyjax._src.dtypes import TypePromotionError, extended  # noqa: F401
from pyjax._src.random.keys import KeyTy as ExtendedDType  # noqa: F401
