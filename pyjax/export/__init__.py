"""Public jax.export: export a jitted function to StableHLO (`export`), serialize and
deserialize the `Exported`, and call it from JAX programs (`Exported.call`); symbolic
shapes (`symbolic_shape`, `symbolic_args_specs`, `SymbolicScope`)."""
from pyjax._src.shape_poly import (  # noqa: F401
    SymbolicScope, is_symbolic_dim, symbolic_shape)
from pyjax._src.export.exported import (  # noqa: F401
    DisabledSafetyCheck, Exported, default_export_platform, deserialize, export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version, symbolic_args_specs)
from pyjax._src.export.serialization import (  # noqa: F401
    register_namedtuple_serialization, register_pytree_node_serialization)
