"""Public jax.experimental.buffer_callback: buffer_callback, Buffer, ExecutionContext,
ExecutionStage. Re-exports only."""
from pyjax._src.lax.buffer_callback import (  # noqa: F401
    Buffer, ExecutionContext, ExecutionStage, buffer_callback)
