"""The call primitive of jit (`jit`, printed as `jit[name=f jaxpr={...}]`): a closed
jaxpr applied to arguments. Under the eval trace it runs the jaxpr through the executor;
under every other trace its rules recurse into the jaxpr."""
from __future__ import annotations

from pyjax._src.backends import dispatch, numpy_backend
from pyjax._src.core.trace import define_primitive


def _jit_abstract_eval(*in_avals, jaxpr, name, donated_invars, inline, keep_unused):
    expected = jaxpr.in_avals
    if len(in_avals) != len(expected) or any(
            not a.same_type(e) for a, e in zip(in_avals, expected)):
        raise TypeError(f"jit call of {name}: argument types {list(in_avals)} do not match "
                        f"the traced jaxpr's {expected}")
    return jaxpr.out_avals


def _jit_impl(*values, jaxpr, name, donated_invars, inline, keep_unused):
    return numpy_backend.execute_closed_jaxpr(jaxpr, list(values))


def _jit_eager(*args, jaxpr, name, donated_invars, inline, keep_unused):
    arrays = [numpy_backend._wrap(numpy_backend.host_value(x, v.aval), v.aval)
              if not dispatch.is_array(x) else x
              for x, v in zip(args, jaxpr.jaxpr.invars)]
    return dispatch.run_closed_jaxpr(jaxpr, arrays, donated_invars)


def _jit_samples():
    """A small traced function, as jit would build it (traced lazily, for the harness)."""
    import numpy as np

    from pyjax._src.interpreters import partial_eval as pe
    from pyjax._src.lax import elementwise as ew
    from pyjax._src.lax.builders import Sample, random_values

    x = random_values((2, 3), np.float32)
    closed, _ = pe.trace_to_closed_jaxpr(lambda a, b: [ew.mul(ew.sin(a), b), ew.cos(b)],
                                         [pe.get_aval(x), pe.get_aval(x)])
    return [Sample([x, random_values((2, 3), np.float32, seed=1)],
                   {"jaxpr": closed, "name": "f", "donated_invars": (False, False),
                    "inline": False, "keep_unused": False})]


jit_p = define_primitive("jit", multiple_results=True, impl=_jit_impl,
                         abstract_eval=_jit_abstract_eval, eager=_jit_eager,
                         samples=_jit_samples)
jit_p.is_higher_order = True
