"""Mutable array references (jax.Ref): see refs.py."""
