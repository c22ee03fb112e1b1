"""jax._src.xla_bridge: the backends (XLA clients) made so far, which tools read to tell
whether XLA is already initialized (chex.set_n_cpu_devices must run before it is), the
client of a platform (Autodidax compiles and runs its own modules on it), and the device
queries JAX defines here."""
from pyjax._src.backends.devices import (  # noqa: F401
    buffer_runtime, default_backend, devices, local_devices, process_count, process_index,
)


def _made_backends() -> dict:
    runtime = buffer_runtime()
    client = runtime.made_client() if runtime is not None else None
    return {} if client is None else {client.platform: client}


def backends() -> dict:
    """The XLA clients by platform, made on first use (as JAX's `backends()` does)."""
    devices()
    return _made_backends()


def get_backend(platform=None):
    """The XLA client of `platform` (a name, a client: itself; None: the default one),
    made on first use; RuntimeError naming the available ones for another name (JAX's)."""
    if platform is not None and not isinstance(platform, str):
        return platform
    made = backends()
    if platform is None:
        return made[default_backend()]
    if platform not in made:
        raise RuntimeError(f"Unknown backend {platform}. Available backends are "
                           f"{sorted(made)}")
    return made[platform]


def __getattr__(name):
    # `_backends` is read live: empty until pyjax's first XLA computation.
    if name == "_backends":
        return _made_backends()
    raise AttributeError(f"module 'jax._src.xla_bridge' has no attribute {name!r}")
