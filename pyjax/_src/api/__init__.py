"""The transformation API (level 6): jit, make_jaxpr, eval_shape, grad, vmap, ..."""
