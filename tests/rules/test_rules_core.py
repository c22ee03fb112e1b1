"""The uniform rule harness, core part: for every registered primitive and sample,
abstract_eval agrees with impl, eager agrees with impl, jit (NumPy executor) agrees with
eager, and eval_jaxpr of the staged jaxpr agrees with the function; check_jaxpr passes."""
import numpy as np
import pytest

import pyjax
from harness import assert_close, bind_as_list, rule_gaps, sample_cases
from pyjax._src import config
from pyjax._src.core.avals import get_aval
from pyjax._src.core.jaxpr import check_jaxpr, eval_jaxpr

CASES = sample_cases()


def _as_list(x, prim):
    return list(x) if prim.multiple_results else [x]


@pytest.mark.parametrize("prim,sample", CASES)
def test_abstract_eval_agrees_with_impl(prim, sample):
    avals = [get_aval(a) for a in sample.args]
    out_avals = _as_list(prim.abstract_eval(*avals, **sample.params), prim)
    values = [np.asarray(a, get_aval(a).dtype) for a in sample.args]
    outs = _as_list(prim.impl(*values, **sample.params), prim)
    assert len(outs) == len(out_avals)
    for out, aval in zip(outs, out_avals):
        out = np.asarray(out)
        assert out.shape == aval.shape, (prim, out.shape, aval)
        assert out.dtype == aval.dtype, (prim, out.dtype, aval)


@pytest.mark.parametrize("prim,sample", CASES)
def test_eager_and_jit_and_eval_jaxpr_agree(prim, sample):
    f = bind_as_list(prim, sample.params)
    values = [np.asarray(a, get_aval(a).dtype) for a in sample.args]
    expected = _as_list(prim.impl(*values, **sample.params), prim)
    eager = f(*sample.args)
    with config.executor("numpy"):
        jitted = pyjax.jit(f)(*sample.args)
    closed = pyjax.make_jaxpr(f)(*sample.args)
    check_jaxpr(closed.jaxpr)
    replayed = eval_jaxpr(closed.jaxpr, closed.consts, *sample.args)
    for e, a, b, c in zip(expected, eager, jitted, replayed):
        assert isinstance(a, pyjax.Array) and isinstance(b, pyjax.Array)
        assert_close(a, e)
        assert_close(b, e)
        assert_close(c, e)


def test_every_primitive_has_impl_abstract_eval_and_samples():
    gaps = rule_gaps("impl") + rule_gaps("abstract_eval") + rule_gaps("samples")
    assert not gaps, "\n".join(gaps)


def test_primitives_are_declared_in_one_call():
    """No rule or flag is attached to a primitive (or set on a rule function) after its
    define_primitive call: everything a primitive is lives in that one call."""
    import ast
    import pathlib

    from pyjax._src.core.trace import Primitive
    fields = set(vars(Primitive("probe"))) - {"name"}
    src = pathlib.Path(pyjax.__file__).parent / "_src"
    found = []
    for path in sorted(src.rglob("*.py")):
        if path.parent.name == "extend":
            continue   # JAX's jax.extend API fills a user primitive's rules by assignment
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for t in targets:
                if isinstance(t, ast.Attribute) and t.attr in fields and not (
                        isinstance(t.value, ast.Name) and t.value.id == "self"):
                    found.append(f"{path.relative_to(src)}:{node.lineno} sets .{t.attr}")
    assert not found, "\n".join(found)
