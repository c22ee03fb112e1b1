"""pyjax.debug.explain(f)(*args): the jaxpr jit would run for these arguments, as a table
with the shape and dtype of every intermediate value and the user's source line that made
each equation (JAX's make_jaxpr shows no sources). Imports api.jit and core."""
from __future__ import annotations

import functools
import sys

from pyjax._src.api.jit import jit
from pyjax._src.core import jaxpr as jx
from pyjax._src.core import source_info

_MAX_PARAM_CHARS = 20     # longer parameter values (dimension numbers...) are left out
_MAX_OPERATION_CHARS = 60
_WEAK_NOTE = ("  ~ marks a weak type (a Python scalar's: it takes the dtype of the other "
              "operand)")


def explain(fun, *, static_argnums=(), static_argnames=(), file=None):
    """A function that traces `fun` on its arguments (as jit does) and prints one row per
    equation: its number, the values it defines with their types, the operation, and the
    file, line, function and source text it came from. Equations of nested jaxprs (loop
    bodies, cond branches, inner jits) follow their parent, numbered 3.1, 3.2, ... Prints
    to `file` (default sys.stdout); returns nothing."""

    @functools.wraps(fun)
    def explained(*args, **kwargs):
        traced = jit(fun, static_argnums=static_argnums,
                     static_argnames=static_argnames).trace(*args, **kwargs)
        text = format_table(traced.jaxpr.jaxpr, _name_of(fun))
        print(text, file=sys.stdout if file is None else file)
    return explained


def _name_of(fun):
    return getattr(fun, "__name__", None) or type(fun).__name__


def format_table(jaxpr: jx.Jaxpr, name: str) -> str:
    """The table explain prints, for `jaxpr` traced from the function `name`."""
    namer = jx._Namer()
    constants = ", ".join(_typed(v, namer) for v in jaxpr.constvars)   # named first
    arg_names = getattr(jaxpr.debug_info, "arg_names", None) or []
    inputs = [f"{_typed(v, namer)} ({arg_names[i]})" if i < len(arg_names) and arg_names[i]
              else _typed(v, namer) for i, v in enumerate(jaxpr.invars)]
    lines = [f"explain({name}): {len(jaxpr.eqns)} equations",
             "  inputs:    " + (", ".join(inputs) or "none")]
    if constants:
        lines.append("  constants: " + constants)
    rows = []
    _collect_rows(jaxpr, namer, "", rows)
    header = ("step", "defines", "operation", "source")
    widths = [max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
              for i in range(3)]
    for row in [header, tuple("-" * w for w in widths) + ("-" * 6,)] + rows:
        lines.append("  " + "  ".join([row[0].rjust(widths[0]), row[1].ljust(widths[1]),
                                       row[2].ljust(widths[2]), row[3]]).rstrip())
    lines.append("  outputs:   " + ", ".join(_typed(v, namer) for v in jaxpr.outvars))
    if any("~" in line for line in lines):
        lines.append(_WEAK_NOTE)
    return "\n".join(lines)


def _collect_rows(jaxpr, namer, prefix, rows):
    for i, eqn in enumerate(jaxpr.eqns, 1):
        step = f"{prefix}{i}"
        defines = ", ".join(_typed(v, namer) for v in eqn.outvars) or "(effect)"
        operands = " ".join(namer(v) for v in eqn.invars)
        operation = f"{eqn.primitive.name}{_params(eqn, namer)} {operands}".rstrip()
        if len(operation) > _MAX_OPERATION_CHARS:
            operation = operation[:_MAX_OPERATION_CHARS - 3] + "..."
        rows.append((step, defines, operation, source_info.describe(eqn.source_info)))
        nested = [(key, inner) for key, value in eqn.params.items()
                  for inner in jx._sub_jaxprs(value)]
        for j, (key, inner) in enumerate(nested, 1):
            inner_step = step if len(nested) == 1 else f"{step}.{j}"
            inputs = ", ".join(_typed(v, namer) for v in inner.constvars + inner.invars)
            outputs = " ".join(namer(v) for v in inner.outvars)
            rows.append(("", inputs or "(none)", f"inputs of {eqn.primitive.name} {key} "
                                                 f"{inner_step}.* (returns {outputs})", ""))
            _collect_rows(inner, namer, f"{inner_step}.", rows)


def _typed(v, namer):
    return f"{namer(v)}: {'~' if v.aval.weak_type else ''}{v.aval.str_short(True)}"


def _params(eqn, namer):
    """The short parameters (axes=(0,), length=3...): nested jaxprs get rows of their own
    and long values would hide the rest of the row."""
    shown = eqn.primitive.shown_params
    params = eqn.params if shown is None else shown(eqn.params)
    items = []
    for key, value in params.items():
        if value is None or jx._is_jaxpr_param(value):
            continue
        text = jx._param_str(value, namer, "")
        if len(text) <= _MAX_PARAM_CHARS:
            items.append(f"{key}={text}")
    return f"[{' '.join(items)}]" if items else ""
