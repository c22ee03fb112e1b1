"""Public jax.interpreters: the rule tables through which a library gives its own
primitives (jax.extend.core.Primitive) their differentiation, batching and lowering rules.
Re-exports only."""
from pyjax.interpreters import ad, batching, mlir, partial_eval  # noqa: F401
