"""jax._src.compiler: JAX's compile entry points, which tools patch to watch or forbid
compilation (chex.restrict_backends). pyjax compiles through pyjax._src.backends.xla and
has none of them, so importing works (chex imports this module) and reaching for an entry
point says why it is not there instead of patching something pyjax never calls."""


def __getattr__(name):
    raise AttributeError(
        f"jax._src.compiler.{name}: pyjax compiles through its own backend "
        "(pyjax._src.backends.xla), not through JAX's compiler module, so it cannot be "
        "patched here (chex.restrict_backends is not supported on pyjax).")
