"""pyjax.debug.explain: the jaxpr as a table of equations with the type of every value
and the source line each came from (pyjax only: JAX has no equivalent)."""
from __future__ import annotations

import inspect
import io
import re

import pyjax as jax
import pyjax.numpy as jnp


def _layer(h, w):
    return jnp.tanh(h @ w)


def _model(x, params):
    y = _layer(x, params["w"])
    z = jax.lax.fori_loop(0, 3, lambda i, c: c * 2, y)
    return z.sum() + 1


def _line_of(fn, text):
    """The file line of fn's source holding `text`."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def _cells(line):
    """A table line's cells (columns are two or more spaces apart)."""
    return re.split(r"\s{2,}", line.strip())


def test_table_has_types_sources_and_nested_jaxprs(capsys):
    jax.debug.explain(_model)(jnp.ones((2, 3)), {"w": jnp.ones((3, 4))})
    lines = capsys.readouterr().out.splitlines()
    here = "test_explain.py:{} in {}: {}"
    layer = here.format(_line_of(_layer, "tanh"), "_layer", "return jnp.tanh(h @ w)")
    fori = "z = jax.lax.fori_loop(0, 3, lambda i, c: c * 2, y)"
    loop = _line_of(_model, "fori_loop")
    total = here.format(_line_of(_model, "z.sum()"), "_model", "return z.sum() + 1")
    assert lines[:2] == ["explain(_model): 5 equations",
                         "  inputs:    a: f32[2,3] (x), b: f32[3,4] (params['w'])"]
    assert [_cells(line) for line in lines[2:-2]] == [
        ["step", "defines", "operation", "source"],
        ["----", "-" * 22, "-" * 60, "------"],
        ["1", "c: f32[2,4]", "dot_general[preferred_element_type=float32] a b", layer],
        ["2", "d: f32[2,4]", "tanh c", layer],
        ["3", "e: ~i32[], f: f32[2,4]",
         "scan[length=3 num_carry=2 num_consts=0 reverse=False unro...",
         here.format(loop, "_model", fori)],
        ["g: ~i32[], h: f32[2,4]", "inputs of scan jaxpr 3.* (returns i j)"],
        ["3.1", "i: ~i32[]", "add g 1:i32[]", here.format(loop, "_model", fori)],
        ["3.2", "j: f32[2,4]", "mul h 2.0:f32[]", here.format(loop, "<lambda>", fori)],
        ["4", "k: f32[]", "reduce_sum[axes=(0, 1)] f", total],
        ["5", "l: f32[]", "add k 1.0:f32[]", total]]
    assert lines[-2:] == [
        "  outputs:   l: f32[]",
        "  ~ marks a weak type (a Python scalar's: it takes the dtype of the other operand)"]
    # The columns line up: every source starts where the header's does.
    column = lines[2].index("source")
    assert all(line[column:].startswith("test_explain.py:") for line in lines[4:-2]
               if "inputs of" not in line)


def test_branches_constants_statics_and_file():
    table = jnp.arange(3.0) * 10      # a closed-over array: a constant of the jaxpr

    def pick(flag, x, scale):
        return jax.lax.cond(flag, lambda v: v + table, lambda v: v * scale, x)

    buffer = io.StringIO()
    jax.debug.explain(pick, static_argnums=2, file=buffer)(True, jnp.ones(3), 4.0)
    lines = buffer.getvalue().splitlines()
    assert lines[0] == "explain(pick): 2 equations"
    assert lines[1] == "  inputs:    b: bool[] (flag), c: f32[3] (x)"
    assert lines[2] == "  constants: a: f32[3]"
    rows = [line.split(None, 1) for line in lines[5:-1]]
    assert [r[0] for r in rows] == ["1", "2", "f:", "2.1.1", "i:", "2.2.1"]
    cond_line = _line_of(pick, "lax.cond")
    assert f"  test_explain.py:{cond_line} in pick: return jax.lax.cond(" in lines[6]
    assert "d a c" in lines[6]                          # the constant goes in as an operand
    assert "f: f32[3], g: f32[3]  inputs of cond branches 2.1.* (returns h)" in lines[7]
    assert "mul g 4.0:f32[]" in lines[8] and "in <lambda>" in lines[8]   # static: a literal
    assert "add j i" in lines[10]
    assert lines[-1] == "  outputs:   e: f32[3]"


def test_backward_pass_rows_name_the_forward_line(capsys):
    def loss(x):
        return jnp.sum(jnp.sin(x) * 2)

    jax.debug.explain(jax.grad(loss))(jnp.ones(2))
    rows = capsys.readouterr().out.splitlines()[4:-1]
    line = _line_of(loss, "jnp.sin")
    # The cosine of sin's derivative and the products of the backward pass all come from
    # the user's forward line, not from the line that called grad.
    assert all(f"test_explain.py:{line} in loss:" in row for row in rows), rows
