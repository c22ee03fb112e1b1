"""jax._src.checkify: pyjax's checkify (the public names, and `Out`, the type variable
of a checkified function's result)."""
from typing import TypeVar

from pyjax.experimental.checkify import *  # noqa: F401,F403

Out = TypeVar("Out")
