"""Public lax module, mirroring `jax.lax`: the strict primitive wrappers. Re-exports only."""
from pyjax._src.lax.control_flow import (  # noqa: F401
    associative_scan, cond, fori_loop, map, scan, switch, while_loop,
)
from pyjax._src.lax.dot import dot, dot_general  # noqa: F401
from pyjax._src.lax.ragged_dot import (  # noqa: F401
    RaggedDotDimensionNumbers, ragged_dot, ragged_dot_general,
)
from pyjax._src.lax.elementwise import (  # noqa: F401
    AccuracyMode, Tolerance, abs, acos, acosh, add, asin, asinh, atan, atan2, atanh,
    bitcast_convert_type, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil,
    clamp, clz, complex, conj, convert_element_type, cos, cosh, digamma, div, eq, erf,
    erf_inv, erfc, exp, exp2, expm1, floor, ge, gt, imag, integer_pow, is_finite, le, lgamma,
    log, log1p, logistic, lt, max, min, mul, ne, neg, nextafter, polygamma,
    population_count, pow, real, rem, round, rsqrt, select, select_n, shift_left,
    shift_right_arithmetic, shift_right_logical, sign, sin, sinh, sqrt, square, sub, tan,
    tanh,
)
from pyjax._src.lax.sharding_constraint import (  # noqa: F401
    sharding_constraint_p, with_sharding_constraint)
from pyjax._src.lax.parallel import (  # noqa: F401
    axis_index, pcast, pmax, pmean, pmin, psum,
)
from pyjax._src.lax.ad_util import stop_gradient  # noqa: F401
from pyjax._src.lax.indexing import (  # noqa: F401
    GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers, gather, scatter,
    scatter_add, scatter_apply, scatter_max, scatter_min, scatter_mul,
)
from pyjax._src.lax.reductions import (  # noqa: F401
    argmax, argmin, cumlogsumexp, cummax, cummin, cumprod, cumsum, reduce_and, reduce_max,
    reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_xor,
)
from pyjax._src.lax.slicing import (  # noqa: F401
    dynamic_index_in_dim, dynamic_slice, dynamic_slice_in_dim, dynamic_update_index_in_dim,
    dynamic_update_slice, dynamic_update_slice_in_dim, index_in_dim, slice, slice_in_dim,
)
from pyjax._src.lax.sorting import (  # noqa: F401
    approx_max_k, approx_min_k, approx_top_k_p, sort, sort_key_val, sort_p, top_k, top_k_p,
)
from pyjax._src.lax.structural import (  # noqa: F401
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, iota, pad,
    reshape, rev, squeeze, transpose,
)
from pyjax._src.lax.ad_util import stop_gradient_p  # noqa: F401
from pyjax._src.lax.control_flow import cond_p, scan_p, while_p  # noqa: F401
from pyjax._src.lax.control_flow.solves import (  # noqa: F401
    custom_linear_solve, linear_solve_p,
)
from pyjax._src.lax.dot import dot_general_p  # noqa: F401
from pyjax._src.lax.elementwise import (  # noqa: F401
    abs_p, acos_p, acosh_p, add_p, and_p, asin_p, asinh_p, atan2_p, atan_p, atanh_p,
    bitcast_convert_type_p, cbrt_p, ceil_p, clamp_p, clz_p, complex_p, conj_p,
    convert_element_type_p, copy_p, cos_p, cosh_p, digamma_p, div_p, eq_p, eq_to_p, erf_inv_p,
    erf_p, le_to_p, lt_to_p,
    erfc_p, exp2_p, exp_p, expm1_p, floor_p, ge_p, gt_p, imag_p, integer_pow_p,
    is_finite_p, le_p, lgamma_p, log1p_p, log_p, logistic_p, lt_p, max_p, min_p, mul_p,
    ne_p, neg_p, nextafter_p, not_p, or_p, polygamma_p, population_count_p, pow_p, real_p,
    rem_p, round_p, rsqrt_p, select_n_p, shift_left_p, shift_right_arithmetic_p,
    shift_right_logical_p, sign_p, sin_p, sinh_p, sqrt_p, square_p, sub_p, tan_p, tanh_p,
    xor_p,
)
from pyjax._src.lax.precision_ops import (  # noqa: F401
    DotAlgorithm, DotAlgorithmPreset, Precision, PrecisionLike, RoundingMethod, mulhi,
    mulhi_p, reciprocal, reduce_precision, reduce_precision_p,
)
from pyjax._src.lax.indexing import (  # noqa: F401
    gather_p, scatter_add_p, scatter_max_p, scatter_min_p, scatter_mul_p, scatter_p,
    scatter_sub, scatter_sub_p,
)
from pyjax._src.lax.parallel import (  # noqa: F401
    axis_index_p, pmax_p, pmin_p, psum_p,
)
from pyjax._src.lax.reductions import (  # noqa: F401
    argmax_p, argmin_p, cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p,
    reduce_and_p, reduce_max_p, reduce_min_p, reduce_or_p, reduce_prod_p, reduce_sum_p,
    reduce_xor_p,
)
from pyjax._src.lax.slicing import (  # noqa: F401
    dynamic_slice_p, dynamic_update_slice_p, slice_p,
)
from pyjax._src.lax.structural import (  # noqa: F401
    broadcast_in_dim_p, concatenate_p, iota_p, pad_p, reshape_p, rev_p, squeeze_p,
    transpose_p,
)
from pyjax._src.api.custom_root import custom_root  # noqa: F401
from pyjax._src.lax.dot import DotDimensionNumbers  # noqa: F401


# Families that few programs use load on first access (PEP 562) to keep `import pyjax`
# cheap; "public=private" renames an attribute.
_LAZY_FAMILIES = {
    "conv_helpers": ("batch_matmul conv_general_dilated_local conv_general_dilated_patches "
        "conv_general_permutations conv_general_shape_tuple conv_shape_tuple "
        "conv_transpose_shape_tuple reduce_window_shape_tuple"),
    "convolution": ("ConvDimensionNumbers "
        "ConvGeneralDilatedDimensionNumbers=ConvDimensionNumbers conv "
        "conv_dimension_numbers conv_general_dilated conv_general_dilated_p "
        "conv_transpose conv_with_general_padding padtype_to_pads"),
    "fft": "FftType fft fft_p",
    "collective_exchange": ("all_gather all_gather_p all_to_all all_to_all_p axis_size "
        "pbroadcast ppermute ppermute_p pshuffle psum_scatter pswapaxes"),
    "program": ("composite dce_sink dce_sink_p dtype optimization_barrier optimization_barrier_p "
        "platform_dependent shape_as_value stage stage_p"),
    "random_gamma": "random_gamma_grad",
    "tokens": "after_all after_all_p create_token create_token_p precv psend",
    "transfers": "device_put_p",
    "rng": "RandomAlgorithm rng_bit_generator rng_bit_generator_p rng_uniform rng_uniform_p",
    "special": ("bessel_i0e bessel_i0e_p bessel_i1e bessel_i1e_p betainc igamma "
        "igamma_grad_a igamma_grad_a_p igamma_p igammac igammac_p "
        "regularized_incomplete_beta_p=betainc_p zeta zeta_p"),
    "scaled_dot": "scaled_dot",
    "ragged_collectives": "ragged_all_to_all ragged_all_to_all_p",
    "reshaping": ("broadcast_like broadcast_shapes broadcast_to_rank collapse empty full "
        "full_like index_take split split_p stack stack_p tile tile_p unstack unstack_p"),
    "windowed_reductions": ("reduce reduce_p reduce_window reduce_window_max_p reduce_window_min_p "
        "reduce_window_p reduce_window_sum_p select_and_gather_add_p "
        "select_and_scatter_add_p select_and_scatter_p"),
}
_LAZY_NAMES = {public: (module, private) for module, names in _LAZY_FAMILIES.items()
               for public, _, private in (n.partition("=") for n in names.split())}


def __getattr__(name):
    import importlib
    if name == "linalg":   # the jax.lax.linalg submodule
        return importlib.import_module("pyjax.lax.linalg")
    if name in _LAZY_NAMES:
        module, private = _LAZY_NAMES[name]
        value = getattr(importlib.import_module(f"pyjax._src.lax.{module}"), private or name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pyjax.lax' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY_NAMES) | {"linalg"})
