"""jax._src.tree_util: the pytree registry (node type -> its flatten/unflatten) and the
public tree functions."""
from pyjax._src.tree_util import *  # noqa: F401,F403
from pyjax._src.tree_util import _registry  # noqa: F401
