"""Array memory layouts as plain data (jax.experimental.layout): `Layout`, the order of an
array's dimensions in memory (major to minor), and `Format`, a layout with the sharding it
applies to. pyjax keeps XLA's default layouts; these describe them to libraries that pass
formats around (flax's sharding helpers). Imports nothing from pyjax."""
from __future__ import annotations


class AutoLayout:
    """`Layout.AUTO`: let the compiler choose."""

    def __repr__(self):
        return "AUTO"


class Layout:
    """The order of an array's dimensions in memory, most major first (row-major for a
    2-D array is (0, 1)), and the tiling, if any."""

    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
    AUTO = AutoLayout()

    def __init__(self, major_to_minor, tiling=(), sub_byte_element_size_in_bits=0):
        self.major_to_minor = tuple(int(d) for d in major_to_minor)
        if sorted(self.major_to_minor) != list(range(len(self.major_to_minor))):
            raise ValueError(f"Layout: major_to_minor must be a permutation of the array's "
                             f"dimensions, got {major_to_minor}")
        self.tiling = tuple(tuple(t) for t in tiling)
        self.sub_byte_element_size_in_bits = int(sub_byte_element_size_in_bits)

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling})"


class Format:
    """A layout (None: the default, Layout.AUTO, or a Layout) with a sharding (None or a
    jax.sharding.Sharding; required when the layout is concrete)."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(f"Format: a sharding is required with the concrete layout "
                             f"{layout}; pass a jax.sharding.NamedSharding or "
                             "SingleDeviceSharding.")
        if not isinstance(layout, (Layout, AutoLayout, type(None))):
            raise TypeError(f"Format: layout must be None, Layout.AUTO or a Layout, got "
                            f"{layout!r} of type {type(layout).__name__}")
        if sharding is not None and not hasattr(sharding, "device_set"):
            raise TypeError(f"Format: sharding must be None or a jax.sharding.Sharding, got "
                            f"{sharding!r} of type {type(sharding).__name__}")
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other):
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"
