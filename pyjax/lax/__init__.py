"""Public lax module, mirroring `jax.lax`: the strict primitive wrappers. Re-exports only."""
from pyjax._src.lax.control_flow import (  # noqa: F401
    associative_scan, cond, fori_loop, map, scan, switch, while_loop,
)
from pyjax._src.lax.convolution import (  # noqa: F401
    ConvDimensionNumbers, conv, conv_dimension_numbers, conv_general_dilated,
    conv_general_dilated_p, conv_transpose, conv_with_general_padding, padtype_to_pads,
)
from pyjax._src.lax.dot import dot, dot_general  # noqa: F401
from pyjax._src.lax.fft import FftType, fft, fft_p  # noqa: F401
from pyjax._src.lax.elementwise import (  # noqa: F401
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitcast_convert_type,
    bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clamp, clz, complex,
    conj, convert_element_type, cos, cosh, digamma, div, eq, erf, erf_inv, erfc, exp, exp2,
    expm1, floor, ge, gt, imag, integer_pow, is_finite, le, lgamma, log, log1p, logistic,
    lt, max, min, mul, ne, neg, nextafter, polygamma, population_count, pow, real, rem,
    round, rsqrt, select, select_n, shift_left, shift_right_arithmetic,
    shift_right_logical, sign, sin, sinh, sqrt, square, sub, tan, tanh, zeros_like,
)
from pyjax._src.lax.parallel import (  # noqa: F401
    all_gather, axis_index, pmax, pmean, pmin, psum,
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
    approx_max_k, approx_min_k, sort, sort_key_val, sort_p, top_k, top_k_p,
)
from pyjax._src.lax.windowed_reductions import (  # noqa: F401
    reduce, reduce_p, reduce_window, reduce_window_max_p, reduce_window_min_p,
    reduce_window_p, reduce_window_sum_p, select_and_gather_add_p, select_and_scatter_add_p,
)
from pyjax._src.lax.structural import (  # noqa: F401
    broadcast, broadcast_in_dim, broadcasted_iota, concatenate, expand_dims, full, iota,
    pad, reshape, rev, squeeze, transpose,
)

from pyjax.lax import linalg  # noqa: F401,E402  (the jax.lax.linalg submodule)
