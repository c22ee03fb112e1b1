"""Serializing an Exported: pyjax's own format, not JAX's (JAX writes a flatbuffer).

    b"pyjax.export\\0" | format version (1 byte) | header length (4 bytes, big-endian)
    | header (JSON, UTF-8) | the module (a StableHLO portable artifact, as JAX's
    `mlir_module_serialized`)

The header holds the calling convention: the name, the argument and result pytrees
(nodes: None, tuple, list, dict with string keys, and types registered with
`register_pytree_node_serialization` by their serialized name), the avals (shape, dtype
name or `key:<impl>` for typed keys, weak type, type-level sharding; symbolic dimensions
as text, with their scope's constraints), the NamedShardings
over abstract meshes, the platforms, the device count, the disabled checks, the calling
convention version, and the serialized VJPs up to the order asked. Bytes of another
format (JAX's own included) raise a ValueError that says so. Imports sharding,
tree_util, random (key arrays)."""
from __future__ import annotations

import base64
import collections
import json
import threading
from collections.abc import Sequence

import ml_dtypes
import numpy as np

from pyjax._src import dtypes, tree_util
from pyjax._src import sharding as sharding_mod
from pyjax._src.core.avals import ShapedArray
from pyjax._src.random import keys
from pyjax._src.shape_poly import SymbolicScope, is_symbolic_dim, symbolic_shape

_MAGIC = b"pyjax.export\0"
_FORMAT_VERSION = 1

_registry_lock = threading.Lock()
_by_type: dict = {}   # node type -> (serialized name, serialize_auxdata)
_by_name: dict = {}   # serialized name -> (node type, deserialize_auxdata, from_children)


def _is_namedtuple(nodetype) -> bool:
    fields = getattr(nodetype, "_fields", None)
    return (isinstance(nodetype, type) and issubclass(nodetype, tuple)
            and isinstance(fields, Sequence) and all(isinstance(f, str) for f in fields))


def register_pytree_node_serialization(nodetype, *, serialized_name, serialize_auxdata,
                                       deserialize_auxdata, from_children=None):
    """Registers how to serialize the pytree nodes of `nodetype` (after
    jax.tree_util.register_pytree_node, unless `from_children` builds a node from its
    deserialized aux data and children). Returns `nodetype` (a class decorator)."""
    with _registry_lock:
        if nodetype in _by_type:
            raise ValueError(
                f"Duplicate serialization registration for type `{nodetype}`. Previous "
                f"registration was with serialized_name `{_by_type[nodetype][0]}`.")
        if serialized_name in _by_name:
            raise ValueError(
                "Duplicate serialization registration for serialized_name "
                f"`{serialized_name}`. Previous registration was for type "
                f"`{_by_name[serialized_name][0]}`.")
        if from_children is None:
            rules = tree_util._registry.get(nodetype)
            if rules is None:
                raise ValueError("If `from_children` is not present, you must call first"
                                 f"`jax.tree_util.register_pytree_node` for `{nodetype}`")
            unflatten = rules[1]

            def from_children(aux, children):
                return unflatten(aux, children)
        _by_type[nodetype] = (serialized_name, serialize_auxdata)
        _by_name[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def register_namedtuple_serialization(nodetype, *, serialized_name):
    """Registers a collections.namedtuple type for serialization (its fields are
    serialized with it, and must match on deserialization)."""
    if not _is_namedtuple(nodetype):
        raise ValueError("Use `jax.export.register_pytree_node_serialization` for types "
                         "other than `collections.namedtuple`.")

    def from_children(fields, children):
        return nodetype(**dict(zip(fields, children)))
    return register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),
        deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
        from_children=from_children)


def _serialize_ordereddict_keys(keys):
    if isinstance(keys, Sequence) and all(isinstance(k, str) for k in keys):
        return json.dumps(list(keys)).encode("utf-8")
    raise TypeError("Serialization of collections.OrderedDict is supported only when the "
                    f"keys are strings. Found keys: {keys}.")


register_pytree_node_serialization(
    collections.OrderedDict, serialized_name="collections.OrderedDict",
    serialize_auxdata=_serialize_ordereddict_keys,
    deserialize_auxdata=lambda b: json.loads(b.decode("utf-8")),
    from_children=lambda keys, children: collections.OrderedDict(zip(keys, children)))


# --- pytrees --------------------------------------------------------------------------------

def _tree_json(treedef):
    data = treedef.node_data()
    if data is None:
        return {"kind": "leaf"}
    node_type, aux = data
    children = [_tree_json(c) for c in treedef.children()]
    if node_type is type(None):
        return {"kind": "none"}
    if node_type is tuple or node_type is list:
        return {"kind": node_type.__name__, "children": children}
    if node_type is dict:
        for k in aux:
            if not isinstance(k, str):
                raise TypeError("Serialization is supported only for dictionaries with "
                                f"string keys. Found key {k} of type {type(k)}.")
        return {"kind": "dict", "keys": list(aux), "children": children}
    registered = _by_type.get(node_type)
    if registered is None:
        raise ValueError(
            f"Cannot serialize PyTreeDef containing an unregistered type `{node_type}`. "
            "Use `export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`.")
    name, serialize_aux = registered
    aux_bytes = serialize_aux(aux)
    if not isinstance(aux_bytes, (bytes, bytearray)):
        raise ValueError("The custom serialization function for `node_type` must return a "
                         f"`bytes` object. It returned a {type(aux_bytes)}.")
    return {"kind": "custom", "name": name, "children": children,
            "aux": base64.b64encode(bytes(aux_bytes)).decode("ascii")}


def _tree_from_json(node, leaves):
    """A pytree with the structure `node` describes, whose leaves are the next ones of
    the iterator `leaves` (the avals: nodes may check their children's shapes)."""
    kind = node["kind"]
    if kind == "leaf":
        return next(leaves)
    children = [_tree_from_json(c, leaves) for c in node.get("children", ())]
    if kind == "none":
        return None
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return dict(zip(node["keys"], children))
    registered = _by_name.get(node["name"])
    if registered is None:
        raise ValueError(
            f"Cannot deserialize a PyTreeDef containing an unregistered type "
            f"`{node['name']}`. Use `export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`.")
    _, deserialize_aux, from_children = registered
    return from_children(deserialize_aux(base64.b64decode(node["aux"])), children)


def _treedef(node, avals):
    return tree_util.tree_structure(_tree_from_json(node, iter(avals)))


# --- avals and shardings --------------------------------------------------------------------

def _shape_json(shape):
    """A shape's dimensions: ints, and symbolic ones as their text."""
    return [str(d) if is_symbolic_dim(d) else d for d in shape]


def _aval_json(aval):
    if isinstance(aval, keys.KeyAval):   # a typed key array: its impl's name
        return [_shape_json(aval.shape), f"key:{aval.dtype._impl.name}", False, None]
    name = "float0" if aval.dtype == dtypes.float0 else np.dtype(aval.dtype).name
    return [_shape_json(aval.shape), name, bool(aval.weak_type),
            _sharding_json(aval._sharding)]


def _scope_constraints(avals):
    """The constraints of the scope of the avals' symbolic dimensions (one scope)."""
    scope = next((d.scope for a in avals for d in a.shape if is_symbolic_dim(d)), None)
    return None if scope is None else list(scope._constraints)


def _dtype_named(name):
    if name == "float0":
        return dtypes.float0
    extended = getattr(ml_dtypes, name, None)   # bfloat16, float8_*, int4, ...
    return np.dtype(extended if extended is not None else name)


def _aval_from_json(item, scope):
    shape, dtype, weak, sharding = item
    shape = [symbolic_shape(d, scope=scope)[0] if isinstance(d, str) else d for d in shape]
    if dtype.startswith("key:"):
        return keys.KeyAval(tuple(shape), keys.KeyTy(keys.PRNGS[dtype[4:]]))
    return ShapedArray(tuple(shape), _dtype_named(dtype), weak_type=weak,
                       sharding=_sharding_from_json(sharding))


def _spec_entry(p):
    if p is None or isinstance(p, str):
        return p
    if isinstance(p, tuple):
        return list(p)
    raise ValueError(f"Cannot serialize the PartitionSpec entry {p!r}.")


def _sharding_json(s):
    if s is None:
        return None
    mesh = s.mesh
    return {"axis_sizes": list(mesh.axis_sizes), "axis_names": list(mesh.axis_names),
            "axis_types": [t.name for t in mesh.axis_types],
            "abstract_device": None if mesh.abstract_device is None
            else list(mesh.abstract_device),
            "spec": [_spec_entry(p) for p in s.spec.partitions],
            "unreduced": sorted(s.spec.unreduced), "reduced": sorted(s.spec.reduced),
            "memory_kind": s.memory_kind}


def _sharding_from_json(d):
    if d is None:
        return None
    mesh = sharding_mod.AbstractMesh(
        tuple(d["axis_sizes"]), tuple(d["axis_names"]),
        tuple(sharding_mod.AxisType[t] for t in d["axis_types"]),
        abstract_device=None if d["abstract_device"] is None
        else tuple(d["abstract_device"]))
    spec = sharding_mod.PartitionSpec(
        *[tuple(p) if isinstance(p, list) else p for p in d["spec"]],
        unreduced=frozenset(d["unreduced"]), reduced=frozenset(d["reduced"]))
    return sharding_mod.NamedSharding(mesh, spec, memory_kind=d["memory_kind"])


# --- Exported ---------------------------------------------------------------------------------

def encode(exp, vjp_blob) -> bytearray:
    """The bytes of the Exported `exp`, with `vjp_blob` (its VJP's bytes) or None."""
    if exp.ordered_effects or exp.unordered_effects:
        raise ValueError(f"Cannot serialize the exported function '{exp.fun_name}': it "
                         "has effects.")
    header = json.dumps({
        "fun_name": exp.fun_name,
        "in_tree": _tree_json(exp.in_tree), "out_tree": _tree_json(exp.out_tree),
        "in_avals": [_aval_json(a) for a in exp.in_avals],
        "out_avals": [_aval_json(a) for a in exp.out_avals],
        "constraints": _scope_constraints(exp.in_avals + exp.out_avals),
        "in_shardings": [_sharding_json(s) for s in exp._in_named_shardings],
        "out_shardings": [_sharding_json(s) for s in exp._out_named_shardings],
        "nr_devices": exp.nr_devices, "platforms": list(exp.platforms),
        "disabled_checks": [str(c) for c in exp.disabled_safety_checks],
        "calling_convention_version": exp.calling_convention_version,
        "module_kept_var_idx": list(exp.module_kept_var_idx),
        "uses_global_constants": exp.uses_global_constants,
        "vjp": None if vjp_blob is None else base64.b64encode(bytes(vjp_blob)).decode("ascii"),
    }).encode("utf-8")
    return bytearray(_MAGIC + bytes([_FORMAT_VERSION]) + len(header).to_bytes(4, "big")
                     + header + bytes(exp.mlir_module_serialized))


def decode(blob):
    """(the fields of the Exported that `encode` wrote into `blob`, with its disabled
    checks as strings and without _get_vjp; its VJP's bytes or None)."""
    blob = bytes(blob)
    if not blob.startswith(_MAGIC):
        raise ValueError(
            "deserialize: these bytes are not a pyjax serialized Exported (they do not "
            "start with pyjax's header). pyjax reads what pyjax's Exported.serialize "
            "writes; serializations in JAX's own format (a flatbuffer) cannot be read.")
    at = len(_MAGIC)
    version = blob[at]
    if version != _FORMAT_VERSION:
        raise ValueError(f"deserialize: serialization format version {version}; this "
                         f"pyjax reads version {_FORMAT_VERSION}.")
    size = int.from_bytes(blob[at + 1:at + 5], "big")
    header = json.loads(blob[at + 5:at + 5 + size].decode("utf-8"))
    scope = None if header["constraints"] is None else SymbolicScope(header["constraints"])
    in_avals = tuple(_aval_from_json(a, scope) for a in header["in_avals"])
    out_avals = tuple(_aval_from_json(a, scope) for a in header["out_avals"])
    in_named = tuple(map(_sharding_from_json, header["in_shardings"]))
    out_named = tuple(map(_sharding_from_json, header["out_shardings"]))
    fields = dict(
        fun_name=header["fun_name"],
        in_tree=_treedef(header["in_tree"], in_avals), in_avals=in_avals,
        out_tree=_treedef(header["out_tree"], out_avals), out_avals=out_avals,
        _has_named_shardings=True, _in_named_shardings=in_named,
        _out_named_shardings=out_named, in_shardings_hlo=(None,) * len(in_named),
        out_shardings_hlo=(None,) * len(out_named), nr_devices=header["nr_devices"],
        platforms=tuple(header["platforms"]), ordered_effects=(), unordered_effects=(),
        disabled_safety_checks=tuple(header["disabled_checks"]),
        mlir_module_serialized=blob[at + 5 + size:],
        calling_convention_version=header["calling_convention_version"],
        module_kept_var_idx=tuple(header["module_kept_var_idx"]),
        uses_global_constants=header["uses_global_constants"])
    vjp = header["vjp"]
    return fields, None if vjp is None else base64.b64decode(vjp)
