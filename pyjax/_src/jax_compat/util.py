"""jax._src.util: the helpers JAX's "Writing custom interpreters" notebook imports to walk a
jaxpr (safe_map, safe_zip: map and zip refusing sequences of different lengths)."""
from pyjax._src.util import safe_zip


def safe_map(f, *args):
    """list(map(f, *args)), refusing sequences of different lengths (JAX's)."""
    return [f(*xs) for xs in safe_zip(*args)]


__all__ = ["safe_map", "safe_zip"]
