"""Public jax.image: resize and scale_and_translate. Re-exports only; the code lives in
pyjax._src.image."""
from pyjax._src.image import ResizeMethod, resize, scale_and_translate  # noqa: F401
