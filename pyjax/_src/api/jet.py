"""jax.experimental.jet: Taylor-mode automatic differentiation of a function at given
primals along given Taylor series, through the jet trace of interpreters/jet.py and each
primitive's jet rule."""
from __future__ import annotations

from pyjax._src import tree_util
from pyjax._src.core.avals import get_aval
from pyjax._src.interpreters.jet import jet_flat, zero_series
from pyjax._src.lax import elementwise as ew
from pyjax._src.lax import structural


def fact(n):
    """n! as a float (exp(lgamma(n + 1)), JAX's)."""
    return ew.exp(ew.lgamma(n + 1.))


def jet(fun, primals, series, factorial_scaled=True, **_):
    r"""Taylor-mode higher-order automatic differentiation.

    Args:
      fun: the function to differentiate, of arrays (or scalars), returning an array, a
        scalar or a pytree of them.
      primals: its arguments, a tuple or list of arrays: the point of expansion.
      series: for each primal, a tuple or list of the higher-order terms of its Taylor
        series; the (common) length is the degree of the truncated Taylor polynomial.
      factorial_scaled: if True (the default), the n-th term of each input and output
        series is the n-th derivative (the coefficient times n!); if False, the terms
        are the coefficients of the series themselves.

    Returns:
      ``(primals_out, series_out)``: ``fun(*primals)``, and for each output its terms
      of the Taylor series of ``fun`` along the input series (with ``primals_out``'s
      structure, a list of terms in place of each array).
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") \
            from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        if not tree_util.treedef_is_leaf(tree_util.tree_structure(x)):
            raise ValueError(f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            if not tree_util.treedef_is_leaf(tree_util.tree_structure(t)):
                raise ValueError(f"term {j} for argument {i} is not an array")
    if factorial_scaled:
        series = [[term / fact(k + 1) for k, term in enumerate(terms)] for terms in series]
    out_tree = {}

    def flat_fun(*args):
        leaves, out_tree["tree"] = tree_util.tree_flatten(fun(*args))
        return leaves

    out_primals, out_series = jet_flat(flat_fun, order, list(primals), series)
    out_terms = [[structural.zeros_like_aval(get_aval(p))] * order if s is zero_series
                 else s for p, s in zip(out_primals, out_series)]
    if factorial_scaled:
        out_terms = [[term * fact(k + 1) for k, term in enumerate(terms)]
                     for terms in out_terms]
    tree = out_tree["tree"]
    return tree_util.tree_unflatten(tree, out_primals), tree_util.tree_unflatten(tree, out_terms)


def jet2(fun, primals, series, **kwargs):
    """jet with factorial_scaled=False: the series are Taylor coefficients."""
    return jet(fun, primals, series, factorial_scaled=False, **kwargs)
