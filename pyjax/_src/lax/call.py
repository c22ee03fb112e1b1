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


jit_p = define_primitive("jit", multiple_results=True, impl=_jit_impl,
                         abstract_eval=_jit_abstract_eval, eager=_jit_eager)
jit_p.is_higher_order = True
