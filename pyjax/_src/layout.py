"""Array memory layouts (jax.experimental.layout): `Layout`, the order of an array's
dimensions in memory (major to minor) with its tiling, and `Format`, a layout with the
sharding it applies to. jit takes Formats as in/out shardings (Layout.AUTO: XLA
chooses), device_put lays values out as one says, and Arrays and Compiled report theirs.
Imports nothing from pyjax."""
from __future__ import annotations


class AutoLayout:
    """`Layout.AUTO`: let the compiler choose."""

    def __repr__(self):
        return "AUTO"


AUTO = AutoLayout()


class Layout:
    """The order of an array's dimensions in memory, most major first (row-major for a
    2-D array is (0, 1)), its tiling (None: the backend's), and the bits of a sub-byte
    element (0: whole bytes)."""

    __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
    AUTO = AUTO

    def __init__(self, major_to_minor, tiling=None, sub_byte_element_size_in_bits=0):
        self.major_to_minor = tuple(major_to_minor)
        self.tiling = None if tiling is None else tuple(map(tuple, tiling))
        self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

    @staticmethod
    def from_pjrt_layout(pjrt_layout):
        """The Layout of an XLA (PJRT) layout, as XLA reports a buffer's or a program's."""
        xla_layout = pjrt_layout._xla_layout()
        return Layout(xla_layout.minor_to_major()[::-1], xla_layout.tiling(),
                      xla_layout.element_size_in_bits())

    def _key(self):
        return (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)

    def __eq__(self, other):
        return isinstance(other, Layout) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
                f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

    def update(self, **changes):
        """A copy with some of major_to_minor, tiling, sub_byte_element_size_in_bits
        replaced."""
        fields = dict(zip(self.__slots__, self._key()))
        fields.update(changes)
        return Layout(**fields)

    def check_compatible_aval(self, shape):
        if len(self.major_to_minor) != len(shape):
            raise ValueError(
                "Length of major_to_minor and the rank of the value should match. Got "
                f"major_to_minor={self.major_to_minor} and shape={tuple(shape)}")

    def minor_to_major_text(self):
        """XLA's spelling of this layout's dimension order (e.g. "{0,1}" for a 2-D
        column-major layout), as a program's mhlo.layout_mode names it."""
        return "{" + ",".join(str(d) for d in self.major_to_minor[::-1]) + "}"


def layout_mode(layout):
    """The mhlo.layout_mode attribute text of a program's argument or result: "auto" for
    Layout.AUTO, XLA's dimension order for a Layout, None for the default layout."""
    if layout is None:
        return None
    return "auto" if isinstance(layout, AutoLayout) else layout.minor_to_major_text()


def default_layout(ndim):
    """The layout XLA gives a value of rank `ndim` by default: row-major, untiled."""
    return Layout(tuple(range(ndim)), ())


def is_default(layout, ndim):
    """Whether `layout` (a Layout) is the default one for a value of rank `ndim` (the
    packing of sub-byte elements is the dtype's, whatever XLA reports)."""
    return layout.major_to_minor == tuple(range(ndim)) and not layout.tiling


def same_memory_order(a, b):
    """Whether two Layouts order and tile a value's elements alike (the packing of
    sub-byte elements is the dtype's, whatever XLA reports)."""
    return a.major_to_minor == b.major_to_minor and (a.tiling or ()) == (b.tiling or ())


def same_layout(given, held):
    """Whether a layout asked for (a Layout, or Layout.AUTO, which no layout is) is
    `held` (a Layout as XLA reports it): with no tiling given, their dimension orders
    agree (the tiling is the backend's), as JAX compares them."""
    if isinstance(given, Layout) and not given.tiling:
        return given.major_to_minor == held.major_to_minor
    return given == held


# Whether any program has produced arrays laid out otherwise than by default (set once,
# never reset; a bool write is atomic): until then, the fast paths skip layout checks.
seen = {"non_default": False}


class Format:
    """A layout (None: the default, Layout.AUTO, or a Layout) with a sharding (None or a
    jax.sharding.Sharding; required when the layout is concrete)."""

    __slots__ = ("layout", "sharding")

    def __init__(self, layout=None, sharding=None):
        if isinstance(layout, Layout) and sharding is None:
            raise ValueError(
                "Sharding has to be concrete when layout is of type "
                f"{type(layout)}. Please pass a `jax.sharding.NamedSharding` or "
                "`jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
                f"sharding {sharding}")
        if not isinstance(layout, (Layout, AutoLayout, type(None))):
            raise TypeError(
                "Invalid value received for the layout argument. Expected values are "
                f"`None`, `Layout.AUTO` or an instance of `Layout`. Got {layout} of type "
                f"{type(layout)}")
        if sharding is not None and not hasattr(type(sharding), "device_set"):
            raise TypeError(
                "Invalid value received for the sharding argument. Expected values are "
                f"`None` or an instance of `jax.Sharding`. Got {sharding} of type "
                f"{type(sharding)}")
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other):
        return (isinstance(other, Format) and self.layout == other.layout
                and self.sharding == other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format(layout={self.layout}, sharding={self.sharding})"
