"""Public configuration, mirroring `jax.config`: `config.update("jax_enable_x64", True)`,
`config.jax_enable_x64`, and context managers for individual flags."""
from pyjax._src.config import config as _config

update = _config.update
read = _config.read


def __getattr__(name):
    return getattr(_config, name)
