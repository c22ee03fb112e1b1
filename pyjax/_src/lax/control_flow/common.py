"""What every control-flow primitive shares: tracing a user function once into a closed
jaxpr whose captured values became explicit operands, joining branch consts, the type and
pytree checks with JAX's messages, small jaxpr surgery, and when an eager loop goes to
XLA. Imports core, interpreters, backends and lax families only."""
from __future__ import annotations

import inspect
import weakref

from pyjax._src import config, dtypes, tree_util
from pyjax._src.array import Array
from pyjax._src.backends import dispatch, numpy_backend
from pyjax._src.core import jaxpr as jx
from pyjax._src.core.avals import AbstractRef, ShapedArray, get_aval, is_valid_jax_type
from pyjax._src.core.trace import Tracer
from pyjax._src.interpreters import ad
from pyjax._src.interpreters import partial_eval as pe
from pyjax._src.sharding import mesh_context_set, tracing_context
from pyjax._src.util import WeakCache, merge_lists


# --- tracing ----------------------------------------------------------------------------

# fun -> (argument structure, avals, api, tracing context) -> its trace: a loop or a
# branch run again with the same function on the same types reuses its jaxpr without
# running the function again, as JAX's cached trace_to_jaxpr does (a function closing
# over tracers or jax.Refs is traced anew each time).
_traces = WeakCache()


def trace_fun(fun, in_tree, in_avals, api_name, capture_refs=False):
    """Traces fun(*tree_unflatten(in_tree, args)), once per function and types (see
    _traces). Returns (ClosedJaxpr with no consts whose leading invars stand for the
    captured values, those values, out treedef), and with `capture_refs` the RefCaptures
    of the jax.Refs it closes over (their values are the last invars; those it writes,
    the last outvars)."""
    key = (in_tree, tuple(in_avals), api_name, capture_refs, tracing_context())
    try:
        weakref.ref(fun)
        hash(key)
    except TypeError:   # a function that cannot be weakly referenced, unhashable types
        traced = _trace_fun(fun, in_tree, in_avals, api_name, capture_refs)
    else:
        traced = _traces.get(
            fun, key, lambda: _trace_fun(fun, in_tree, in_avals, api_name, capture_refs),
            keep=lambda out: not any(isinstance(c, Tracer) for c in out[1])
            and not any(out[3:]))
    closed, consts, out_tree, *captures = traced
    return (closed, list(consts), out_tree, *captures)


def _trace_fun(fun, in_tree, in_avals, api_name, capture_refs):
    traced = {}   # not on flat_fun: a closure that refers to itself is a reference cycle

    def flat_fun(*args):
        out = fun(*tree_util.tree_unflatten(in_tree, args))
        leaves, traced["out_tree"] = tree_util.flatten(out)
        for leaf in leaves:
            if type(getattr(leaf, "aval", None)) is AbstractRef:
                raise pe.returned_ref_error(pe.debug_info_of(fun),
                                            api_name.removeprefix("lax."), leaf)
            if not is_valid_jax_type(leaf):
                raise TypeError(
                    f"{api_name}: the function {fun_description(fun)} returned a value of "
                    f"type {type(leaf)}, which is not a valid JAX type. It must return "
                    "arrays or scalars (in pytrees).")
        return leaves

    jaxpr, consts, *captures = pe.trace_to_jaxpr(flat_fun, list(in_avals),
                                                 pe.debug_info_of(fun), capture_refs)
    closed = jx.ClosedJaxpr(jx.convert_constvars_to_invars(jaxpr), ())
    return (closed, list(consts), traced["out_tree"]) + tuple(captures)


def refs_by_closure(funs, leaves, in_tree, api_name):
    """jax.Ref operands (leaves whose type is a Ref's) passed to `funs` by closure
    instead, so their traces capture them as closed-over refs. Returns (funs of the
    other leaves, positionally, those leaves, their treedef)."""
    is_ref = [type(get_aval(x)) is AbstractRef for x in leaves]
    if not any(is_ref):
        return funs, leaves, in_tree
    refs = [x for x, r in zip(leaves, is_ref) if r]
    if len({id(r) for r in refs}) < len(refs):
        raise aliased_operands_error(funs[0], leaves, in_tree, api_name)
    rest = [x for x, r in zip(leaves, is_ref) if not r]

    def passing_refs(fun):
        def with_refs(*values):
            merged = merge_lists(is_ref, list(values), refs)
            return fun(*tree_util.tree_unflatten(in_tree, merged))
        return with_refs
    return ([passing_refs(f) for f in funs], rest,
            tree_util.tree_structure(tuple(rest)))


def operand_names(fun, in_tree):
    """The name of each leaf of the positional operands `in_tree` (a tuple) by `fun`'s
    parameters, as JAX's errors name them ('x_ref', "carry['a']", 'args[3]')."""
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = []
    operands = tree_util.tree_unflatten(in_tree, list(range(in_tree.num_leaves)))
    names = {}
    for path, i in tree_util.tree_flatten_with_path(operands)[0]:
        top = path[0].idx
        names[i] = (params[top] if top < len(params) else f"args[{top}]") + \
            tree_util.keystr(path[1:])
    return names


def aliased_operands_error(fun, leaves, in_tree, api_name):
    """JAX's error for one jax.Ref passed as two operands, naming them by `fun`'s
    parameters."""
    names = operand_names(fun, in_tree)
    seen = {}
    for i, x in enumerate(leaves):
        if type(get_aval(x)) is AbstractRef:
            if id(x) in seen:
                return ValueError(
                    "only one reference to a mutable array may be passed as an argument "
                    f"to a function, but when tracing {pe.debug_info_of(fun).describe()} "
                    f"for {api_name} the mutable array reference of type "
                    f"{get_aval(x).str_short(True)} appeared at both {names[seen[id(x)]]} "
                    f"and {names[i]}.")
            seen[id(x)] = i
    raise AssertionError("no aliased jax.Ref")


def refs_as_carries(closed, in_at, out_at, captures, union=None, outputs=True):
    """A function (a loop body, a branch) traced with capture_refs, with jax.Refs made
    carries: those of `union` (RefCaptures of all the loop's functions; default
    `captures`) are inputs from position `in_at` on and (with `outputs`) outputs from
    `out_at` on, as written or unchanged."""
    union = captures if union is None else union
    jaxpr = closed.jaxpr
    num_in = len(jaxpr.invars) - len(captures)
    num_out = len(jaxpr.outvars) - sum(c.written for c in captures)
    own = dict(zip([c.ref for c in captures], jaxpr.invars[num_in:]))
    ref_in = [own.get(c.ref) or jx.Var(get_aval(c.outer)) for c in union]
    written = dict(zip([c.ref for c in captures if c.written], jaxpr.outvars[num_out:]))
    ref_out = [written.get(c.ref, v) for c, v in zip(union, ref_in)] if outputs else []
    invars = jaxpr.invars[:in_at] + ref_in + jaxpr.invars[in_at:num_in]
    outvars = jaxpr.outvars[:out_at] + ref_out + jaxpr.outvars[out_at:num_out]
    return with_binders(closed, invars, outvars)


def union_of_captures(*captures):
    """The RefCaptures of several traces, one per jax.Ref, in first-use order."""
    union = {}
    for cs in captures:
        for c in cs:
            union.setdefault(c.ref, c)
    return list(union.values())


def trace_branches(funs, in_tree, in_avals, api_name):
    """Traces each function once; all of them then take the union of every branch's
    captured values as leading operands (each ignoring the others'), and the union of
    the jax.Refs they close over as trailing operands, whose values (as written, or
    unchanged) are their trailing outputs. Returns (closed jaxprs, consts, out treedefs,
    refs)."""
    traced = [trace_fun(f, in_tree, in_avals, api_name, capture_refs=True) for f in funs]
    consts, position = [], {}
    for _, cs, _, _ in traced:
        for c in cs:
            if id(c) not in position:
                position[id(c)] = len(consts)
                consts.append(c)
    refs = union_of_captures(*[t[3] for t in traced])
    jaxprs = []
    for closed, cs, _, captures in traced:
        jaxpr = closed.jaxpr   # the refs as the trailing operands and outputs
        jaxpr = refs_as_carries(closed, len(jaxpr.invars) - len(captures),
                                len(jaxpr.outvars) - sum(c.written for c in captures),
                                captures, refs).jaxpr
        own = {position[id(c)]: v for c, v in zip(cs, jaxpr.invars)}
        const_vars = [own[i] if i in own else jx.Var(get_aval(c))
                      for i, c in enumerate(consts)]
        jaxprs.append(jx.ClosedJaxpr(jx.Jaxpr(
            (), const_vars + jaxpr.invars[len(cs):], jaxpr.outvars, jaxpr.eqns,
            jaxpr.effects, jaxpr.debug_info), ()))
    return jaxprs, consts, [t[2] for t in traced], [c.ref for c in refs]


def is_concrete(x):
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def avals_of(leaves):
    return [get_aval(x) for x in leaves]


def run_closed(closed, args):
    """The NumPy executor on a sub-jaxpr (used by the primitives' impls)."""
    return numpy_backend.execute_closed_jaxpr(closed, list(args))


# --- eager loops ------------------------------------------------------------------------

# Equations an eager loop runs on the NumPy executor (a few microseconds each) before it
# goes to XLA, as JAX runs every eager loop: past this, compiling it is the faster way.
LONG_LOOP_EQUATIONS = 5_000


def may_compile_eager_loop(args, *jaxprs) -> bool:
    """Whether an eager loop over `args` may run as a compiled program: XLA is the
    executor, jit is not disabled, no argument is committed (those follow dispatch's
    placement rules), no mesh context or NaN checking applies and the bodies have no
    effects (their order with other eager ops stays that of the NumPy executor)."""
    return (dispatch.xla_backend() is not None and not config.disable_jit_flag.value
            and not (config.debug_nans.value or config.debug_infs.value)
            and not mesh_context_set()
            and not any(type(x) is Array and x.committed for x in args)
            and not any(j.effects for j in jaxprs))


def run_compiled(prim, args, params):
    """One equation of `prim` on `args`, compiled by XLA (cached per types and params)."""
    arrays = [x if type(x) is Array else dispatch.as_host_array(x) for x in args]
    closed = dispatch.single_primitive_jaxpr(prim, [x.aval for x in arrays], params)
    if dispatch.runs_own_program(closed.jaxpr):   # (a pmap in the body) runs by itself
        return NotImplemented
    return dispatch.run_closed_jaxpr(closed, arrays)


# --- messages ---------------------------------------------------------------------------

def fun_description(fun):
    """'name defined at file:line', as JAX names user functions in errors."""
    info = pe.debug_info_of(fun)
    return f"{info.func_name} defined at {info.location}" if info.location else info.func_name


def fun_sourceinfo(fun):
    """'name at file:line', as JAX names the branches of a cond or switch."""
    info = pe.debug_info_of(fun)
    return f"{info.func_name} at {info.location}" if info.location else info.func_name


def _capitalize(s):
    return s[:1].upper() + s[1:]


def _typematch(a, b):
    """Equal shapes, dtypes and splits over the mesh and, inside shard_map, equal
    varying manual axes."""
    return a.same_type(b) and a.vma == b.vma and _split(a) == _split(b)


def _split(aval):
    """aval's spec entries, one per dimension (None: not split)."""
    s = aval._sharding
    return (None,) * aval.ndim if s is None else s.spec.padded(aval.ndim).partitions


def _mismatch_detail(a, b):
    parts = []
    if a.dtype != b.dtype:
        parts.append("the dtypes do not match")
    if a.shape != b.shape:
        parts.append("the shapes do not match")
    if a.vma != b.vma:
        parts.append("the manual axis types do not match")
    if a.same_type(b) and _split(a) != _split(b):
        parts.append("the shardings do not match")
    if len(parts) < 2:     # (JAX's aval_mismatch_extra)
        return ", so " + parts[0] if parts else ""
    return ", so " + ", ".join(parts[:-1]) + ", and " + parts[-1]


def _pvary_hint(applications, joiner):
    """JAX's advice where values differ only in the manual axes they vary along."""
    if not applications:
        return ""
    if len(applications) == 1:
        hint = f"This might be fixed by {applications[0]}.\n"
    else:
        hint = ("This might be fixed by:\n" + joiner.join(
            f"  * {d};" for d in applications[:-1]) + f"{joiner}  * {applications[-1]}.\n")
    return hint + ("See https://docs.jax.dev/en/latest/notebooks/shard_map.html#scan-vma "
                   "for more information.\n\n")


def _bulleted(diffs):
    if len(diffs) == 1:
        return _capitalize(diffs[0]) + ".\n"
    return "\n".join(f"  * {d};" for d in diffs[:-1]) + f"\n  * {diffs[-1]}.\n"


def _spaced_bullets(diffs, capitalize=True):
    """JAX's list of differences for carries and branch structures: one sentence, or
    bullets (its formula: a blank line between them, except before the last)."""
    if len(diffs) == 1:
        return (_capitalize(diffs[0]) if capitalize else diffs[0]) + ".\n"
    return "\n".join(f"  * {d};\n" for d in diffs[:-1]) + f"  * {diffs[-1]}.\n"


def _paths(tree, avals):
    """Key-path strings per leaf of a tree of structure `tree` ('' for a bare leaf)."""
    try:
        value = tree_util.tree_unflatten(tree, avals)
        leaves, _ = tree_util.tree_flatten_with_path(
            value, is_leaf=lambda x: isinstance(x, ShapedArray))
        return [tree_util.keystr(p) for p, _ in leaves]
    except (ValueError, TypeError):
        return [""] * len(avals)


def check_branch_outputs(api_name, names, funs, trees, out_avals):
    """Every branch must return the pytree structure and types of the first one."""
    name0, tree0, avals0 = names[0], trees[0], out_avals[0]
    paths = _paths(tree0, avals0)
    where = lambda p: f" at path {p}" if p else ""   # noqa: E731
    for name, fun, tree, avals in zip(names[1:], funs[1:], trees[1:], out_avals[1:]):
        header = (f"{name0} is {fun_sourceinfo(funs[0])}\n"
                  f"{name} is {fun_sourceinfo(fun)}\n\n")
        if tree != tree0:
            diffs = [f"{name0} output{where(tree_util.keystr(p))} is a {thing1} but {name} "
                     f"output{where(tree_util.keystr(p))} is a {thing2}, so {why}"
                     for p, thing1, thing2, why
                     in tree_util.equality_errors_pytreedef(tree0, tree)]
            if diffs:
                raise TypeError(
                    f"{api_name} branch outputs must have the same pytree structure, but "
                    f"they differ:\n\n{header}{_spaced_bullets(diffs, capitalize=False)}\n"
                    f"Revise {name0} and/or {name} so that they have the same pytree "
                    "structure.")
            continue   # the same structure but for aux data
        diffs = [f"the output of {name0}{where(p)} has type "
                 f"{a.str_short()} but the corresponding output of {name} has type "
                 f"{b.str_short()}{_mismatch_detail(a, b)}"
                 for p, a, b in zip(paths, avals0, avals) if not _typematch(a, b)]
        # As JAX words it: the axes the other branch varies along, for each branch
        # varying along some the other does not.
        hints = [f"applying `jax.lax.pcast(..., {tuple(other.vma - mine.vma)}, "
                 f"to='varying')` to the output of {n}{where(p)}"
                 for p, a, b in zip(paths, avals0, avals) if not _typematch(a, b)
                 for n, other, mine in ((name0, b, a), (name, a, b))
                 if a.vma != b.vma and mine.vma - other.vma]
        if diffs:
            raise TypeError(
                f"{api_name} branches must have equal output types but they differ.\n\n"
                f"{header}{_bulleted(diffs)}\n{_pvary_hint(hints, chr(10))}Revise "
                f"{name0} and/or {name} so that all output types match.")


def check_carry_type(what, body_fun, in_carry_tree, in_avals, out_tree, out_avals):
    """The carry a loop body returns must have the carry's structure and types, as JAX
    checks; the message names the carry argument and both types."""
    try:
        carry_name = next(iter(inspect.signature(body_fun).parameters))
    except (ValueError, TypeError, StopIteration):
        carry_name = None

    def component(path):
        if carry_name:
            return (f"the input carry component {carry_name}{path}" if path
                    else f"the input carry {carry_name}")
        return f"the input carry at path {path}" if path else "the input carry"

    if in_carry_tree != out_tree:
        diffs = [f"{component(tree_util.keystr(p))} is a {thing1} but the corresponding "
                 f"component of the carry output is a {thing2}, so {why}"
                 for p, thing1, thing2, why in tree_util.equality_errors(
                     tree_util.tree_unflatten(in_carry_tree, in_avals),
                     tree_util.tree_unflatten(out_tree, out_avals))]
        if diffs:
            raise TypeError(
                f"{what} function carry input and carry output must have the same pytree "
                f"structure, but they differ:\n\n{_spaced_bullets(diffs)}\nRevise the "
                "function so that the carry output has the same pytree structure as the "
                "carry input.")
        return   # the same structure but for aux data
    paths = _paths(in_carry_tree, in_avals)
    diffs = [f"{component(p)} has type {a.str_short()} but the corresponding output carry "
             f"component has type {b.str_short()}{_mismatch_detail(a, b)}"
             for p, a, b in zip(paths, in_avals, out_avals) if not _typematch(a, b)]
    hints = [f"applying `jax.lax.pcast(..., {tuple(b.vma - a.vma)}, to='varying')`, to "
             f"the initial carry value corresponding to {component(p)}"
             for p, a, b in zip(paths, in_avals, out_avals) if b.vma - a.vma]
    if diffs:
        raise TypeError(
            f"{what} function carry input and carry output must have equal types, but they "
            f"differ:\n\n{_spaced_bullets(diffs)}\n{_pvary_hint(hints, chr(10) + chr(10))}"
            "Revise the function so that all output types match the corresponding input "
            "types.")


def promote_weak_carry(values, in_avals, out_avals):
    """Weakly typed initial carries (Python scalars) take the type the body returns, as
    in JAX. Returns (values, changed)."""
    from pyjax._src.lax.elementwise import convert_element_type
    if len(values) != len(out_avals):
        return values, False
    changed = False
    values = list(values)
    for i, (a, b) in enumerate(zip(in_avals, out_avals)):
        if a.weak_type and not a.same_type(b):
            values[i] = convert_element_type(values[i], dtypes.result_type(values[i], b))
            changed = True
    return values, changed


def check_param(prim, param, name, required, ok):
    """A higher-order equation's parameter must be of the kind it needs (a jaxpr edited
    by hand may break one): JaxprTypeError in JAX's words."""
    if not ok:
        text = str(param)
        sep = "\n" if "\n" in text or "\r" in text else " "
        raise jx.JaxprTypeError(f"invalid {prim} param {name} of type {type(param).__name__}, "
                                f"{required} required:{sep}{text}")


def check_operands(name, jaxpr, avals, what="operands"):
    """Operand types must be those the sub-jaxpr was traced for (weak types aside)."""
    expected = jaxpr.in_avals
    if len(avals) != len(expected) or any(not a.same_type(e) for a, e in
                                          zip(avals, expected)):
        raise TypeError(f"{name}: {what} of types {[a.str_short(True) for a in avals]} do not "
                        f"match the traced jaxpr's {[e.str_short(True) for e in expected]}")


# --- jaxpr surgery ----------------------------------------------------------------------

def pick(xs, flags):
    """The xs whose flag is true (used carries, outputs, operands...)."""
    return [x for x, f in zip(xs, flags) if f]


def with_binders(closed, invars=None, outvars=None):
    """The same computation with new invars and/or outvars."""
    jaxpr = closed.jaxpr
    return jx.ClosedJaxpr(jx.Jaxpr(
        jaxpr.constvars, jaxpr.invars if invars is None else invars,
        jaxpr.outvars if outvars is None else outvars, jaxpr.eqns, jaxpr.effects,
        jaxpr.debug_info), closed.consts)


def permute_binders(closed, in_order=None, out_order=None):
    """New invar/outvar k is the old one at in_order[k]/out_order[k] (None: unchanged)."""
    jaxpr = closed.jaxpr
    return with_binders(
        closed, None if in_order is None else [jaxpr.invars[i] for i in in_order],
        None if out_order is None else [jaxpr.outvars[i] for i in out_order])


def add_unused_invars(closed, avals, at):
    """Inserts unused invars of the given avals at position `at`."""
    invars = closed.jaxpr.invars
    return with_binders(closed, invars[:at] + [jx.Var(a) for a in avals] + invars[at:])


def trace_closed(flat_fun, in_avals):
    """Traces a flat function of values (used by rules to build new sub-jaxprs); it may
    capture only concrete values, which stay as the closed jaxpr's consts."""
    closed, hoisted = pe.trace_to_closed_jaxpr(flat_fun, list(in_avals))
    assert not hoisted, "a rule's sub-jaxpr closed over traced values"
    return closed


def carry_fixpoint(step, flags_in):
    """Smallest flags >= flags_in with step(flags) <= flags, per loop carry (e.g. 'has a
    nonzero tangent', 'is unknown', 'is batched'); each round sets at least one more."""
    flags = list(flags_in)
    while True:
        out = step(flags)[:len(flags)]
        if all(o <= f for o, f in zip(out, flags)):
            return flags
        flags = [f or o for f, o in zip(flags, out)]


# --- tangents ---------------------------------------------------------------------------

def nonzero(t):
    """Whether a tangent carries information (not a symbolic zero, not float0)."""
    return type(t) is not ad.Zero and get_aval(t).dtype != dtypes.float0


def merge_tangents(primals, nonzeros, dots):
    """Tangents per primal: the next of `dots` where nonzero, else a symbolic zero."""
    it = iter(dots)
    return [next(it) if nz else ad.Zero(ad.tangent_aval(get_aval(p)))
            for p, nz in zip(primals, nonzeros)]


def instantiate_cts(cts, avals):
    """Cotangents (None or symbolic zeros allowed) as values of the tangent avals."""
    return [ad.instantiate_zeros(ad.Zero(ad.tangent_aval(a)) if ct is None else ct)
            for ct, a in zip(cts, avals)]


def has_io_effect(*closed_jaxprs):
    """Whether one of the jaxprs runs an io_callback (an effect marked `io`)."""
    return any(getattr(e, "io", False) for j in closed_jaxprs for e in j.effects)
