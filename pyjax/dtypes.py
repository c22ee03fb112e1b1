"""jax.dtypes: pyjax's dtype helpers - canonicalisation, promotion (result_type), the
extended dtypes of typed PRNG keys, and NumPy's info types that know ml_dtypes."""
import ml_dtypes

from pyjax._src.dtypes import (  # noqa: F401
    TypePromotionError, canonicalize_dtype, extended, finfo, float0, iinfo,
    issubdtype, itemsize_bits, prng_key, result_type, scalar_type_of,
)

bfloat16 = ml_dtypes.bfloat16   # as in JAX, the scalar type (callable, usable in isinstance)
