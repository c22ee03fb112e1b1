"""Public jax.tree: the pytree functions of jax.tree_util under short names
(jax.tree.map is tree_util.tree_map). Re-exports only; the code lives in pyjax._src.tree_util."""
from pyjax._src.tree_util import (  # noqa: F401
    static_field as static,
    tree_all as all,
    tree_broadcast as broadcast,
    user_tree_flatten as flatten,
    user_tree_flatten_with_path as flatten_with_path,
    user_tree_leaves as leaves,
    tree_leaves_with_path as leaves_with_path,
    user_tree_map as map,
    tree_map_with_path as map_with_path,
    tree_reduce as reduce,
    tree_reduce_associative as reduce_associative,
    user_tree_structure as structure,
    tree_transpose as transpose,
    tree_unflatten as unflatten,
)
