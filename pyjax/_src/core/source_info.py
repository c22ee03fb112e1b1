"""Where an equation came from. An equation's source_info is (file, line, function) of the
user's code that staged it, plus the jax.named_scope names as a fourth entry inside a
scope, or None. Equations made while transposing (grad's backward pass) carry a
BackwardSource: the forward equation's location, and the select_n (jnp.where) whose
unselected side the cotangent came from, if any, so that jax_debug_nans can name the FAQ's
where-trap. Imports nothing from pyjax."""
from __future__ import annotations

import linecache
import os

_MAX_CODE_CHARS = 70


class BackwardSource(tuple):
    """The source_info of an equation of a backward pass: that of the forward equation
    being transposed. `masked_by` is the source_info of the select_n whose case received
    this cotangent (zero where the other case was selected), or None."""

    def __new__(cls, forward, masked_by=None):
        self = super().__new__(cls, forward)
        self.masked_by = masked_by
        return self


def describe(source_info, full_path=False) -> str:
    """'file.py:12 in fn: <the line's code>' (the full path when asked), '' for None."""
    if not source_info:
        return ""
    filename, line, function = source_info[:3]
    scope = f" [{source_info[3]}]" if len(source_info) > 3 else ""
    code = linecache.getline(filename, line).strip()
    if len(code) > _MAX_CODE_CHARS:
        code = code[:_MAX_CODE_CHARS - 3] + "..."
    name = filename if full_path else os.path.basename(filename)
    where = f"{name}:{line} in {function}{scope}"
    return f"{where}: {code}" if code else where
