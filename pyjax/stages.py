"""Public jax.stages: the types of jit's ahead-of-time stages, for annotations and
isinstance checks: jit(f) is a Wrapped, .trace(...) a Traced, .lower(...) a Lowered,
.compile() a Compiled; args_info holds ArgInfo leaves."""
from typing import Union

from pyjax._src.api.aot import ArgInfo, Compiled, Lowered  # noqa: F401
from pyjax._src.api.jit import Traced, Wrapped  # noqa: F401

CompilerOptions = dict[str, Union[str, bool]]
