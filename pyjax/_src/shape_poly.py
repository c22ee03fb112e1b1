"""Symbolic dimensions (JAX's shape polymorphism): dimension expressions over named
dimension variables, the scope that holds their constraints, the parser of shape
specifications ("b, 2*b, floordiv(b, 2)"), and the decision procedure behind their
comparisons.

An expression is a sum of terms with integer coefficients; a term is a product of
factors raised to positive powers; a factor is a dimension variable or an operation
(floordiv, mod, max, min) of two expressions. Expressions are kept normalized (terms
in JAX's order, largest first, the constant last; a constant is a Python int), so
equal expressions print alike and hash alike. Comparisons that the bounds of the
variables (each >= 1) and the scope's constraints cannot decide raise
InconclusiveDimensionOperation, as JAX's. Level 0: imports only the standard library
and errors."""
from __future__ import annotations

import io
import math
import operator
import os
import sys
import tokenize
import types
from collections.abc import Sequence

from pyjax._src.errors import InconclusiveDimensionOperation

_INF = math.inf
_OPERATIONS = ("floordiv", "mod", "max", "min")


# --- factors, terms and expressions --------------------------------------------------

class _Factor:
    """A dimension variable (`var`) or an operation applied to two expressions."""
    __slots__ = ("var", "operation", "operands", "key", "_hash")

    def __init__(self, var=None, operation=None, operands=()):
        self.var, self.operation, self.operands = var, operation, tuple(operands)
        if var is not None:
            self.key = (1, var)
        else:
            keys = tuple(_expr_key(o) for o in self.operands)
            self.key = (1 + sum(k[0] for k in keys), operation, keys)
        self._hash = hash(self.key)

    @property
    def size(self):
        return self.key[0]

    def __eq__(self, other):
        return isinstance(other, _Factor) and self.key == other.key

    def __hash__(self):
        return self._hash

    def __str__(self):
        if self.var is not None:
            return self.var
        return f"{self.operation}({', '.join(str(o) for o in self.operands)})"

    def variables(self) -> set[str]:
        if self.var is not None:
            return {self.var}
        return set().union(*(_variables(o) for o in self.operands))


class _Term:
    """A product of factors with positive exponents, sorted by factor; () is 1."""
    __slots__ = ("factors", "key", "_hash")

    def __init__(self, factors):
        self.factors = tuple(sorted(factors, key=lambda fe: (fe[0].key, fe[1])))
        self.key = (sum(1 + e * f.size for f, e in self.factors),
                    tuple((f.key, e) for f, e in self.factors))
        self._hash = hash(self.key)

    def __eq__(self, other):
        return isinstance(other, _Term) and self.key == other.key

    def __hash__(self):
        return self._hash

    def __str__(self):
        return "*".join(f"{f}^{e}" if e != 1 else str(f) for f, e in self.factors)

    def times(self, other: _Term) -> _Term:
        powers = dict(self.factors)
        for f, e in other.factors:
            powers[f] = powers.get(f, 0) + e
        return _Term(powers.items())

    def without(self, factor: _Factor, power: int) -> _Term:
        return _Term([(f, e - power if f == factor else e) for f, e in self.factors
                      if not (f == factor and e == power)])


_ONE = _Term(())


class _DimExpr:
    """A symbolic dimension: a normalized sum of terms in a SymbolicScope (JAX's
    _DimExpr). Build them with jax.export.symbolic_shape; arithmetic with ints and
    expressions of the same scope gives expressions (or ints when constant)."""
    __array_priority__ = 1000
    __slots__ = ("_terms", "_scope", "_key", "_hash")

    def __init__(self, terms, scope):
        self._terms = tuple(terms) or ((_ONE, 0),)   # largest term first
        self._scope = scope
        self._key = (sum(1 + abs(k) * t.key[0] for t, k in self._terms),
                     tuple((t.key, k) for t, k in self._terms))
        self._hash = hash(self._key)

    @property
    def scope(self) -> SymbolicScope:
        return self._scope

    def __hash__(self):
        return self._hash

    def __str__(self):
        parts = []
        for t, k in self._terms:
            sign = "+" if k > 0 else "-"
            if k == 0:
                parts.append("0")
            elif t == _ONE:
                parts.append(f"{sign} {abs(k)}")
            else:
                parts.append(f"{sign} {t}" if abs(k) == 1 else f"{sign} {abs(k)}*{t}")
        text = " ".join(parts)
        return text[2:] if text.startswith("+ ") else text

    __repr__ = __str__

    # arithmetic
    def _combine(self, other, k_self, k_other):
        return _linear(self, k_self, other, k_other, self._scope)

    def __add__(self, other):
        if not _is_dim(other):
            return NotImplemented
        return self._combine(other, 1, 1)

    __radd__ = __add__

    def __sub__(self, other):
        if not _is_dim(other):
            return NotImplemented
        return self._combine(other, 1, -1)

    def __rsub__(self, other):
        if not _is_dim(other):
            return NotImplemented
        return self._combine(other, -1, 1)

    def __neg__(self):
        return self._combine(0, -1, 0)

    def __pos__(self):
        return self

    def __mul__(self, other):
        if not _is_dim(other):
            return NotImplemented
        other = _as_expr(other, self._scope)
        coeffs: dict[_Term, int] = {}
        for t1, k1 in self._terms:
            for t2, k2 in other._terms:
                t = t1.times(t2)
                coeffs[t] = coeffs.get(t, 0) + k1 * k2
        return _normalized(coeffs, self._scope)

    __rmul__ = __mul__

    def __pow__(self, power, modulo=None):
        if modulo is not None or not isinstance(power, int) or isinstance(power, bool):
            raise ValueError(f"Symbolic dimension cannot be raised to non-integer powers: "
                             f"'{self}' ** '{power}'")
        if power < 0:
            raise ValueError(f"Symbolic dimension cannot be raised to negative powers: "
                             f"'{self}' ** '{power}'")
        result: DimSize = 1
        for _ in range(power):
            result = result * self
        return result

    def __floordiv__(self, divisor):
        if not _is_dim(divisor):
            return NotImplemented
        return _divmod(self, divisor, self._scope)[0]

    def __rfloordiv__(self, dividend):
        if not _is_dim(dividend):
            return NotImplemented
        return _divmod(_as_expr(dividend, self._scope), self, self._scope)[0]

    def __mod__(self, divisor):
        if not _is_dim(divisor):
            return NotImplemented
        return _divmod(self, divisor, self._scope)[1]

    def __rmod__(self, dividend):
        if not _is_dim(dividend):
            return NotImplemented
        return _divmod(_as_expr(dividend, self._scope), self, self._scope)[1]

    def __divmod__(self, divisor):
        if not _is_dim(divisor):
            return NotImplemented
        return _divmod(self, divisor, self._scope)

    def __rdivmod__(self, dividend):
        if not _is_dim(dividend):
            return NotImplemented
        return _divmod(_as_expr(dividend, self._scope), self, self._scope)

    def __int__(self):
        raise InconclusiveDimensionOperation(
            f"Symbolic dimension '{self}' used in a context that requires a constant")

    def __bool__(self):
        return True     # a dimension is never the int 0 (JAX's answer)

    # comparisons
    def __eq__(self, other):
        if isinstance(other, _DimExpr):
            if other._scope is not self._scope:
                return False
        elif not _is_constant(other):
            return False
        diff = self - other     # normalized: a constant difference is an int
        return not isinstance(diff, _DimExpr) and diff == 0

    def __ne__(self, other):
        return not self.__eq__(other)

    def __ge__(self, other):
        return _geq(self, other, lambda: f"'{self}' >= '{other}'")

    def __le__(self, other):
        return _geq(other, self, lambda: f"'{self}' <= '{other}'")

    def __gt__(self, other):
        return not _geq(other, self, lambda: f"'{self}' > '{other}'")

    def __lt__(self, other):
        return not _geq(self, other, lambda: f"'{self}' < '{other}'")


DimSize = int | _DimExpr


def _is_constant(d) -> bool:
    try:
        operator.index(d)
    except TypeError:
        return False
    return True


def _is_dim(d) -> bool:
    return isinstance(d, _DimExpr) or _is_constant(d)


def is_symbolic_dim(d) -> bool:
    """Whether `d` is a symbolic dimension (not a constant)."""
    return isinstance(d, _DimExpr)


def _expr_key(e):
    return e._key if isinstance(e, _DimExpr) else (1, ((_ONE.key, e),))


def _variables(e) -> set[str]:
    if not isinstance(e, _DimExpr):
        return set()
    return set().union(*(f.variables() for t, _ in e._terms for f, _ in t.factors))


def _as_expr(d, scope) -> _DimExpr:
    if isinstance(d, _DimExpr):
        scope._check_same(d)
        return d
    return _DimExpr(((_ONE, operator.index(d)),), scope)


def _sorted_terms(coeffs: dict[_Term, int]):
    return sorted(((t, k) for t, k in coeffs.items() if k), key=lambda tk: tk[0].key,
                  reverse=True)


def _normalized(coeffs: dict[_Term, int], scope) -> DimSize:
    """The expression of `coeffs` with the scope's equalities applied: an int if it
    is constant."""
    coeffs = {t: k for t, k in coeffs.items() if k}
    for _ in range(8):      # each rewrite replaces a term by smaller ones
        rewrite = _rewrite_one(coeffs, scope)
        if rewrite is None:
            break
        coeffs = rewrite
    terms = _sorted_terms(coeffs)
    if not terms:
        return 0
    if terms[0][0] == _ONE:
        return terms[0][1]
    return _DimExpr(terms, scope)


def _rewrite_one(coeffs, scope):
    """`coeffs` with one term rewritten by an equality constraint `t*k == e` of the
    scope (the term itself, or one of its factors), or None when none applies."""
    rules = scope._rules
    if not rules:
        return None
    for t, tk in coeffs.items():
        candidates = [(t, _ONE)] + ([(_Term([(f, e)]), t.without(f, e))
                                     for f, e in t.factors] if len(t.factors) > 1 else [])
        for lhs, rest in candidates:
            after, k = rules.get(lhs, (None, 0))
            if after is not None and tk % k == 0:
                out = dict(coeffs)
                out[t] -= tk
                for t2, k2 in _as_expr(after, scope)._terms:
                    t3 = t2.times(rest)
                    out[t3] = out.get(t3, 0) + k2 * (tk // k)
                return {x: y for x, y in out.items() if y}
    return None


def _linear(e1, k1, e2, k2, scope) -> DimSize:
    """e1*k1 + e2*k2, normalized."""
    coeffs: dict[_Term, int] = {}
    for e, k in ((e1, k1), (e2, k2)):
        if k == 0:
            continue
        for t, tk in _as_expr(e, scope)._terms:
            coeffs[t] = coeffs.get(t, 0) + tk * k
    return _normalized(coeffs, scope)


def _operation(name, a, b, scope) -> DimSize:
    return _normalized({_Term([(_Factor(operation=name, operands=(
        _as_expr(a, scope), _as_expr(b, scope))), 1)]): 1}, scope)


def _divmod(dividend: _DimExpr, divisor, scope):
    """Polynomial division where it is exact (a constant divisor may leave an integer
    remainder, as for ints); floordiv/mod factors otherwise."""
    if not isinstance(divisor, _DimExpr) and operator.index(divisor) == 0:
        raise ZeroDivisionError("integer division or modulo by zero")
    rest: DimSize = dividend
    quotient: DimSize = 0
    while isinstance(rest, _DimExpr):
        t, k = rest._terms[0]
        if isinstance(divisor, _DimExpr):
            dt, dk = divisor._terms[0]
            powers = dict(t.factors)
            for f, e in dt.factors:
                powers[f] = powers.get(f, 0) - e
            if any(e < 0 for e in powers.values()):
                return _as_fallback(dividend, divisor, scope)
            qt = _Term((f, e) for f, e in powers.items() if e)
        else:
            qt, dk = t, operator.index(divisor)
        qk, r = divmod(k, dk)
        if r:
            return _as_fallback(dividend, divisor, scope)
        q = _normalized({qt: qk}, scope)
        quotient = quotient + q
        rest = rest - q * divisor
    if isinstance(divisor, _DimExpr):
        if rest != 0:
            return _as_fallback(dividend, divisor, scope)
        return quotient, 0
    q, r = divmod(rest, operator.index(divisor))
    return quotient + q, r


def _as_fallback(dividend, divisor, scope):
    return (_operation("floordiv", dividend, divisor, scope),
            _operation("mod", dividend, divisor, scope))


def max_dim(d1, d2) -> DimSize:
    """max(d1, d2) of dimensions: one of them where the bounds decide, else a symbolic
    max (JAX's core.max_dim)."""
    if not (isinstance(d1, _DimExpr) or isinstance(d2, _DimExpr)):
        return max(d1, d2)
    scope = d1.scope if isinstance(d1, _DimExpr) else d2.scope
    lo, hi = _bounds(d1 - d2, scope)
    if lo >= 0:
        return d1
    if hi <= 0:
        return d2
    return _operation("max", d1, d2, scope)


def min_dim(d1, d2) -> DimSize:
    """min(d1, d2) of dimensions (JAX's core.min_dim)."""
    if not (isinstance(d1, _DimExpr) or isinstance(d2, _DimExpr)):
        return min(d1, d2)
    scope = d1.scope if isinstance(d1, _DimExpr) else d2.scope
    lo, hi = _bounds(d1 - d2, scope)
    if lo >= 0:
        return d2
    if hi <= 0:
        return d1
    return _operation("min", d1, d2, scope)


# --- evaluation ---------------------------------------------------------------------

class _IntOps:
    """Evaluation over ints and symbolic dimensions (of another scope)."""
    add = staticmethod(operator.add)
    mul = staticmethod(operator.mul)
    floordiv = staticmethod(operator.floordiv)
    mod = staticmethod(operator.mod)
    max = staticmethod(max_dim)
    min = staticmethod(min_dim)
    constant = staticmethod(int)


_INT_OPS = _IntOps()


def _evaluate(e, env, ops):
    if not isinstance(e, _DimExpr):
        return ops.constant(e)
    total = None
    for t, k in e._terms:
        value = ops.constant(k)
        for f, power in t.factors:
            fv = _evaluate_factor(f, env, ops, e.scope)
            for _ in range(power):
                value = ops.mul(value, fv)
        total = value if total is None else ops.add(total, value)
    return total


def _evaluate_factor(f: _Factor, env, ops, scope):
    if f.var is not None:
        if f.var in env:
            return env[f.var]
        raise UnexpectedDimVar(
            f"Encountered dimension variable '{f.var}' that is not appearing in the "
            f"shapes of the function arguments.\nThe following dimension variables are "
            f"appearing in the shapes of the function arguments: {list(env)}.\nPlease "
            "see https://docs.jax.dev/en/latest/export/shape_poly.html#dimension-"
            "variables-must-be-solvable-from-the-input-shapes for more details.")
    a, b = (_evaluate(o, env, ops) for o in f.operands)
    return getattr(ops, f.operation)(a, b)


def evaluate_dim(d, env, ops=None):
    """The dimension `d` with its variables' values from `env`: ints, or symbolic
    dimensions of another scope; or with `ops` (add, mul, floordiv, mod, max, min,
    constant), anything those combine, such as StableHLO values."""
    if not isinstance(d, _DimExpr):
        return d if ops is None else ops.constant(d)
    return _evaluate(d, env, ops or _INT_OPS)


class UnexpectedDimVar(Exception):
    """A dimension variable that the argument shapes do not determine."""


# --- the decision procedure ---------------------------------------------------------

def _geq(e1, e2, describe) -> bool:
    """e1 >= e2 for all values of the variables satisfying the scope's constraints;
    False if never; InconclusiveDimensionOperation otherwise."""
    scope = e1.scope if isinstance(e1, _DimExpr) else e2.scope if isinstance(
        e2, _DimExpr) else None
    if not _is_dim(e1) or not _is_dim(e2):
        raise TypeError(f"Symbolic dimension comparison {describe()} between a dimension "
                        "and a value that is not a dimension")
    diff = _linear(e1, 1, e2, -1, scope)
    if not isinstance(diff, _DimExpr):
        return diff >= 0
    lo, hi = _bounds(diff, scope)
    if lo >= 0:
        return True
    if hi < 0:
        return False
    assert scope is not None
    where = f"\nUsing symbolic scope {scope}" if scope._constraints else ""
    raise InconclusiveDimensionOperation(
        f"Symbolic dimension comparison {describe()} is inconclusive.{where}")


def _bounds(e, scope, depth=2):
    """(lower, upper) bounds of `e` (ints, or -inf/inf): interval arithmetic over the
    terms, tightened by subtracting each constraint `c >= 0` (the scope's, and those
    each operation factor in `e` implies) from `e`, to `depth` levels."""
    if not isinstance(e, _DimExpr):
        return e, e
    cache = scope._bounds_cache
    found = cache.get((e, depth))
    if found is not None:
        return found
    lo, hi = _interval(e, scope)
    if depth > 0 and (lo == -_INF or hi == _INF or lo < 0 <= hi or lo <= 0 < hi):
        for c in scope._geq_constraints + _implied_constraints(e, scope):
            for k in _multipliers(e, c):
                lo = max(lo, _bounds(e - k * c, scope, depth - 1)[0])
                hi = min(hi, _bounds(e + k * c, scope, depth - 1)[1])
        # a max or min factor is one of its operands: e lies within the bounds of
        # e with the factor replaced by either
        for t, k in e._terms:
            f = t.factors[0][0] if len(t.factors) == 1 and t.factors[0][1] == 1 else None
            if f is None or f.operation not in ("max", "min"):
                continue
            rest = e - k * _normalized({t: 1}, scope)
            (lo1, hi1), (lo2, hi2) = (_bounds(rest + k * o, scope, depth - 1)
                                      for o in f.operands)
            lo, hi = max(lo, min(lo1, lo2)), min(hi, max(hi1, hi2))
    cache[(e, depth)] = (lo, hi)
    return lo, hi


def _multipliers(e, c):
    """Positive multiples k with which `k*c` may cancel a term of `e`."""
    if not isinstance(c, _DimExpr):
        return ()
    ks = {1}
    e_terms = dict(e._terms)
    for t, ck in c._terms:
        ek = e_terms.get(t)
        if ek and t != _ONE and ek % ck == 0:
            ks.add(abs(ek // ck))
    return sorted(ks)


def _implied_constraints(e, scope):
    """`c >= 0` facts about the operation factors of `e`: max >= each operand, each
    operand >= min, 0 <= mod(a, b) <= b - 1 and b*floordiv(a, b) <= a for b > 0."""
    out = []
    for t, _ in e._terms:
        for f, _ in t.factors:
            if f.var is not None:
                continue
            x = _normalized({_Term([(f, 1)]): 1}, scope)
            a, b = f.operands
            if f.operation == "max":
                out += [x - a, x - b]
            elif f.operation == "min":
                out += [a - x, b - x]
            elif _bounds(b, scope, 0)[0] > 0:
                if f.operation == "mod":
                    out += [b - 1 - x]
                else:
                    out += [a - b * x, b * x + b - 1 - a]
    return [c for c in out if isinstance(c, _DimExpr)]


def _interval(e: _DimExpr, scope):
    lo = hi = 0
    for t, k in e._terms:
        tlo, thi = 1, 1
        for f, power in t.factors:
            flo, fhi = _factor_interval(f, scope)
            for _ in range(power):
                tlo, thi = _mul_interval((tlo, thi), (flo, fhi))
        tlo, thi = (k * tlo, k * thi) if k > 0 else (k * thi, k * tlo)
        lo, hi = lo + tlo, hi + thi
    return lo, hi


def _mul_interval(a, b):
    products = [0 if 0 in (x, y) else x * y for x in a for y in b]
    return min(products), max(products)


def _factor_interval(f: _Factor, scope):
    if f.var is not None:
        return scope._var_bounds.get(f.var, (1, _INF))
    (alo, ahi), (blo, bhi) = (_bounds(o, scope, 1) for o in f.operands)
    if f.operation == "max":
        return max(alo, blo), max(ahi, bhi)
    if f.operation == "min":
        return min(alo, blo), min(ahi, bhi)
    if f.operation == "mod":
        if blo > 0:
            return 0, min(bhi - 1, ahi) if alo >= 0 else bhi - 1
        if bhi < 0:
            return blo + 1, 0
        return -_INF, _INF
    if blo > 0 or bhi < 0:      # floordiv
        quotients = [_floordiv_inf(x, y) for x in (alo, ahi) for y in (blo, bhi)]
        return min(quotients), max(quotients)
    return -_INF, _INF


def _floordiv_inf(x, y):
    if math.isinf(y):
        return 0 if not math.isinf(x) else (_INF if (x > 0) == (y > 0) else -_INF)
    if math.isinf(x):
        return x if y > 0 else -x
    return x // y


# --- scopes and constraints ---------------------------------------------------------

class SymbolicScope:
    """Identifies a scope for symbolic expressions, and holds the constraints on them:
    all the expressions one function's shapes use must share one scope.

    Args:
      constraints_str: constraints of the form `e1 >= e2`, `e1 <= e2` or `e1 == e2`
        (the left-hand side of an equality a term times a coefficient).
    """

    def __init__(self, constraints_str: Sequence[str] = ()):
        if isinstance(constraints_str, str):
            raise ValueError("The symbolic constraints should be a sequence of strings. "
                             f"Got {constraints_str!r}")
        self._location = _user_location()
        self._constraints: list[str] = []
        self._explicit: list[tuple[str, str, DimSize]] = []   # (text, "==" or ">=", diff)
        self._geq_constraints: list[DimSize] = []
        self._rules: dict[_Term, tuple[DimSize, int]] = {}
        self._var_bounds: dict[str, tuple[float, float]] = {}
        self._bounds_cache: dict = {}
        for c in constraints_str:
            self._add_constraint(c)
            self._bounds_cache.clear()

    def __str__(self):
        text = f"{id(self)} created at {self._location}"
        if self._constraints:
            text += " with constraints:\n" + "\n".join(f"  {c}" for c in self._constraints)
        return text

    __repr__ = __str__

    def _check_same(self, e: _DimExpr, when="for linear combination", self_descr=" ",
                    other_descr="unknown"):
        if e.scope is not self:
            raise ValueError(
                f"Invalid mixing of symbolic scopes {when}.\n"
                f"Expected {self_descr}scope {self}\nand found for '{e}' ({other_descr}) "
                f"scope {e.scope}\nSee https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#user-specified-symbolic-constraints.")

    def _add_constraint(self, text):
        if not isinstance(text, str):
            raise ValueError(f"SymbolicScope constraint must be a string: got {text!r}")
        for cmp in ("==", ">=", "<="):
            pos = text.find(cmp)
            if pos >= 0:
                break
        else:
            raise ValueError(
                "Constraint parsing error: must contain one of '==' or '>=' or '<='")
        lhs_text, rhs_text = text[:pos], text[pos + 2:]
        lhs, = _Parser(lhs_text, None, repr(lhs_text), self).parse()
        rhs, = _Parser(rhs_text, None, repr(rhs_text), self).parse()
        if cmp == "<=":
            lhs, rhs = rhs, lhs
        diff = lhs - rhs
        if not isinstance(diff, _DimExpr):
            if diff < 0 or (cmp == "==" and diff != 0):
                raise ValueError(f"Unsatisfiable explicit constraint: {text}")
            return
        if cmp == "==":
            if not isinstance(lhs, _DimExpr) or len(lhs._terms) != 1:
                raise ValueError("Invalid equality constraint: {e1} == {e2}. "
                                 "The left-hand-side must be of the form "
                                 "`term * coefficient`.")
            (term, k), = lhs._terms
            if term in self._rules:
                raise NotImplementedError("Found multiple equality constraints with the "
                                          f"same left-hand-side: {term}")
            self._rules[term] = (rhs, k)
            self._geq_constraints += [diff, -diff]
            self._explicit.append((text, "==", diff))
        else:
            self._explicit.append((text, ">=", diff))
            self._geq_constraints.append(diff)
            self._note_var_bound(diff)
        self._constraints.append(text)

    def _note_var_bound(self, diff: _DimExpr):
        """A constraint `k*v + c >= 0` bounds the variable v directly."""
        terms = [(t, k) for t, k in diff._terms if t != _ONE]
        if len(terms) != 1 or len(terms[0][0].factors) != 1:
            return
        (t, k), = terms
        (f, power), = t.factors
        if f.var is None or power != 1:
            return
        c = dict(diff._terms).get(_ONE, 0)
        lo, hi = self._var_bounds.get(f.var, (1, _INF))
        if k > 0:
            lo = max(lo, -(c // k))
        else:
            hi = min(hi, c // -k)
        self._var_bounds[f.var] = (lo, hi)


def _user_location() -> str:
    """file:line (function) of the first frame outside pyjax."""
    pyjax_dir = os.path.dirname(os.path.dirname(__file__))
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(pyjax_dir):
        frame = frame.f_back
    if frame is None:
        return "unknown"
    positions = list(frame.f_code.co_positions())
    column = positions[frame.f_lasti // 2][2] if frame.f_lasti // 2 < len(positions) else None
    where = f"{frame.f_lineno}:{column}" if column is not None else f"{frame.f_lineno}"
    return f"{frame.f_code.co_filename}:{where} ({frame.f_code.co_name})"


# --- parsing ------------------------------------------------------------------------

class _Parser:
    """Parses a shape specification: comma-separated dimension expressions, optionally
    in parentheses, with '_' and '...' filled from `like`."""

    def __init__(self, spec: str, like, spec_repr: str, scope: SymbolicScope):
        self.spec, self.like, self.spec_repr, self.scope = spec, like, spec_repr, scope
        self.dims: list[DimSize] = []

    def parse(self) -> tuple:
        try:
            self.tokens = [t for t in tokenize.tokenize(
                io.BytesIO(self.spec.encode("utf-8")).readline)
                if t.exact_type not in (tokenize.NEWLINE, tokenize.NL, tokenize.INDENT,
                                        tokenize.DEDENT, tokenize.ENCODING)]
        except (tokenize.TokenError, SyntaxError, IndentationError) as e:
            raise self.error(None, f"cannot tokenize ({e})") from None
        self.pos = 0
        dims = self.shape()
        self.expect([tokenize.ENDMARKER])
        return dims

    @property
    def tok(self) -> tokenize.TokenInfo:
        return self.tokens[self.pos]

    def advance(self) -> None:
        self.pos = min(self.pos + 1, len(self.tokens) - 1)

    def error(self, tok, detail) -> ValueError:
        msg = (f"syntax error in symbolic shape {self.spec_repr} in dimension "
               f"{len(self.dims)}: {detail}. ")
        if tok is not None:
            msg += (f"Parsed '{tok.line[:tok.start[1]]}', "
                    f"remaining '{tok.line[tok.start[1]:]}'.")
        return ValueError(msg)

    def expect(self, kinds) -> None:
        if self.tok.exact_type not in kinds:
            raise self.error(self.tok, "expecting one of {" + ", ".join(
                tokenize.tok_name[k] for k in kinds) + "} but found "
                + tokenize.tok_name[self.tok.exact_type])

    def consume(self, kind) -> None:
        self.expect([kind])
        self.advance()

    def add_dim(self, d) -> None:
        if d is None:
            raise self.error(self.tok, f"unexpected placeholder for unknown dimension; "
                                       f"like={self.like}")
        if not isinstance(d, _DimExpr) and self.like is not None:
            if d != self.like[len(self.dims)]:
                raise self.error(self.tok, f"different size {d} for known dimension; "
                                           f"like={self.like}")
        self.dims.append(d)

    _END_SHAPE = (tokenize.ENDMARKER, tokenize.RPAR)

    def shape(self) -> tuple:
        if self.tok.exact_type == tokenize.LPAR:
            self.advance()
            dims = self.shape()
            self.consume(tokenize.RPAR)
            return dims
        while self.tok.exact_type not in self._END_SHAPE:
            tok = self.tok
            placeholder = tok.exact_type == tokenize.ELLIPSIS or (
                tok.exact_type == tokenize.NAME and tok.string == "_")
            if placeholder:
                if self.like is None:
                    raise self.error(tok, "spec contains ... but no 'like' shape was given")
                needed = len(self.dims) + (tok.exact_type != tokenize.ELLIPSIS)
                if len(self.like) < needed:
                    raise self.error(tok, f"cannot resolve placeholder '{tok.string}' "
                                          f"because we parsed {len(self.dims)} already "
                                          f"and 'like' shape has only {len(self.like)} "
                                          "dimensions")
            if tok.exact_type == tokenize.ELLIPSIS:
                self.advance()
                for d in self.like[len(self.dims):]:
                    self.add_dim(d)
                break
            if placeholder:
                self.advance()
                self.add_dim(self.like[len(self.dims)])
            else:
                self.add_dim(self.expr())
            if self.tok.exact_type in self._END_SHAPE:
                break
            self.consume(tokenize.COMMA)
        return tuple(self.dims)

    def expr(self) -> DimSize:
        negate = self.tok.exact_type == tokenize.MINUS
        if self.tok.exact_type in (tokenize.MINUS, tokenize.PLUS):
            self.advance()
        total: DimSize = 0
        while True:
            t = self.term()
            total = total - t if negate else total + t
            if self.tok.exact_type in (*self._END_SHAPE, tokenize.COMMA):
                return total
            self.expect([tokenize.PLUS, tokenize.MINUS])
            negate = self.tok.exact_type == tokenize.MINUS
            self.advance()

    def term(self) -> DimSize:
        product: DimSize = 1
        while True:
            f = self.factor()
            if self.tok.exact_type == tokenize.CIRCUMFLEX:
                self.advance()
                f = f ** self.integer()
            product = product * f
            if self.tok.exact_type in (*self._END_SHAPE, tokenize.COMMA, tokenize.PLUS,
                                       tokenize.MINUS):
                return product
            self.consume(tokenize.STAR)

    def integer(self) -> int:
        self.expect([tokenize.NUMBER])
        try:
            value = int(self.tok.string)
        except ValueError:
            raise self.error(self.tok, f"expecting integer, found {self.tok.string}") \
                from None
        self.advance()
        return value

    def factor(self) -> DimSize:
        tok = self.tok
        if tok.exact_type == tokenize.NAME:
            self.advance()
            if tok.string in _OPERATIONS:
                return self.operation(tok.string)
            return _normalized({_Term([(_Factor(var=tok.string), 1)]): 1}, self.scope)
        sign = 1
        if tok.exact_type == tokenize.MINUS:
            sign = -1
            self.advance()
            self.expect([tokenize.NUMBER])
        if self.tok.exact_type == tokenize.NUMBER:
            return sign * self.integer()
        self.expect([tokenize.NAME, tokenize.MINUS, tokenize.NUMBER])
        raise AssertionError("unreachable")

    def operation(self, name) -> DimSize:
        self.consume(tokenize.LPAR)
        a = self.expr()
        self.consume(tokenize.COMMA)
        b = self.expr()
        self.consume(tokenize.RPAR)
        if name == "max":
            return max_dim(a, b)
        if name == "min":
            return min_dim(a, b)
        return _operation(name, a, b, self.scope)


def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None, like=None) -> tuple:
    """The shape that `shape_spec` describes: ints and symbolic dimensions, e.g.
    symbolic_shape("b, 2*b, 3"). `constraints` make a new scope (or give `scope`, not
    both); `like` fills the placeholders '_' and '...'."""
    spec_repr = repr(shape_spec)
    if shape_spec is None:
        shape_spec = "..."
    elif not isinstance(shape_spec, str):
        raise ValueError(f"polymorphic shape spec should be None or a string. "
                         f"Found {spec_repr}.")
    if scope is None:
        scope = SymbolicScope(constraints)
    elif constraints:
        raise ValueError("Cannot specify both a `scope` and `constraints`.")
    return _Parser(shape_spec, like, spec_repr, scope).parse()


# --- solving dimension variables from actual shapes ----------------------------------

_SHAPE_ERRORS_PAGE = ("Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
                      "#shape-assertion-errors for more details.")


def solve_symbolically(args, offset=0):
    """The dimension variables of the polymorphic shapes in `args` (name, shape) solved
    in terms of synthetic variables, one per symbolic dimension, named as JAX names
    them (args[0].shape[1]); and each synthetic variable's (offset + argument index,
    dimension). Raises ValueError where a variable cannot be solved."""
    if not any(is_symbolic_dim(d) for _, shape in args for d in shape):
        return {}, {}
    scope = SymbolicScope()
    sources, with_actual = {}, []
    for i, (name, shape) in enumerate(args):
        actual = []
        for d_index, d in enumerate(shape):
            if is_symbolic_dim(d):
                var = f"{name}.shape[{d_index}]"
                sources[var] = (offset + i, d_index)
                d = _normalized({_Term([(_Factor(var=var), 1)]): 1}, scope)
            actual.append(d)
        with_actual.append((name, shape, tuple(actual)))
    return _solve(with_actual, check=False), sources


def solve_dim_vars(args) -> dict:
    """The values of the dimension variables of the polymorphic shapes in `args`
    (name, specified shape, actual shape), solved from the actual shapes (ints, or
    symbolic dimensions of the caller's scope) as JAX does: linear uni-variate
    equations first, their solutions substituted into the rest. Raises ValueError, in
    JAX's words, where the actual shapes do not match (provably, for symbolic ones)."""
    return _solve(args, check=True)


def _solve(args, check) -> dict:
    eqns, specs, scope = [], [], None
    for name, spec, actual in args:
        if not any(map(is_symbolic_dim, spec)):
            continue
        specs.append(f"{name}.shape = {spec}")
        for i, (d, a) in enumerate(zip(spec, actual)):
            if is_symbolic_dim(d):
                eqns.append((d, a, f"{name}.shape[{i}]"))
                scope = d.scope
    if not eqns:
        return {}
    using = " Using the following polymorphic shapes specifications: " + ",".join(specs) + "."
    env: dict = {}
    solved: list[str] = []      # the pieces of "Obtained dimension variables: ..."

    def fail(what):
        raise ValueError("Input shapes do not match the polymorphic shapes specification. "
                         f"{what}{using} Obtained dimension variables: {''.join(solved)}. "
                         + _SHAPE_ERRORS_PAGE)

    def holds(condition) -> bool:
        if not check:
            return True
        try:
            return bool(condition())
        except InconclusiveDimensionOperation:
            return False

    def solve_one(expr, actual, dim_name) -> bool:
        var = var_k = None
        rest = actual
        for t, k in expr._terms:
            try:
                value = _evaluate(_DimExpr(((t, k),), expr.scope), env, _INT_OPS)
            except UnexpectedDimVar:
                if var is None and len(t.factors) == 1 and t.factors[0][1] == 1 \
                        and t.factors[0][0].var is not None:
                    var, var_k = t.factors[0][0].var, k
                    continue
                return False
            rest = rest - value
        if var is None:
            expected = _evaluate(expr, env, _INT_OPS)
            if not holds(lambda: actual == expected):
                fail(f"Found inconsistency between dimension size {dim_name} (= {actual}) "
                     f"and the specification '{expr}' (= {expected}).")
            return True
        value, remainder = (rest, 0) if var_k == 1 else divmod(rest, var_k)
        if not holds(lambda: remainder == 0):
            fail(f"Division had remainder {remainder} when computing the value of '{var}'.")
        env[var] = value
        solved.append(f"'{var}' = {value} from specification '{expr}' for dimension "
                      f"{dim_name} (= {actual}), ")
        if not holds(lambda: value >= 1):
            fail(f"Expected value >= 1 for dimension variable '{var}'.")
        return True

    while eqns:
        left = [e for e in eqns if not solve_one(*e)]
        if len(left) == len(eqns):
            unsolved = set().union(*(_variables(e[0]) for e in left)) - set(env)
            raise ValueError(
                f"Cannot solve for values of dimension variables {unsolved}. We can only "
                "solve linear uni-variate constraints." + using + " Unprocessed "
                "specifications: " + ", ".join(f"'{e}' for dimension size {n}"
                                                for e, _, n in left)
                + ". Please see https://docs.jax.dev/en/latest/export/shape_poly.html"
                "#dimension-variables-must-be-solvable-from-the-input-shapes for more "
                "details.")
        eqns = left
    assert scope is not None
    for text, cmp, diff in scope._explicit:
        value = _evaluate(diff, env, _INT_OPS)
        if not holds(lambda v=value, c=cmp: v == 0 if c == "==" else v >= 0):
            raise ValueError(
                f"Input shapes do not match the symbolic shape constraint {text}. Expected "
                f"'{diff}' to be {'equal' if cmp == '==' else 'greater or equal'} to 0, "
                f"but found {value}. {using} Obtained dimension variables: "
                f"{''.join(solved)}. " + _SHAPE_ERRORS_PAGE)
    return env
