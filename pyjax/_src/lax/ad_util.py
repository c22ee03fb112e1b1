"""stop_gradient: the identity whose derivative is zero (a primitive, printed as
`stop_gradient` in jaxprs). Imports the lax building blocks only."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import NO_TRANSPOSE, define_primitive
from pyjax._src.interpreters.ad import zero_jvp
from pyjax._src.lax import builders as b


stop_gradient_p = define_primitive(
    "stop_gradient", impl=lambda x: x, abstract_eval=lambda x: x, jvp=zero_jvp,
    transpose=NO_TRANSPOSE, batch=lambda args, dims: (stop_gradient_p.bind(args[0]), dims[0]),
    lower=lambda ctx, x: x,
    samples=lambda: [b.Sample([b.random_values((2, 3), np.float32)])])


def stop_gradient(x):
    """x unchanged, but treated as a constant by differentiation: its derivative is zero.
    Works on pytrees; leaves that are not floating point pass through untouched."""
    def stop(leaf):
        if dtypes.is_inexact(get_aval(leaf).dtype):
            return stop_gradient_p.bind(leaf)
        return leaf
    return tree_util.tree_map(stop, x)
