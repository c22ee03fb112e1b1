"""jnp.einsum and jnp.einsum_path: Einstein summation as a sequence of pairwise
dot_general contractions, in an order chosen greedily by cost (like opt_einsum's 'greedy'
strategy) or in the order given. Imports lax and the core jnp modules."""
from __future__ import annotations

import itertools
import string

import numpy as np

from pyjax._src import dtypes
from pyjax._src.core.avals import get_aval
from pyjax._src.sharding import NamedSharding, canonical_sharding
from pyjax._src.sharding import PartitionSpec as P
from pyjax._src.lax import dot as ldot
from pyjax._src.lax import reductions as lred
from pyjax._src.lax.sharding_constraint import (apply_out_sharding, auto_axes,
                                                check_context_mesh,
                                                check_explicit_axes,
                                                check_spec_has_mesh)
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import array_manipulation as more
from pyjax._src.numpy.util import check_arraylike, ensure_array, promote_dtypes

_LETTERS = string.ascii_letters


def _parse_sublist(operands):
    """The interleaved form einsum(a, [0, 1], b, [1, 2], [0, 2]) as a subscript string."""
    ops, parts = [], []
    args = list(operands)
    while len(args) >= 2:
        ops.append(args.pop(0))
        parts.append(args.pop(0))
    out = args[0] if args else None

    def letters(sub):
        text = ""
        for s in sub:
            if s is Ellipsis:
                text += "..."
            else:
                if not 0 <= int(s) < len(_LETTERS):
                    raise ValueError(f"einsum subscript {s} is out of range")
                text += _LETTERS[int(s)]
        return text
    spec = ",".join(letters(p) for p in parts)
    if out is not None:
        spec += "->" + letters(out)
    return spec, ops


def _expand_ellipses(spec, shapes):
    """Replaces '...' by fresh letters (right-aligned broadcasting) and fills in the
    implicit output (letters used once, sorted, after the ellipsis dims)."""
    inputs, _, output = spec.replace(" ", "").partition("->")
    has_output = "->" in spec
    terms = inputs.split(",")
    if len(terms) != len(shapes):
        raise ValueError(f"einsum: {len(terms)} operand subscripts for {len(shapes)} "
                         "operands")
    used = set(c for c in spec if c.isalpha())
    fresh = (c for c in _LETTERS if c not in used)
    max_ell = 0
    for term, shape in zip(terms, shapes):
        if "..." in term:
            max_ell = max(max_ell, len(shape) - (len(term) - 3))
    ell = "".join(next(fresh) for _ in range(max_ell))
    new_terms = []
    for term, shape in zip(terms, shapes):
        if "..." in term:
            n = len(shape) - (len(term) - 3)
            if n < 0:
                raise ValueError(f"einsum: subscripts {term!r} have too many indices for an "
                                 f"operand of shape {shape}")
            term = term.replace("...", ell[max_ell - n:])
        if len(term) != len(shape):
            raise ValueError(f"einsum: subscripts {term!r} do not match an operand of rank "
                             f"{len(shape)}")
        new_terms.append(term)
    if has_output:
        output = output.replace("...", ell)
    else:
        counts = {}
        for t in new_terms:
            for c in t:
                counts[c] = counts.get(c, 0) + 1
        output = ell + "".join(sorted(c for c, k in counts.items()
                                      if k == 1 and c not in ell))
    for c in output:
        if not any(c in t for t in new_terms):
            raise ValueError(f"einsum: output subscript {c!r} does not appear in the inputs")
    if len(set(output)) != len(output):
        raise ValueError(f"einsum: output subscripts {output!r} repeat a letter")
    return new_terms, output


def _sizes(terms, shapes):
    sizes = {}
    for term, shape in zip(terms, shapes):
        for c, d in zip(term, shape):
            if sizes.get(c, d) != d and 1 not in (d, sizes[c]):
                raise ValueError(f"einsum: size of label {c!r} differs between operands "
                                 f"({sizes[c]} vs {d})")
            sizes[c] = max(sizes.get(c, d), d) if d != 1 else sizes.get(c, d)
    return sizes


def _greedy_path(terms, output, sizes):
    """Pairs to contract, picking each time the pair whose result is smallest (ties: the
    lowest flop count), as opt_einsum's greedy strategy does."""
    terms = [set(t) for t in terms]
    path = []
    while len(terms) > 1:
        best = None
        for i, j in itertools.combinations(range(len(terms)), 2):
            others = set(output).union(*[t for k, t in enumerate(terms) if k not in (i, j)])
            kept = (terms[i] | terms[j]) & others
            size = int(np.prod([sizes[c] for c in kept])) if kept else 1
            flops = int(np.prod([sizes[c] for c in terms[i] | terms[j]]))
            key = (size - int(np.prod([sizes[c] for c in terms[i]]) or 1)
                   - int(np.prod([sizes[c] for c in terms[j]]) or 1), flops)
            if best is None or key < best[0]:
                best = (key, i, j, kept)
        _, i, j, kept = best
        path.append((i, j))
        terms = [t for k, t in enumerate(terms) if k not in (i, j)] + [kept]
    return path


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order einsum would use, as (path, description); the path is a
    list of operand-index pairs, as opt_einsum (and so JAX) gives it, which einsum's
    optimize= takes back."""
    if not isinstance(subscripts, str):
        subscripts, operands = _parse_sublist((subscripts,) + operands)
    shapes = [np.shape(o) if not hasattr(o, "aval") else get_aval(o).shape
              for o in operands]
    terms, output = _expand_ellipses(subscripts, shapes)
    sizes = _sizes(terms, shapes)
    path = _choose_path(terms, output, sizes, optimize)
    lines = [f"  Complete contraction:  {','.join(terms)}->{output}",
             f"  Naive scaling:  {len(sizes)}"]
    return path, "\n".join(lines)


def _choose_path(terms, output, sizes, optimize):
    if isinstance(optimize, (list, tuple)):   # an explicit path, in numpy's form or not
        return [tuple(p) for p in optimize if p != "einsum_path"]
    if optimize in (False, None, "no-optimize") or len(terms) < 2:
        return [(0, 1)] * max(len(terms) - 1, 0) if len(terms) > 1 else []
    if optimize in (True, "greedy", "optimal", "auto", "dp", "branch-2", "branch-all"):
        # a symbolic size counts as 8 when choosing the order, as in JAX
        return _greedy_path(terms, output, {c: d if type(d) is int else 8
                                            for c, d in sizes.items()})
    raise ValueError(f"einsum: unknown optimize={optimize!r}")


def _reduce_alone(x, term, keep, split=None):
    """Sums away labels of x that no one else needs, and takes diagonals of repeated
    labels, before any contraction. `split`: as in _contract_pair, for a sum that gives
    the final result."""
    # repeated labels: take the diagonal
    while len(set(term)) != len(term):
        c = next(c for c in term if term.count(c) > 1)
        i = term.index(c)
        j = term.index(c, i + 1)
        x = more.diagonal(x, 0, i, j)
        term = term[:i] + term[i + 1:j] + term[j + 1:] + c
    drop = [k for k, c in enumerate(term) if c not in keep]
    if drop:
        term = "".join(c for c in term if c in keep)
        out_sharding = None
        if split is not None:
            mesh, by_label, unreduced = split
            out_sharding = NamedSharding(mesh, P(*[by_label.get(c) for c in term],
                                                 unreduced=unreduced))
        if get_aval(x).dtype == np.bool_ and out_sharding is None:   # a sum of bools is an OR
            x = lred.reduce_or(x, tuple(drop))
        else:
            x = lred.reduce_sum(x, tuple(drop), out_sharding=out_sharding)
    return x, term


def _contract_pair(x, tx, y, ty, keep, sizes, precision, preferred_element_type,
                   dot_general, split=None):
    """One dot_general: shared labels kept are batch dims, shared ones dropped are
    contracted; the result's labels are batch + x's free + y's free. `split`: (a mesh,
    {label: how the final result splits it}) for the last contraction."""
    x = _broadcast_ones(x, tx, sizes)
    y = _broadcast_ones(y, ty, sizes)
    shared = [c for c in tx if c in ty]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = ((tuple(tx.index(c) for c in contract), tuple(ty.index(c) for c in contract)),
            (tuple(tx.index(c) for c in batch), tuple(ty.index(c) for c in batch)))
    free_x = [c for c in tx if c not in shared]
    free_y = [c for c in ty if c not in shared]
    labels = batch + free_x + free_y
    out_sharding = None
    if split is not None:
        mesh, by_label, unreduced = split
        out_sharding = NamedSharding(mesh, P(*[by_label.get(c) for c in labels],
                                             unreduced=unreduced))
    sharded = {} if out_sharding is None else {"out_sharding": out_sharding}
    out = dot_general(x, y, dims, precision, preferred_element_type=preferred_element_type,
                      **sharded)
    return out, "".join(labels)


def _broadcast_ones(x, term, sizes):
    """Size-1 dimensions of labels that are bigger elsewhere, broadcast to full size."""
    shape = get_aval(x).shape
    target = tuple(sizes[c] for c in term)
    return lnp.broadcast_to(x, target) if shape != target else x


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, out_sharding=None,
           _dot_general=ldot.dot_general):
    """Einstein summation over the operands per `subscripts` ("ij,jk->ik", or NumPy's
    interleaved operand/sublist form). Pairs are contracted with dot_general in the
    order `optimize` picks ('auto'/'greedy': greedy by size; False: left to right; or
    an explicit einsum_path). out_sharding: how the result is split. `_dot_general`:
    JAX's private override of the contraction (flax passes its own)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    if not isinstance(subscripts, str):
        subscripts, operands = _parse_sublist((subscripts,) + operands)
    check_arraylike("einsum", *operands)
    operands = [lnp.asarray(o) for o in operands]
    operands = promote_dtypes(*operands) if preferred_element_type is None else operands
    shapes = [get_aval(o).shape for o in operands]
    terms, output = _expand_ellipses(subscripts, shapes)
    sizes = _sizes(terms, shapes)
    path = _choose_path(terms, output, sizes, optimize)
    ops = list(zip(operands, terms))

    def needed(exclude):
        return set(output).union(*[t for k, (_, t) in enumerate(ops) if k not in exclude])
    split = None
    if out_sharding is not None:
        check_spec_has_mesh(out_sharding)
        target = canonical_sharding(out_sharding, "jnp.einsum")
        check_context_mesh(target, "einsum")
        check_explicit_axes(target, "einsum")
        if len(path) > 1:   # as JAX: the contractions run in Auto mode, then reshard
            return auto_axes(
                lambda *xs: einsum(subscripts, *xs, optimize=path, precision=precision,
                                   preferred_element_type=preferred_element_type,
                                   _dot_general=_dot_general),
                axes=target.mesh.explicit_axes, out_sharding=target)(*operands)
        parts = target.spec.padded(len(output)).partitions
        split = (target.mesh, dict(zip(output, parts)), target.spec.unreduced)
    for k in range(len(ops)):
        x, t = ops[k]
        ops[k] = _reduce_alone(x, t, needed({k}), split if len(ops) == 1 else None)
    # as JAX's: each contraction is asked for the result's dtype (a _dot_general such as
    # flax's fp8 one, whose operands it casts, returns that dtype rather than its own)
    dot_type = (dtypes.result_type(*operands) if preferred_element_type is None
                else preferred_element_type)
    for n, (i, j) in enumerate(path):
        keep = needed({i, j})
        (x, tx), (y, ty) = ops[i], ops[j]
        res = _contract_pair(x, tx, y, ty, keep, sizes, precision, dot_type,
                             _dot_general, split if n == len(path) - 1 else None)
        ops = [o for k, o in enumerate(ops) if k not in (i, j)] + [res]
        k = len(ops) - 1
        ops[k] = _reduce_alone(ops[k][0], ops[k][1], needed({k}))
    (x, term), = ops
    x, term = _reduce_alone(x, term, set(output))
    x = _broadcast_ones(x, term, sizes)
    perm = tuple(term.index(c) for c in output)
    result = lnp.transpose(x, perm) if perm != tuple(range(len(perm))) else x
    if preferred_element_type is not None:
        result = lnp.asarray(result, preferred_element_type)
    return ensure_array(apply_out_sharding(result, out_sharding, "einsum"))
