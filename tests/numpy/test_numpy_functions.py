"""The wide comparison of jax.numpy against NumPy: a fixed, seeded table of functions, each
run on random inputs of several dtypes and shapes; values agree to the dtype's tolerance
and result dtypes are NumPy's canonicalised the JAX way (64-bit -> 32-bit with x64 off).
A sample of the table also runs under jit. Then behaviour tests for JAX's documented
departures from NumPy (immutability, static shapes, size= arguments)."""
import zlib

import numpy as np
import pytest

import pyjax
import pyjax.numpy as jnp
from pyjax._src import dtypes
from pyjax._src.errors import ConcretizationTypeError

F32, F64, I32, U8, C64, BOOL = (np.float32, np.float64, np.int32, np.uint8, np.complex64,
                                np.bool_)
_TOL = {np.dtype(np.float16): 1e-2, dtypes.bfloat16: 5e-2, np.dtype(F32): 2e-5,
        np.dtype(C64): 2e-5, np.dtype(F64): 1e-12, np.dtype(np.complex128): 1e-12}


def _rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -5, 6, shape).astype(dtype)
    x = rng.standard_normal(shape)
    if dtype.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


class Case:
    """fn(m, *args) runs with m = numpy and m = jnp; `shapes` lists argument shapes (one
    tuple per argument) to try; `dtypes` the input dtypes."""

    def __init__(self, name, fn, shapes, dtypes_=(F32, I32), *, tol=1.0, jit=True,
                 check_dtype=True, positive=False):
        self.name, self.fn, self.shapes, self.dtypes = name, fn, shapes, dtypes_
        self.tol, self.jit, self.check_dtype, self.positive = tol, jit, check_dtype, positive


S1, S2, S3 = (7,), (3, 4), (2, 3, 4)
SQ = (4, 4)
CASES = [
    # triangles, diagonals, structure
    Case("tril", lambda m, x: m.tril(x, -1), [(S2,), (S3,)]),
    Case("triu", lambda m, x: m.triu(x, 1), [(S2,), (S3,)], (F32, I32, BOOL)),
    Case("diag", lambda m, x: m.diag(x, 1), [(S1,), (S2,)]),
    Case("diag_neg", lambda m, x: m.diag(x, -2), [(S1,), (S2,)]),
    Case("diagflat", lambda m, x: m.diagflat(x, 1), [(S2,)]),
    Case("diagonal", lambda m, x: m.diagonal(x, 1, 2, 0), [(S3,)]),
    Case("trace", lambda m, x: m.trace(x, -1), [(S2,), (S3,)], (F32, I32, BOOL)),
    Case("roll", lambda m, x: m.roll(x, 3, -1), [(S2,), (S3,)], (F32, I32, BOOL)),
    Case("roll_flat", lambda m, x: m.roll(x, -5), [(S2,)]),
    Case("rot90", lambda m, x: m.rot90(x, -1, (0, 2)), [(S3,)]),
    Case("tile", lambda m, x: m.tile(x, (2, 1, 3)), [(S1,), (S2,)], (F32, BOOL)),
    Case("repeat", lambda m, x: m.repeat(x, 3, axis=0), [(S1,), (S2,)]),
    Case("repeat_flat", lambda m, x: m.repeat(x, 2), [(S2,)]),
    Case("kron", lambda m, x, y: m.kron(x, y), [((2, 3), (3, 2)), (S1, (2,))], (F32, I32)),
    Case("tensordot", lambda m, x, y: m.tensordot(x, y, ([1, 2], [0, 1])),
         [((2, 3, 4), (3, 4, 5))], (F32, I32, C64)),
    Case("outer_vecdot", lambda m, x, y: m.vecdot(x, y), [(S2, S2), (S3, (4,))],
         (F32, C64)),
    Case("append", lambda m, x: m.append(x, x[:1], axis=0), [(S2,)]),
    Case("insert", lambda m, x: m.insert(x, np.array([1, 3]), 9, axis=-1), [(S2,)]),
    Case("delete", lambda m, x: m.delete(x, np.array([0, 2]), axis=1), [(S2,), (S3,)]),
    Case("resize", lambda m, x: m.resize(x, (5, 3)), [(S2,)]),
    Case("block", lambda m, x, y: m.block([[x, y], [y, x]]), [((2, 2), (2, 2))]),
    Case("vander", lambda m, x: m.vander(x, 4, increasing=True), [(S1,)], (F32, I32),
         tol=10),
    Case("meshgrid", lambda m, x, y: m.meshgrid(x, y), [((3,), (4,))]),
    Case("meshgrid_ij_sparse", lambda m, x, y: m.meshgrid(x, y, indexing="ij", sparse=True),
         [((3,), (4,))]),
    # pad, every mode
    Case("pad_constant", lambda m, x: m.pad(x, ((1, 2), (3, 0)), constant_values=7),
         [(S2,)], (F32, I32, BOOL)),
    Case("pad_edge", lambda m, x: m.pad(x, 2, mode="edge"), [(S1,), (S2,)]),
    Case("pad_wrap", lambda m, x: m.pad(x, (4, 9), mode="wrap"), [(S1,)]),
    Case("pad_reflect", lambda m, x: m.pad(x, (8, 13), mode="reflect"), [(S1,)]),
    Case("pad_symmetric", lambda m, x: m.pad(x, ((2, 5), (6, 1)), mode="symmetric"),
         [(S2,)]),
    Case("pad_reflect_odd", lambda m, x: m.pad(x, (9, 8), mode="reflect",
                                               reflect_type="odd"), [(S1,)], (F32,)),
    Case("pad_symmetric_odd", lambda m, x: m.pad(x, (9, 8), mode="symmetric",
                                                 reflect_type="odd"), [(S1,)], (F32,)),
    Case("pad_linear_ramp", lambda m, x: m.pad(x, ((2, 3), (1, 2)), mode="linear_ramp",
                                               end_values=((5, -1), (2, 0))), [(S2,)], (F32,)),
    Case("pad_maximum", lambda m, x: m.pad(x, 2, mode="maximum", stat_length=2), [(S2,)]),
    Case("pad_minimum", lambda m, x: m.pad(x, (1, 3), mode="minimum"), [(S1,)]),
    Case("pad_mean", lambda m, x: m.pad(x, (2, 1), mode="mean"), [(S1,), (S2,)], (F32,)),
    Case("pad_median", lambda m, x: m.pad(x, (2, 1), mode="median"), [(S1,)], (F32,)),
    # differences, integrals, interpolation
    Case("diff", lambda m, x: m.diff(x, 2, axis=0), [(S1,), (S2,)], (F32, I32, BOOL)),
    Case("diff_pre_app", lambda m, x: m.diff(x, prepend=0, append=x[-1:]), [(S1,)]),
    Case("ediff1d", lambda m, x: m.ediff1d(x, to_begin=[-1], to_end=[2, 3]), [(S2,)]),
    Case("gradient", lambda m, x: m.gradient(x), [(S1,), (S2,)], (F32,)),
    Case("gradient_spacing", lambda m, x: m.gradient(x, 0.5, axis=1), [(S2,)], (F32,)),
    Case("trapezoid", lambda m, x: m.trapezoid(x, dx=0.3, axis=0), [(S2,)], (F32, I32)),
    Case("unwrap", lambda m, x: m.unwrap(m.cumsum(x * 2, -1)), [(S1,), (S2,)], (F32,),
         tol=10),
    Case("interp", lambda m, x: m.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]),
                                         np.array([3.0, -1.0, 0.0, 4.0])), [(S1,), (S2,)],
         (F32,)),
    Case("cross", lambda m, x, y: m.cross(x, y), [((5, 3), (5, 3)), ((3,), (4, 3))]),
    # statistics and comparisons
    Case("cov", lambda m, x: m.cov(x), [(S2,), ((6,),)], (F32, I32), tol=10),
    Case("cov_cols", lambda m, x: m.cov(x, rowvar=False, bias=True), [(S2,)], (F32,), tol=10),
    Case("corrcoef", lambda m, x: m.corrcoef(x), [((3, 8),)], (F32,), tol=10),
    # JAX counts in the input's float dtype (NumPy: int64)
    Case("histogram", lambda m, x: m.histogram(x, 5), [((20,),)], (F32,), tol=10,
         check_dtype=False),
    Case("histogram_edges", lambda m, x: m.histogram(x, np.array([-2.0, -0.5, 0.0, 1.5]),
                                                     density=True), [((20,),)], (F32,)),
    Case("histogram2d", lambda m, x, y: m.histogram2d(x, y, 3, range=[[-2, 2], [-2, 2]]),
         [((20,), (20,))], (F32,), tol=10, check_dtype=False),
    Case("isclose", lambda m, x, y: m.isclose(x, x + y * 1e-6), [(S2, S2)], (F32,)),
    Case("array_equal", lambda m, x: m.array_equal(x, x), [(S2,)], (F32, I32, BOOL)),
    Case("array_equiv", lambda m, x: m.array_equiv(x, x[:1]), [(S2,)]),
    Case("nan_to_num", lambda m, x: m.nan_to_num(x / m.round(x)), [((20,),)], (F32,)),
    Case("modf", lambda m, x: m.modf(x * 3), [(S2,)], (F32,)),
    Case("frexp", lambda m, x: m.frexp(x * 100), [(S2,)], (F32,)),
    Case("spacing", lambda m, x: m.spacing(x), [(S2,)], (F32,)),
    Case("i0", lambda m, x: m.i0(x * 8), [((20,),)], (F32,), tol=10),
    Case("isreal_iscomplex", lambda m, x: (m.isreal(x), m.iscomplex(x)), [(S2,)], (F32, C64)),
    # NaN reductions: inputs get NaNs planted
    Case("nansum", lambda m, x: m.nansum(_nans(x), axis=1), [(S2,)], (F32,)),
    Case("nanprod", lambda m, x: m.nanprod(_nans(x), axis=0), [(S2,)], (F32,)),
    Case("nanmax", lambda m, x: m.nanmax(_nans(x), axis=1), [(S2,)], (F32, I32)),
    Case("nanmin", lambda m, x: m.nanmin(_nans(x)), [(S2,)], (F32,)),
    Case("nanmean", lambda m, x: m.nanmean(_nans(x), axis=0), [(S2,)], (F32,)),
    Case("nanvar", lambda m, x: m.nanvar(_nans(x), axis=1, ddof=1), [(S2,)], (F32,)),
    Case("nanstd", lambda m, x: m.nanstd(_nans(x)), [(S3,)], (F32,)),
    Case("nanargmax", lambda m, x: m.nanargmax(_nans(x), axis=1), [(S2,)], (F32,)),
    Case("nanargmin", lambda m, x: m.nanargmin(_nans(x)), [(S2,)], (F32,)),
    Case("nancumsum", lambda m, x: m.nancumsum(_nans(x), axis=1), [(S2,)], (F32,)),
    Case("nancumprod", lambda m, x: m.nancumprod(_nans(x)), [(S2,)], (F32,)),
    # einsum and products
    Case("einsum_matmul", lambda m, x, y: m.einsum("ij,jk->ik", x, y), [((3, 4), (4, 5))],
         (F32, I32, C64)),
    Case("einsum_chain", lambda m, x, y, z: m.einsum("ij,jk,kl->li", x, y, z),
         [((2, 3), (3, 4), (4, 5))], (F32,)),
    Case("einsum_batch", lambda m, x, y: m.einsum("bij,bkj->bik", x, y),
         [((2, 3, 4), (2, 5, 4))], (F32,)),
    Case("einsum_ellipsis", lambda m, x, y: m.einsum("...ij,...j->...i", x, y),
         [((2, 3, 4), (4,))], (F32,)),
    Case("einsum_trace_diag", lambda m, x: (m.einsum("ii", x), m.einsum("ii->i", x)),
         [(SQ,)], (F32, I32)),
    Case("einsum_implicit", lambda m, x, y: m.einsum("ij,kj", x, y), [(S2, S2)], (F32,)),
    Case("einsum_reduce", lambda m, x: m.einsum("ijk->j", x), [(S3,)], (F32, I32)),
    Case("matmul_broadcast", lambda m, x, y: m.matmul(x, y),
         [((4,), (4,)), ((4,), (2, 4, 5)), ((2, 3, 4), (4,)), ((3, 4), (2, 4, 5)),
          ((2, 1, 3, 4), (5, 4, 6)), ((1, 3, 4), (2, 4, 5)), ((2, 1, 3, 4), (1, 5, 4, 6))],
         (F32, I32)),
    # polynomials
    Case("polyval", lambda m, p, x: m.polyval(p, x), [((4,), (6,))], (F32, I32)),
    # float inputs: NumPy trims leading zeros of products, JAX keeps static shapes
    Case("polyadd_mul", lambda m, p, q: (m.polyadd(p, q), m.polymul(p, q)),
         [((3,), (5,))], (F32, C64)),
    Case("polyder_int", lambda m, p: (m.polyder(p, 2), m.polyint(p, 1, k=3)), [((5,),)],
         (F32,)),
    Case("poly", lambda m, r: m.poly(r), [((3,),)], (F32,), tol=10),
    Case("polyfit", lambda m, x, y: m.polyfit(x, y, 2), [((10,), (10,))], (F32,), tol=50,
         jit=False),
    # windows and bits
    Case("windows", lambda m: (m.bartlett(6), m.blackman(7), m.hamming(5), m.hanning(8),
                               m.kaiser(9, 2.5)), [()], (F32,), tol=10, check_dtype=False),
    Case("packbits", lambda m, x: m.packbits(x, axis=-1), [(S2,), ((11,),)], (BOOL, U8)),
    Case("unpackbits", lambda m, x: m.unpackbits(x, axis=0), [(S2,)], (U8,)),
    Case("geomspace", lambda m: m.geomspace(2.0, 4096.0, 12), [()], (F32,),
         check_dtype=False),
    Case("bincount", lambda m, x: m.bincount(m.abs(x), minlength=8), [((15,),)], (I32,),
         jit=False),
    Case("isin", lambda m, x, y: m.isin(x, y), [(S2, (3,))], (I32,)),
    Case("union_setdiff", lambda m, x, y: (m.union1d(x, y), m.setdiff1d(x, y)),
         [((9,), (4,))], (I32,), jit=False),
    Case("intersect_setxor", lambda m, x, y: (m.intersect1d(x, y), m.setxor1d(x, y)),
         [((9,), (6,))], (I32,), jit=False),
]


def _nans(x):
    """x (a float array) with every third element NaN."""
    if not np.issubdtype(np.asarray(x).dtype if not hasattr(x, "aval") else x.dtype,
                         np.floating):
        return x
    flat_mask = (np.arange(int(np.prod(np.shape(x)))) % 3 == 1).reshape(np.shape(x))
    if isinstance(x, np.ndarray):
        return np.where(flat_mask, np.nan, x).astype(x.dtype)
    return jnp.where(flat_mask, jnp.nan, x)


def _params():
    out = []
    for case in CASES:
        for dtype in case.dtypes:
            for shapes in case.shapes:
                out.append(pytest.param(case, dtype, shapes,
                                        id=f"{case.name}-{np.dtype(dtype).name}-"
                                           f"{'x'.join(map(str, shapes))}"))
    return out


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _compare(actual, expected, dtype, case):
    a_leaves, e_leaves = _leaves(actual), _leaves(expected)
    assert len(a_leaves) == len(e_leaves), (len(a_leaves), len(e_leaves))
    for a, e in zip(a_leaves, e_leaves):
        if isinstance(e, (tuple, list)):
            _compare(a, e, dtype, case)
            continue
        a_np, e_np = np.asarray(a), np.asarray(e)
        assert a_np.shape == e_np.shape, (case.name, a_np.shape, e_np.shape)
        if case.check_dtype:
            assert a_np.dtype == dtypes.canonicalize_dtype(e_np.dtype), \
                (case.name, a_np.dtype, e_np.dtype)
        tol = _TOL.get(np.dtype(a_np.dtype), 0) * case.tol
        np.testing.assert_allclose(a_np.astype(np.result_type(a_np.dtype, np.float64)),
                                   e_np.astype(np.result_type(e_np.dtype, np.float64)),
                                   rtol=tol, atol=tol, err_msg=case.name)


@pytest.mark.parametrize("case,dtype,shapes", _params())
def test_matches_numpy(case, dtype, shapes):
    rng = np.random.default_rng(zlib.crc32(f"{case.name}{np.dtype(dtype).name}{shapes}"
                                           .encode()))
    args = [_rand(rng, s, dtype) for s in shapes]
    with np.errstate(all="ignore"):
        expected = case.fn(np, *args)
    actual = case.fn(jnp, *[jnp.asarray(a) for a in args])
    _compare(actual, expected, dtype, case)
    if case.jit and (zlib.crc32(case.name.encode()) % 3 == 0 or len(case.shapes) == 1):
        jitted = pyjax.jit(lambda *xs: case.fn(jnp, *xs))(*args)
        _compare(jitted, expected, dtype, case)


def test_table_is_wide():
    names = {c.name for c in CASES}
    assert len(names) == len(CASES)
    assert len(_params()) >= 150


# --- JAX's departures from NumPy --------------------------------------------------------

def test_fill_diagonal_place_put_are_functional():
    x = jnp.zeros((3, 3))
    with pytest.raises(NotImplementedError, match="inplace=False"):
        jnp.fill_diagonal(x, 1.0)
    y = jnp.fill_diagonal(x, jnp.array([1.0, 2.0]), inplace=False)
    np.testing.assert_array_equal(y, np.diag([1.0, 2.0, 1.0]))
    np.testing.assert_array_equal(x, np.zeros((3, 3)))       # the input is unchanged
    with pytest.raises(ValueError, match="inplace=False"):
        jnp.place(x, x == 0, 1.0)
    z = jnp.put(jnp.arange(5), jnp.array([0, 4]), jnp.array([9, 8]), inplace=False)
    np.testing.assert_array_equal(z, [9, 1, 2, 3, 8])


def test_size_arguments_make_data_dependent_shapes_static():
    x = jnp.array([3, 1, 3, 7, 1, 0])

    @pyjax.jit
    def f(x):
        return (jnp.setdiff1d(x, jnp.array([1]), size=4, fill_value=-1),
                jnp.union1d(x, jnp.array([9]), size=6),
                jnp.intersect1d(x, jnp.array([7, 3, 5]), size=3, fill_value=-2),
                jnp.compress(x > 2, x, size=4),
                jnp.bincount(x, length=5),
                jnp.repeat(x[:3], x[:3], total_repeat_length=8))
    diff, union, inter, comp, counts, rep = f(x)
    np.testing.assert_array_equal(diff, [0, 3, 7, -1])
    np.testing.assert_array_equal(union, [0, 1, 3, 7, 9, 0])
    np.testing.assert_array_equal(inter, [3, 7, -2])
    np.testing.assert_array_equal(comp, [3, 3, 7, 0])
    np.testing.assert_array_equal(counts, [1, 2, 0, 2, 0])    # 7 is past length: dropped
    np.testing.assert_array_equal(rep, [3, 3, 3, 1, 3, 3, 3, 3])
    with pytest.raises(ConcretizationTypeError, match="size="):
        pyjax.jit(lambda x: jnp.setdiff1d(x, x[:1]))(x)
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(lambda x: jnp.bincount(x))(x)


def test_traced_roll_shift_and_nan_arg_of_all_nan_slice():
    x = jnp.arange(6.0)
    out = pyjax.jit(lambda x, s: jnp.roll(x, s))(x, 2)
    np.testing.assert_array_equal(out, np.roll(np.arange(6.0), 2))
    # An all-NaN slice gives -1 (NumPy raises), as in JAX.
    np.testing.assert_array_equal(jnp.nanargmax(jnp.array([[np.nan, np.nan], [1.0, 2.0]]),
                                                axis=1), [-1, 1])


def test_polydiv_keeps_static_remainder_length_and_roots_need_concrete_input():
    q, r = jnp.polydiv(jnp.array([1.0, -3.0, 2.0, 5.0]), jnp.array([1.0, -1.0]))
    nq, nr = np.polydiv([1.0, -3.0, 2.0, 5.0], [1.0, -1.0])
    np.testing.assert_allclose(q, nq, rtol=1e-6)
    assert r.shape == (4,)                                     # not trimmed, as in JAX
    np.testing.assert_allclose(np.trim_zeros(np.asarray(r), "f"), nr, rtol=1e-6, atol=1e-6)
    roots = jnp.roots(jnp.array([0.0, 1.0, -6.0, 11.0, -6.0]))
    np.testing.assert_allclose(np.sort_complex(np.asarray(roots)), [1, 2, 3], atol=1e-4)
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(jnp.roots)(jnp.array([1.0, -3.0, 2.0]))
    traced = pyjax.jit(lambda p: jnp.roots(p, strip_zeros=False))(jnp.array([1.0, -3.0, 2.0]))
    np.testing.assert_allclose(np.sort_complex(np.asarray(traced)), [1, 2], atol=1e-5)


def test_vectorize_with_signature_and_excluded():
    def matvec(a, v, scale):
        return scale * (a @ v)
    f = jnp.vectorize(matvec, signature="(m,n),(n)->(m)", excluded={2})
    a = np.random.default_rng(0).standard_normal((5, 3, 4)).astype(np.float32)
    v = np.random.default_rng(1).standard_normal((4,)).astype(np.float32)
    np.testing.assert_allclose(f(a, v, 2.0), 2.0 * np.einsum("bmn,n->bm", a, v), rtol=1e-5,
                               atol=1e-5)
    g = jnp.vectorize(lambda x, y: x * 10 + y)
    np.testing.assert_array_equal(g(jnp.arange(3)[:, None], jnp.arange(2)),
                                  np.arange(3)[:, None] * 10 + np.arange(2))
    with pytest.raises(ValueError, match="core dimension"):
        f(a, np.ones(5, np.float32), 1.0)


def test_ufunc_methods_and_index_tricks():
    add = jnp.frompyfunc(lambda a, b: a + b, 2, 1, identity=0)
    x = jnp.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(add.reduce(x, axis=1), [3.0, 12.0])
    np.testing.assert_array_equal(add.accumulate(x, axis=1), np.cumsum(np.asarray(x), 1))
    np.testing.assert_array_equal(add.outer(jnp.arange(2), jnp.arange(3)),
                                  np.add.outer(np.arange(2), np.arange(3)))
    np.testing.assert_array_equal(add.at(jnp.zeros(3), np.array([0, 0, 2]), 1.0,
                                         inplace=False), [2.0, 0.0, 1.0])
    np.testing.assert_array_equal(jnp.r_[1:4, 0, np.array([7, 8])], np.r_[1:4, 0, [7, 8]])
    np.testing.assert_array_equal(jnp.c_[jnp.arange(3), jnp.arange(3)],
                                  np.c_[np.arange(3), np.arange(3)])
    np.testing.assert_array_equal(jnp.mgrid[0:3, 0:2], np.mgrid[0:3, 0:2])
    np.testing.assert_allclose(jnp.mgrid[0:1:5j], np.mgrid[0:1:5j])
    np.testing.assert_array_equal(jnp.ravel_multi_index((np.array([1, 2]), np.array([3, 0])),
                                                        (3, 4)), [7, 8])
    for a, e in zip(jnp.unravel_index(jnp.array([5, 11]), (3, 4)),
                    np.unravel_index([5, 11], (3, 4))):
        np.testing.assert_array_equal(a, e)


def test_apply_along_axis_and_fromfunction_use_vmap():
    x = np.arange(24.0).reshape(2, 3, 4)
    out = jnp.apply_along_axis(lambda v: jnp.sum(v * v), 1, x)
    np.testing.assert_allclose(out, np.apply_along_axis(lambda v: np.sum(v * v), 1, x))
    grid = jnp.fromfunction(lambda i, j: i * 10 + j, (2, 3), dtype=jnp.int32)
    np.testing.assert_array_equal(grid, [[0, 1, 2], [10, 11, 12]])


def test_bad_input_errors():
    with pytest.raises(ValueError, match="at least two dimensions"):
        jnp.tril(jnp.arange(3))
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode"):
        jnp.pad(jnp.ones(3), 1, mode="bogus")
    with pytest.raises(TypeError, match="list"):
        jnp.isin(jnp.arange(3), [1, 2])
    with pytest.raises(ValueError, match="Valid values for indexing"):
        jnp.meshgrid(jnp.arange(2), indexing="yx")
    with pytest.raises(ValueError, match="subscripts"):
        jnp.einsum("ij,j->i", jnp.ones((2, 3)), jnp.ones((2, 3)))
    with pytest.raises(ConcretizationTypeError):
        pyjax.jit(lambda r: jnp.repeat(jnp.arange(3), r))(jnp.array([1, 2, 3]))


def test_matmul_neither_broadcasts_nor_reshapes_its_operands():
    # A vector is contracted as it is and a batch axis only one operand has becomes a free
    # axis of dot_general: no copies to materialise, no extra residuals saved for grad.
    for a, b in [((3,), (3, 4)), ((2, 3), (3,)), ((3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5))]:
        jaxpr = str(pyjax.make_jaxpr(jnp.matmul)(np.ones(a, F32), np.ones(b, F32)))
        assert jaxpr.count("dot_general") == 1, jaxpr
        assert "broadcast_in_dim" not in jaxpr and "reshape" not in jaxpr, jaxpr


def test_einsum_path_greedy_order_and_explicit_path():
    a, b, c = jnp.ones((10, 200)), jnp.ones((200, 3)), jnp.ones((3, 300))
    path, _ = jnp.einsum_path("ij,jk,kl->il", a, b, c)
    assert path == [(0, 1), (0, 1)]   # (a @ b) first: the small product; JAX's form
    for explicit in ([(1, 2), (0, 1)], ["einsum_path", (1, 2), (0, 1)]):   # or numpy's
        out = jnp.einsum("ij,jk,kl->il", a, b, c, optimize=explicit)
        np.testing.assert_allclose(out, np.full((10, 300), 600.0))


GRAD_FUNCS = {
    "pad_reflect": lambda x: jnp.pad(x, (3, 4), mode="reflect"),
    "pad_linear_ramp": lambda x: jnp.pad(x, 2, mode="linear_ramp", end_values=1.0),
    "pad_mean": lambda x: jnp.pad(x, (1, 2), mode="mean"),
    "einsum": lambda x: jnp.einsum("i,j,j->i", x, x, jnp.sin(x)),
    "matmul_broadcast": lambda x: (x @ jnp.outer(x, x), jnp.outer(x, x) @ x,
                                   x[:4].reshape(2, 1, 2) @ x.reshape(3, 1, 2, 1)),
    "kron_tensordot": lambda x: jnp.tensordot(jnp.kron(x[:2], x), x[:2, None], 0),
    "interp": lambda x: jnp.interp(x * 0.5, jnp.array([-1.0, 0.0, 2.0]), x[:3]),
    "cov_corrcoef": lambda x: (jnp.cov(jnp.stack([x, x ** 2])),
                               jnp.corrcoef(jnp.stack([x, jnp.sin(x)]))),
    "gradient_trapezoid": lambda x: (jnp.gradient(x ** 2), jnp.trapezoid(x ** 3)),
    "nan_reductions": lambda x: (jnp.nanmean(x), jnp.nanvar(x), jnp.nansum(x ** 2)),
    "polyval_polymul": lambda x: (jnp.polyval(x[:3], x), jnp.polymul(x[:2], x)),
    "i0_diff_roll": lambda x: (jnp.i0(x), jnp.diff(x, 2), jnp.roll(x, 2)),
    "tril_diag_trace": lambda x: (jnp.tril(jnp.outer(x, x)), jnp.diag(x, 1),
                                  jnp.trace(jnp.outer(x, x), 1)),
    "unwrap_cross": lambda x: (jnp.unwrap(x * 3), jnp.cross(x[:3], x[2:5])),
}


@pytest.mark.parametrize("name", sorted(GRAD_FUNCS))
def test_grads(name):
    from pyjax._src import config
    from pyjax._src.test_util import check_grads
    with config.enable_x64(True):
        x = np.random.default_rng(zlib.crc32(name.encode())).standard_normal(6)
        check_grads(GRAD_FUNCS[name], (x,), 2, eps=1e-6)


VMAP_FUNCS = {
    "pad_symmetric": lambda x: jnp.pad(x, (2, 3), mode="symmetric"),
    "einsum": lambda x: jnp.einsum("i,j->ij", x, x),
    "interp": lambda x: jnp.interp(x, jnp.array([-1.0, 0.0, 2.0]), jnp.array([0.0, 3.0, 1.0])),
    "cov": lambda x: jnp.cov(jnp.stack([x, x ** 2])),
    "histogram": lambda x: jnp.histogram(x, 4, range=(-2.0, 2.0))[0],
    "nanargmax": lambda x: jnp.nanargmax(jnp.where(x > 1.0, jnp.nan, x)),
    "repeat_tile": lambda x: (jnp.repeat(x, 2), jnp.tile(x, 2)),
    "isin_polyval": lambda x: (jnp.isin(jnp.round(x), jnp.array([0.0, 1.0])),
                               jnp.polyval(x[:3], x)),
}


@pytest.mark.parametrize("name", sorted(VMAP_FUNCS))
def test_vmap_matches_loop(name):
    f = VMAP_FUNCS[name]
    xs = np.random.default_rng(zlib.crc32(name.encode())).standard_normal((3, 6))
    xs = xs.astype(np.float32)
    expected = [np.stack(leaves) for leaves in zip(*[
        [np.asarray(v) for v in pyjax.tree_util.tree_leaves(f(x))] for x in xs])]
    actual = pyjax.tree_util.tree_leaves(pyjax.vmap(f)(xs))
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(a), e, rtol=1e-5, atol=1e-5)


def test_polyval_takes_columns_of_coefficients():
    # p's first axis holds the coefficients; more axes are polynomials side by side
    assert jnp.polyval(jnp.ones((5, 2)), 0.5).tolist() == [1.9375, 1.9375]
    assert jnp.polyval(jnp.arange(6.0).reshape(3, 2), jnp.array([1.0, 2.0])).tolist() == [6, 15]
    with pytest.raises(ValueError, match="at least 1-D"):
        jnp.polyval(jnp.float32(2), 0.5)


# --- parity with JAX 0.10.2 (expected values observed from JAX itself) ------------------------

def _same(out, values, dtype, weak=False):
    assert out.dtype == np.dtype(dtype) and out.weak_type == weak
    np.testing.assert_allclose(np.asarray(out), np.asarray(values, dtype), rtol=1e-6)


def test_cumulative_dtypes_and_include_initial_match_jax():
    i8 = np.array([[1, 2], [3, 4]], np.int8)
    _same(jnp.cumsum(i8, axis=0), [[1, 2], [4, 6]], np.int8)         # no int promotion
    _same(jnp.cumsum(np.array([True, True])), [1, 2], np.int32)       # bool counts
    _same(jnp.cumulative_sum(i8, axis=1, include_initial=True), [[0, 1, 3], [0, 3, 7]],
          np.int32)
    _same(jnp.cumulative_prod(i8.astype(np.uint8), axis=0, include_initial=True),
          [[1, 1], [1, 2], [3, 8]], np.uint8)
    with pytest.raises(ValueError, match="axis"):
        jnp.cumulative_sum(i8)
    with pytest.raises(ValueError, match="scalar"):
        jnp.cumulative_prod(jnp.float32(2))


def test_reduction_where_initial_mean_dtype_and_var_ddof_match_jax():
    f = np.array([[1., 2, 3], [4, 5, 6]], np.float32)
    m = np.array([[1, 0, 1], [0, 0, 1]], bool)
    _same(jnp.max(f, axis=0, where=m, initial=-1.0), [1, -1, 6], F32)
    _same(jnp.sum(f, axis=0, where=m, initial=5.0), [6, 5, 14], F32)
    _same(jnp.mean(f * 10, axis=1, dtype=jnp.int8), [20, -35], np.int8)   # int8 wraps
    _same(jnp.var(np.array([[1, 5, 2], [7, 1, 1]], np.int32), axis=1, dtype=np.int32),
          [3, 8], F32, weak=True)
    with pytest.raises(ValueError, match="inexact"):
        jnp.std(f, dtype=np.int32)
    assert np.isnan(np.asarray(jnp.var(f, axis=0, ddof=2))).all()       # not inf
    np.testing.assert_array_equal(np.asarray(jnp.var(f, axis=0, ddof=1, where=m)),
                                  [np.nan, np.nan, 4.5])
    assert np.isnan(float(jnp.nanvar(np.array([1., np.nan, 3.], np.float32), ddof=2)))


def test_median_dtype_and_shapes_match_jax():
    _same(jnp.median(np.array([1, 2, 3, 4], np.int32)), 2.5, F32)        # not weak
    assert jnp.median(jnp.float32(2.5), keepdims=True).shape == (1,)
    assert jnp.median(np.zeros((0, 3), np.float32), axis=-1).shape == (0,)


def test_elementwise_edge_dtypes_match_jax():
    _same(jnp.imag(np.array([-1., 2], np.float32)), [0, 0], F32)
    _same(jnp.imag(2.5), 0, F32, weak=True)
    _same(jnp.angle(np.array([-1., 2, -3], np.float32)), [np.pi, 0, np.pi], F32)
    _same(jnp.fmax(np.array([1., np.nan, 3]), 2.0), [2, 2, 3], F32)
    _same(jnp.hypot(np.array([3., 0., 5]), 4.0), [5, 4, 6.4031243], F32)
    _same(jnp.heaviside(np.array([-1., 0, 2]), 0.5), [0, 0.5, 1], F32)
    _same(jnp.gcd(np.array([4, 6], np.uint8), np.array([6, -4], np.int8)), [2, 2], np.int16)
    _same(jnp.lcm(np.array([4, 6], np.uint32), 6), [12, 6], np.uint32)
    with pytest.raises(ValueError, match="integers"):
        jnp.gcd(np.array([1.5]), 2)
    _same(jnp.rint(np.array([1, -2], np.int8)), [1, -2], F32)
    _same(jnp.rint(np.array([1.5 + 2.5j], C64)), [2 + 2j], C64)
    _same(jnp.round(np.array([1.25 + 2.75j], C64), 1), [1.2 + 2.8j], C64)
    _same(jnp.trunc(np.array([True, False])), [True, False], BOOL)
    _same(jnp.square(np.array([True, False])), [1, 0], I32)
    _same(jnp.signbit(np.array([True, False])), [False, False], BOOL)
    _same(jnp.isfinite(np.array([1 + 1j, np.inf + 0j, 1 + np.nan * 1j], C64)),
          [True, False, False], BOOL)


def test_take_unique_setdiff_histogram_polyder_match_jax():
    _same(jnp.take(np.array([10, 20, 30]), np.array([-1, 5, 1]), mode="clip"), [10, 30, 20],
          I32)                                                      # -1 clips to 0
    _same(jnp.unique(np.zeros(0, np.float32), size=3, fill_value=-7), [-7, -7, -7], F32)
    with pytest.raises(ValueError, match="fill_value must be specified"):
        jnp.unique(np.zeros(0, np.float32), size=3)
    _same(jnp.setdiff1d(np.array([5, 3, 9]), np.array([3]), size=4), [5, 9, 0, 0], I32)
    counts = jnp.histogramdd(np.array([[0.1, 0.1], [0.5, 0.5], [2., 2.]], np.float32),
                             bins=2)[0]
    _same(counts, [[2, 0], [0, 1]], I32)
    _same(jnp.histogram2d(np.array([0., 1, 2]), np.array([0., 1, 2]), bins=2,
                          weights=np.array([1, 2, 3]))[0], [[1, 0], [0, 5]], F32)
    _same(jnp.polyder(np.array([1, 2, 3, 4])), [3, 4, 3], F32)


def test_numpy_operand_promoted_with_python_scalar_is_weak_as_in_jax():
    _same(jnp.add(np.array([True, False]), 3), [4, 3], I32, weak=True)
    _same(jnp.multiply(np.array([1, -2], np.int8), 2.5), [2.5, -5], F32, weak=True)
    _same(jnp.add(np.array([1.5], np.float32), 2), [3.5], F32)          # f32 stays strong


def test_copysign_broadcasts_a_scalar_against_an_array():
    assert jnp.copysign(1.0, jnp.array([-1.0, 2.0])).tolist() == [-1.0, 1.0]
    assert jnp.copysign(jnp.array([-1.0, 2.0]), -1.0).tolist() == [-1.0, -2.0]


def test_order_comparisons_of_complex_numbers_are_lexicographic():
    # lax's lt/le/gt/ge refuse complex operands; jnp orders by (real, imag) as JAX does
    a = jnp.array([1 + 2j, 1 + 1j, 2 - 5j, 0j])
    b = jnp.array([1 + 3j, 1 + 1j, 1 + 9j, -0.0 + 1j])
    assert jnp.less(a, b).tolist() == [True, False, False, True]       # JAX 0.10.2's
    assert jnp.less_equal(a, b).tolist() == [True, True, False, True]
    assert jnp.greater(a, b).tolist() == [False, False, True, False]
    assert jnp.greater_equal(a, b).tolist() == [False, True, True, False]
    assert pyjax.jit(lambda u, v: u < v)(a, b).tolist() == [True, False, False, True]


def test_einsum_contracts_with_a_given_dot_general():
    # JAX's private `_dot_general` override (flax's linen attention passes one)
    calls = []

    def doubled_dot(x, y, dims, precision=None, preferred_element_type=None, **kw):
        calls.append(dims)
        return pyjax.lax.dot_general(x, y, dims, precision,
                                   preferred_element_type=preferred_element_type, **kw) * 2

    a, b, c = jnp.arange(6.0).reshape(2, 3), jnp.arange(12.0).reshape(3, 4), jnp.ones((4, 2))
    assert jnp.einsum("ij,jk->ik", a, b, _dot_general=doubled_dot).tolist() == [
        [40.0, 46.0, 52.0, 58.0], [112.0, 136.0, 160.0, 184.0]]
    assert jnp.einsum("ij,jk,kl->il", a, b, c, _dot_general=doubled_dot).tolist() == [
        [392.0, 392.0], [1184.0, 1184.0]]
    batched = pyjax.jit(lambda a: jnp.einsum("bi,bj->bij", a, a, _dot_general=doubled_dot))
    assert batched(a).shape == (2, 3, 3) and len(calls) == 4


def test_einsum_asks_its_dot_general_for_the_result_dtype():
    # JAX 0.10.2 passes preferred_element_type=result_type(operands) to each contraction:
    # a _dot_general that casts its operands (flax's fp8 one) still returns float32
    asked = []

    def fp8_dot(x, y, dims, precision=None, preferred_element_type=None):
        asked.append(str(preferred_element_type))
        return pyjax.lax.dot_general(x.astype(jnp.float8_e4m3fn), y.astype(jnp.float8_e4m3fn),
                                     dims, precision,
                                     preferred_element_type=preferred_element_type)

    a, b = jnp.array([[1.125, 2.0]]), jnp.array([[1.0625], [3.0]])
    out = jnp.einsum("ij,jk->ik", a, b, _dot_general=fp8_dot)
    assert out.tolist() == [[7.125]] and out.dtype == jnp.float32

    def plain_dot(x, y, dims, precision=None, preferred_element_type=None):
        asked.append(str(preferred_element_type))
        return pyjax.lax.dot_general(x, y, dims)

    out = jnp.einsum("ij,jk->ik", a.astype(jnp.int32), b.astype(jnp.int32),
                     _dot_general=plain_dot)
    assert out.dtype == jnp.int32 and asked == ["float32", "int32"]


def test_einsum_sums_bools_with_an_or():
    # JAX 0.10.2 (and NumPy): a summed-out label of a bool operand reduces with OR.
    b = jnp.array([[True, False], [False, False]])
    for f in (jnp.einsum, pyjax.jit(jnp.einsum, static_argnums=0)):
        out = f("ij->i", b)
        assert out.dtype == np.bool_ and out.tolist() == [True, False]
        assert f("ij,j->", b, jnp.array([True, True])).tolist() is True


def test_logaddexp_derivatives_split_ties_and_read_inf_as_jax_does():
    # JAX 0.10.2 differentiates logaddexp(2) with its own rule: at x1 == x2 each operand
    # gets half (softplus'(0) = 0.5), and +inf operands are read as 0 in the rule.
    grad2 = pyjax.grad(jnp.logaddexp, (0, 1))
    assert [float(g) for g in grad2(1., 1.)] == [0.5, 0.5]
    assert [float(g) for g in pyjax.grad(jnp.logaddexp2, (0, 1))(1., 1.)] == [0.5, 0.5]
    assert [float(g) for g in grad2(jnp.inf, jnp.inf)] == [1., 1.]
    np.testing.assert_allclose([float(g) for g in grad2(jnp.inf, 1.)], [1., 2.7182817],
                               rtol=1e-6)
    assert [float(g) for g in grad2(-jnp.inf, 1.)] == [0., 1.]
    np.testing.assert_allclose(
        pyjax.vmap(pyjax.grad(pyjax.nn.softplus))(jnp.array([-2., -0.5, 0., 0.5, 2.])),
        [0.11920291, 0.37754068, 0.5, 0.62245935, 0.880797], rtol=1e-6)


def test_moveaxis_takes_axes_as_integer_arrays():
    # JAX 0.10.2 reads source and destination as index tuples, so a 1-D integer array
    # (numpyro: jnp.moveaxis(samples, axes, jnp.arange(len(axes)))) is a tuple of axes
    x = jnp.ones((2, 3, 4, 5))
    assert jnp.moveaxis(x, -1, jnp.array([0])).shape == (5, 2, 3, 4)
    assert jnp.moveaxis(x, -1, np.array([0])).shape == (5, 2, 3, 4)
    assert jnp.moveaxis(x, (-1, -2), np.array([1, 0])).shape == (4, 5, 2, 3)
    assert jnp.moveaxis(x, (-1, -2), jnp.arange(2)).shape == (5, 4, 2, 3)
    with pytest.raises(TypeError, match="'str' object cannot be interpreted as an integer"):
        jnp.moveaxis(x, "a", 0)


def test_reshape_forwards_a_numpy_array_to_its_own_method():
    # JAX 0.10.2's jnp.reshape calls the value's reshape method: a NumPy array stays a
    # NumPy array, under jit too (numpyro's constraints, reshaped under jit, then decide
    # whether to warn by the result being concrete), with NumPy's errors
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    out = jnp.reshape(x, (2, 6))
    assert type(out) is np.ndarray and out.tolist() == x.reshape(2, 6).tolist()
    assert type(jnp.reshape(x, -1, order="F")) is np.ndarray
    assert type(jnp.reshape(np.float32(2), (1,))) is np.ndarray
    assert type(jnp.reshape(2.0, (1,))) is not np.ndarray   # no method: a jax Array
    seen = []
    pyjax.jit(lambda: seen.append(type(jnp.reshape(x > 3, (3, -1)).all(-1))))()
    assert seen == [np.ndarray]
    with pytest.raises(ValueError, match=r"cannot reshape array of size 12 into shape \(5,\)"):
        jnp.reshape(x, (5,))
    with pytest.raises(TypeError, match=r"cannot reshape array of shape \(3, 4\)"):
        jnp.reshape(jnp.asarray(x), (5,))
    with pytest.raises(TypeError, match="reshape requires ndarray or scalar arguments"):
        jnp.reshape([1, 2], (2,))
