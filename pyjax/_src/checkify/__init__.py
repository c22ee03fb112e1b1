"""jax.experimental.checkify: functionalized run-time checks (see errors.py for the error
values and the check primitive, transform.py for the transformation)."""
