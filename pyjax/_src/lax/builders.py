"""Builders for the common primitive shapes (unary and binary elementwise, reductions),
and the dtype checks shared by lax's strict wrappers."""
from __future__ import annotations

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import ShapedArray
from pyjax._src.backends import stablehlo
from pyjax._src.core.trace import MISSING, define_primitive, registered_primitives
from pyjax._src.interpreters import batching
from pyjax._src.lax import sharding_rules

# Named dtype classes for rule checks and sample generation.
FLOAT = "float"
COMPLEX = "complex"
SIGNED = "signed"
UNSIGNED = "unsigned"
BOOL = "bool"
INT = (SIGNED, UNSIGNED)
INEXACT = (FLOAT, COMPLEX)
NUMBER = (FLOAT, COMPLEX, SIGNED, UNSIGNED)
ANY = NUMBER + (BOOL,)
_KIND_NAMES = {FLOAT: "floating", COMPLEX: "complexfloating", SIGNED: "signedinteger",
               UNSIGNED: "unsignedinteger", BOOL: "bool"}


def dtype_class(dtype):
    dtype = np.dtype(dtype)
    if dtypes.is_float(dtype):
        return FLOAT
    if dtypes.is_complex(dtype):
        return COMPLEX
    if dtype == np.bool_:
        return BOOL
    return SIGNED if dtype.kind == "i" else UNSIGNED


def check_dtype(name, dtype, accepted):
    if dtype_class(dtype) not in accepted:
        kinds = ", ".join(_KIND_NAMES[k] for k in accepted)
        raise TypeError(f"{name} does not accept dtype {np.dtype(dtype).name}. "
                        f"Accepted dtypes are subtypes of {kinds}.")


def refuse_float0(name, avals):
    """lax's elementwise operations refuse float0 operands (JAX's words)."""
    for i, aval in enumerate(avals):
        if aval.dtype == dtypes.float0:
            raise TypeError(
                f"Called {name} with a float0 at position {i}. float0s do not support any "
                "operations by design, because they are not compatible with non-trivial "
                "vector spaces. No implicit dtype conversion is done. You can use "
                "np.zeros_like(arr, dtype=np.float) to cast a float0 array to a regular "
                "zeros array. \nIf you didn't expect to get a float0 you might have "
                "accidentally taken a gradient with respect to an integer argument.")


def broadcasting_shape(name, *shapes):
    """lax's shape rule: operands have equal rank (rank-0 operands broadcast) and each
    dimension agrees or is 1."""
    shapes = [s for s in shapes if s]
    if not shapes:
        return ()
    if len({len(s) for s in shapes}) != 1:
        raise TypeError(f"{name}: arrays must have same number of dimensions, got "
                        f"{', '.join(str(s) for s in shapes)}.")
    result = []
    for dims in zip(*shapes):
        sizes = set(dims) - {1}
        if len(sizes) > 1:
            raise TypeError(f"{name} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(s) for s in shapes)}.")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def same_dtypes(name, avals):
    first = avals[0].dtype
    if any(a.dtype != first for a in avals[1:]):
        names = ", ".join(a.dtype.name for a in avals)
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got {names}. "
            f"(Tip: jnp.{_JNP_NAMES.get(name, name)} is a similar function that does "
            "automatic type promotion on inputs).")
    return first


_JNP_NAMES = {"sub": "subtract", "mul": "multiply", "div": "divide", "max": "maximum",
              "min": "minimum", "pow": "power", "rem": "remainder", "atan2": "arctan2",
              "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
              "eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
              "gt": "greater", "ge": "greater_equal", "nextafter": "nextafter"}


_by_name = {}


def bind_primitive(name, *args, **params):
    """Binds the registered primitive `name`. The basic families (elementwise < structural <
    slicing < indexing < reductions) import each other only downwards, but a few rules use
    a primitive of a family above their own (add's transpose sums with reduce_sum,
    broadcast_in_dim's transpose is a reduce_sum, pad's uses slice): those find it by name
    when they run, after every family is loaded. `params` must be the primitive's own."""
    prim = _by_name.get(name)
    if prim is None:
        prim = _by_name[name] = registered_primitives()[name]
    return prim.bind(*args, **params)


_COMPARISONS = ("EQ", "NE", "LT", "LE", "GT", "GE")


def _hlo_lowering(hlo):
    """The lowering named by `hlo`: a comparison direction or one StableHLO/CHLO op."""
    if hlo in _COMPARISONS:
        return stablehlo.compare_lowering(hlo)
    return stablehlo.elementwise_lowering(hlo) if hlo else None


def _elementwise_op(name, arity, impl, abstract_eval, accepted, jvp, hlo, samples_domain,
                    rules):
    """Registers an elementwise primitive: vmap and lowering rules default to the
    elementwise ones (the lowering is the op named by `hlo`), samples to random operands
    of each accepted dtype in `samples_domain`. `ur_rule` (in rules) types unreduced and
    reduced results; by default only reduced operands pass (as JAX's nary rule)."""
    rules.setdefault("batch", batching.elementwise_rule)
    rules.setdefault("lower", _hlo_lowering(hlo))
    rules.setdefault("samples", lambda: elementwise_samples(accepted, arity, samples_domain))
    ur_rule = rules.pop("ur_rule", None) or sharding_rules.nary_ur(name)
    sharding_rule = rules.pop("sharding_rule", None) or sharding_rules.elementwise(name)
    abstract_eval = sharding_rules.typed(abstract_eval, sharding_rule, ur_rule,
                                         rules.pop("checks_meshes", True))
    return define_primitive(name, impl=impl, abstract_eval=abstract_eval, jvp=jvp, **rules)


def unary_op(name, impl, accepted, *, jvp, hlo, result_dtype=None, samples_domain=None,
             check=None, **rules):
    """An elementwise primitive of one operand. `hlo` names its StableHLO/CHLO op;
    `check(x, **params)` refuses operands beyond their dtype (eager and traced alike)."""

    def abstract_eval(x, **params):
        refuse_float0(name, (x,))
        check_dtype(name, x.dtype, accepted)
        if check is not None:
            check(x, **params)
        dtype = x.dtype if result_dtype is None else result_dtype(x.dtype)
        return ShapedArray(x.shape, dtype, x.weak_type)

    return _elementwise_op(name, 1, impl, abstract_eval, accepted, jvp, hlo, samples_domain,
                           rules)


def binary_op(name, impl, accepted, *, jvp, hlo, result_dtype=None, samples_domain=None,
              operand_dtypes=None, **rules):
    """An elementwise primitive of two operands of one dtype (lax does not promote), or of
    those `operand_dtypes(x, y)` accepts (it checks the avals and gives the dtype)."""

    def abstract_eval(x, y, **params):
        refuse_float0(name, (x, y))
        if operand_dtypes is None:
            dtype = same_dtypes(name, [x, y])
            check_dtype(name, dtype, accepted)
        else:
            dtype = operand_dtypes(x, y)
        shape = broadcasting_shape(name, x.shape, y.shape)
        out_dtype = dtype if result_dtype is None else result_dtype(dtype)
        return ShapedArray(shape, out_dtype, x.weak_type and y.weak_type)

    return _elementwise_op(name, 2, impl, abstract_eval, accepted, jvp, hlo, samples_domain,
                           rules)


# --- samples for the uniform rule tests ---------------------------------------------------

_SAMPLE_DTYPES = {FLOAT: np.float32, COMPLEX: np.complex64, SIGNED: np.int32,
                  UNSIGNED: np.uint32, BOOL: np.bool_}


class Sample:
    """Inputs for one run of the uniform harness: operands (numpy) and params."""

    __slots__ = ("args", "params")

    def __init__(self, args, params=None):
        self.args, self.params = list(args), dict(params or {})

    def __repr__(self):
        shapes = ", ".join(f"{np.asarray(a).dtype}{list(np.shape(a))}" for a in self.args)
        return f"Sample({shapes}; {self.params})"


_generator = []  # the one reused Generator, made on first use (numpy.random is slow to import)
_seeded_states = {}


def _seeded_rng(seed):
    """A generator in the state default_rng(seed) starts in. Seeding costs ~20 us and
    samples are built for many primitives, so each seed's state is computed once."""
    state = _seeded_states.get(seed)
    if state is None:
        state = _seeded_states[seed] = np.random.default_rng(seed).bit_generator.state
    if not _generator:
        _generator.append(np.random.default_rng(0))
    _generator[0].bit_generator.state = state
    return _generator[0]


def random_values(shape, dtype, domain=None, seed=0):
    rng = _seeded_rng(seed + 7 * len(shape) + sum(shape))
    dtype = np.dtype(dtype)
    lo, hi = domain or (-2.0, 2.0)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        lo_i = max(int(np.floor(lo)), 0) if dtype.kind == "u" else int(np.floor(lo))
        return rng.integers(lo_i, max(int(np.ceil(hi)), lo_i + 1) + 1, size=shape).astype(dtype)
    values = rng.uniform(lo, hi, size=shape)
    if dtype.kind == "c":
        values = values + 1j * rng.uniform(lo, hi, size=shape)
    return np.asarray(values, dtype)


def elementwise_samples(accepted, arity, domain=None):
    """Same-shape operands, plus a rank-0 operand broadcast against a matrix."""
    out = []
    for kind in accepted:
        dtype = _SAMPLE_DTYPES[kind]
        for shape in [(3,), (2, 3)]:
            out.append(Sample([random_values(shape, dtype, domain, seed=i)
                               for i in range(arity)]))
        if arity == 2:
            out.append(Sample([random_values((2, 3), dtype, domain, 0),
                               random_values((), dtype, domain, 1)]))
    return out


__all__ = ["unary_op", "binary_op", "Sample", "MISSING"]
