"""jax.scipy.cluster.vq: nearest-code assignment for vector quantization."""
from __future__ import annotations

from pyjax._src.api.vmap import vmap
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import linalg as np_linalg
from pyjax._src.numpy import reductions as red
from pyjax._src.numpy.util import check_arraylike, promote_dtypes_inexact


def vq(obs, code_book, check_finite: bool = True):
    """Assign each observation to its nearest code (Euclidean distance), like
    scipy.cluster.vq.vq. Returns ``(code, dist)``: the index of the nearest row of
    ``code_book`` for each row of ``obs``, and the distance to it. One-dimensional
    inputs are taken as length-1 observations and codes. ``check_finite`` is unused."""
    del check_finite  # inputs are never checked, as in JAX
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs_arr, book = promote_dtypes_inexact(lnp.asarray(obs), lnp.asarray(code_book))
    if obs_arr.ndim != book.ndim:
        raise ValueError("Observation and code_book should have the same rank, got shapes "
                         f"{obs_arr.shape} and {book.shape}.")
    if obs_arr.ndim == 1:
        obs_arr, book = obs_arr[:, None], book[:, None]
    if obs_arr.ndim != 2:
        raise ValueError("vq takes observations and codes of rank 1 or 2, got rank "
                         f"{obs_arr.ndim}.")
    dist = vmap(lambda ob: np_linalg.norm(ob[None] - book, axis=-1))(obs_arr)
    code = red.argmin(dist, axis=-1)
    return code, red.min(dist, axis=-1)
