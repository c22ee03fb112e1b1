"""jax.experimental.layout: Layout and Format as data, jit's in/out shardings given as
Formats (Layout.AUTO: XLA chooses; a Layout: that order in memory), the layouts a
Compiled reports, Array.format, and device_put / make_array_from_callback to a Format.
Expected layouts, shardings and messages are JAX 0.10.2's for the same programs; the
checks that need a mesh run in one subprocess with eight devices."""
from __future__ import annotations

import numpy as np
import pytest

import pyjax as jax
from pyjax.experimental.layout import Format, Layout
from pyjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from pyjax.sharding import SingleDeviceSharding

from harness import checks_on_devices

ROW_MAJOR_3D = Layout((0, 1, 2), ())


def _split(spec=("x", "y")):
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    return NamedSharding(mesh, P(*spec))


# --- checks run with eight devices ------------------------------------------------------

def check_auto_layouts_are_chosen_by_xla():
    s = _split()
    sds = jax.ShapeDtypeStruct((4, 4, 2), np.int32, sharding=s)
    lowered = jax.jit(lambda x: x.T, in_shardings=Format(Layout.AUTO),
                      out_shardings=Format(Layout.AUTO)).lower(sds)
    [main] = [line for line in lowered.as_text().splitlines() if "func.func" in line]
    assert 'mhlo.layout_mode = "auto"' in main.split("->")[0]
    assert 'mhlo.layout_mode = "auto"' in main.split("->")[1]
    compiled = lowered.compile()
    (arg,), kwargs = compiled.input_formats
    assert kwargs == {} and arg == Format(ROW_MAJOR_3D, s)
    out_format = compiled.output_formats
    assert out_format.layout == Layout((2, 1, 0), ())   # the transpose costs no copy
    assert out_format.sharding == NamedSharding(s.mesh, P(None, "y", "x"))
    arr = jax.device_put(np.arange(32).reshape(4, 4, 2), s)
    assert arr.format == Format(ROW_MAJOR_3D, s)
    out = compiled(arr)
    assert out.format == out_format
    assert np.asarray(out)[1, 2].tolist() == [5, 13, 21, 29]
    plain = jax.jit(lambda x: x.T).lower(sds).compile()
    assert plain.output_formats.layout == ROW_MAJOR_3D


def check_arrays_laid_out_otherwise_compute_right():
    s = _split(("x",))
    values = np.arange(16 * 8).reshape(16, 8)
    a = jax.device_put(values, Format(Layout((1, 0)), s))
    assert a.format.layout == Layout((1, 0), ()) and a.sharding == s
    assert np.asarray(a)[3].tolist() == list(range(24, 32))
    b = jax.device_put(a, Format(Layout((0, 1)), s))
    assert b.format.layout == Layout((0, 1), ()) and np.array_equal(np.asarray(b), values)
    c = jax.jit(lambda x: x + 1)(a)   # compiled for the argument's layout
    assert c.format.layout == Layout((0, 1), ())
    assert np.asarray(c)[3].tolist() == list(range(25, 33))
    out = jax.jit(lambda x: x * 2, out_shardings=Format(Layout((1, 0)), s))(values)
    assert out.format.layout == Layout((1, 0), ()) and np.asarray(out)[1, 0] == 16
    made = jax.make_array_from_callback((16, 8), Format(Layout((0, 1)), s),
                                        lambda idx: values[idx])
    assert made.format == Format(Layout((0, 1), ()), s)


def check_layout_errors_match_jax():
    s = _split()
    arr = jax.device_put(np.arange(32).reshape(4, 4, 2), s)
    with pytest.raises(ValueError, match=r"Layout passed to jit does not match the layout "
                                         r"on the respective arg. Got jit layout: AUTO,\n"
                                         r"arg layout: Layout\(major_to_minor=\(0, 1, 2\), "
                                         r"tiling=\(\), sub_byte_element_size_in_bits=0\) "
                                         r"for arg type: int32\[4,4,2\]. The layout given"):
        jax.jit(lambda x: x.T, in_shardings=Format(Layout.AUTO))(arr)
    with pytest.raises(ValueError, match="Layout passed to jit does not match"):
        jax.jit(lambda x: x, in_shardings=Format(Layout((2, 1, 0)), s))(arr)
    with pytest.raises(TypeError, match="`Layout.AUTO` cannot be used in place of a "
                                        "device-local layout when calling"):
        jax.make_array_from_callback((4, 4, 2), Format(Layout.AUTO, s), lambda i: 0)


test_on_eight_devices = checks_on_devices(globals(), 8)


# --- one device ---------------------------------------------------------------------------

def test_layout_and_format_are_jax_data():
    assert repr(Layout((1, 0))) == ("Layout(major_to_minor=(1, 0), tiling=None, "
                                    "sub_byte_element_size_in_bits=0)")
    assert Layout((1, 0)).update(tiling=((2,),)) == Layout((1, 0), ((2,),))
    assert repr(Format(Layout.AUTO)) == "Format(layout=AUTO, sharding=None)"
    with pytest.raises(ValueError, match="Sharding has to be concrete when layout is of "
                                         "type"):
        Format(Layout((0, 1)))
    with pytest.raises(TypeError, match="Invalid value received for the layout argument"):
        Format("a")
    with pytest.raises(TypeError, match="Invalid value received for the sharding argument"):
        Format(None, "b")


def test_arrays_report_their_format():
    x = jax.numpy.ones((2, 3))
    assert x.format == Format(Layout((0, 1), ()), SingleDeviceSharding(jax.devices()[0]))


def test_device_put_to_a_format_needs_concrete_parts():
    values = np.arange(16).reshape(8, 2)
    one = SingleDeviceSharding(jax.devices()[0])
    for fmt in (Format(Layout.AUTO, one), Format(Layout.AUTO)):
        with pytest.raises(ValueError, match=r"sharding and layout in `Layout` instance "
                                             r"should be concrete. Got layout: Format\("
                                             r"layout=AUTO, .* for input int32\[8,2\]"):
            jax.device_put(values, fmt)
    with pytest.raises(ValueError, match=r"Length of major_to_minor and the rank of the "
                                         r"value should match. Got major_to_minor=\(0, 1, "
                                         r"2\) and shape=\(8, 2\)"):
        jax.device_put(values, Format(Layout((0, 1, 2)), one))
    out = jax.device_put(values, Format(None, one))
    assert out.committed and out.format.layout == Layout((0, 1), ())


def test_jit_takes_formats_not_bare_layouts():
    with pytest.raises(ValueError, match=r"`jax.jit` does not accept device-local layouts "
                                         r"directly. Create a `Format` instance wrapping "
                                         r"this device-local layout and pass that to `jit` "
                                         r"instead. Got AUTO"):
        jax.jit(lambda x: x, in_shardings=Layout.AUTO)
