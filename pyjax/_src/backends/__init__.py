"""Backends (level 4): devices, the NumPy executor and eager trace, StableHLO printing and
the XLA adapter."""
