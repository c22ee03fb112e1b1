"""Interpreters (level 3): staging to jaxprs, automatic differentiation, batching."""
