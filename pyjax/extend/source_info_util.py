"""Public jax.extend.source_info_util: excluding a library's files from the source
locations recorded in jaxprs. Re-exports only."""
from pyjax._src.interpreters.partial_eval import register_exclusion  # noqa: F401
