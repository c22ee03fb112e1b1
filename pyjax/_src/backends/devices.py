"""Devices known to pyjax. Without XLA there is one host CPU device; the XLA adapter
registers its own devices here when it starts."""
from __future__ import annotations


class HostCpuDevice:
    """The CPU device of the NumPy executor (used when XLA is not in play)."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0

    def __repr__(self):
        return "CpuDevice(id=0)"


HOST = HostCpuDevice()
