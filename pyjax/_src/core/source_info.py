"""Where an equation came from. An equation's source_info is a SourceInfo: (file, line,
function) of the user's code that staged it and, fourth, its name stack (the
jax.named_scope names and the transformations, jvp, vmap, transpose, it was staged under;
`source_info.name_stack` prints as JAX's, 'foo/vmap(bar)/baz'), or None. Equations made
while transposing (grad's backward pass) carry a BackwardSource: the forward equation's
location, its name stack under 'transpose', and the select_n (jnp.where) whose unselected
side the cotangent came from, if any, so that jax_debug_nans can name the FAQ's
where-trap. Imports nothing from pyjax."""
from __future__ import annotations

import linecache
import os
from typing import NamedTuple

_MAX_CODE_CHARS = 70


class Transform(NamedTuple):
    """A transformation in a name stack: it wraps the name that follows it."""
    name: str


class NameStack(tuple):
    """The scopes (str) and transformations (Transform) an equation was staged under,
    outermost first. Printed as JAX prints its name stacks: a transformation wraps the
    scope that follows it ('foo/vmap(bar)/baz'), or nothing ('foo/vmap()')."""

    __slots__ = ()

    def __str__(self):
        scope: list[str] = []
        for elem in reversed(self):
            if type(elem) is Transform:
                if scope:
                    scope[-1] = f"{elem.name}({scope[-1]})"
                else:
                    scope.append(f"{elem.name}()")
            else:
                scope.append(elem)
        return "/".join(reversed(scope))


EMPTY_NAME_STACK = NameStack()


class SourceInfo(tuple):
    """(file, line, function, name_stack) of a staged equation."""

    __slots__ = ()

    def __new__(cls, where, name_stack=EMPTY_NAME_STACK):
        return super().__new__(cls, (*where[:3], name_stack))

    @property
    def name_stack(self) -> NameStack:
        return self[3]

    def under(self, scope):
        """This source_info with `scope` outermost in its name stack."""
        return SourceInfo(self, NameStack((scope, *self[3])))


class BackwardSource(SourceInfo):
    """The source_info of an equation of a backward pass: that of the forward equation
    being transposed, with `name_stack` (its own under 'transpose'). `masked_by` is the
    source_info of the select_n whose case received this cotangent (zero where the other
    case was selected), or None."""

    def __new__(cls, forward, name_stack, masked_by=None):
        self = super().__new__(cls, forward, name_stack)
        self.masked_by = masked_by
        return self


def describe(source_info, full_path=False) -> str:
    """'file.py:12 in fn: <the line's code>' (the full path when asked), '' for None."""
    if not source_info:
        return ""
    filename, line, function = source_info[:3]
    stack = source_info[3] if len(source_info) > 3 else ()
    # the name stack when it names a jax.named_scope (transformations alone say nothing)
    scope = f" [{stack}]" if any(type(e) is str for e in stack) else ""
    code = linecache.getline(filename, line).strip()
    if len(code) > _MAX_CODE_CHARS:
        code = code[:_MAX_CODE_CHARS - 3] + "..."
    name = filename if full_path else os.path.basename(filename)
    where = f"{name}:{line} in {function}{scope}"
    return f"{where}: {code}" if code else where
