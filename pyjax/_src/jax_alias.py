"""Runs code written for JAX on pyjax: `alias_jax()` installs an import hook so that
`import jax`, `import jax.numpy`, `from jax.sharding import ...` (and any submodule
imported later) resolve to pyjax's modules. `jax._src.<name>`, the private modules some
libraries import, resolve to pyjax._src.jax_compat.<name>, the one place that serves them.
Uses only the standard library and importlib; imports pyjax lazily by module name."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import threading
import types

# The JAX API level pyjax implements: under the alias `jax.__version__` reports it, so
# libraries that branch on JAX's version take the code paths written for this API.
JAX_API_VERSION = "0.10.2"

_COMPAT_PACKAGE = "pyjax._src.jax_compat"
_lock = threading.Lock()


def target_module_name(fullname: str) -> str:
    """The pyjax module that serves the JAX module `fullname` ('jax.numpy' -> 'pyjax.numpy',
    'jax._src.core' -> 'pyjax._src.jax_compat.core')."""
    if fullname == "jax._src" or fullname.startswith("jax._src."):
        return _COMPAT_PACKAGE + fullname[len("jax._src"):]
    return "py" + fullname


class JaxModule(types.ModuleType):
    """The top-level `jax` module under the alias: pyjax's namespace, reporting the JAX API
    version pyjax implements. An attribute is read through to `pyjax` on first use (so
    lazily imported submodules and later additions are seen) and then kept on this module,
    since libraries look up `jax.<name>` on every call and a module's own attributes are
    found without calling __getattr__; assignments stay on this module."""

    def __init__(self, pyjax_module: types.ModuleType):
        super().__init__("jax", pyjax_module.__doc__)
        self.__dict__["_pyjax"] = pyjax_module
        self.__path__ = []     # a package: its submodules are found by JaxAliasFinder
        self.__version__ = JAX_API_VERSION
        self.__version_info__ = version_module().__version_info__
        self.__file__ = pyjax_module.__file__

    def __getattr__(self, name):
        if name in ("_src", "version"):   # served by the alias, not by pyjax's own modules
            return importlib.import_module("jax." + name)
        try:
            value = getattr(self.__dict__["_pyjax"], name)
        except AttributeError:
            pass
        else:
            self.__dict__[name] = value
            return value
        # JAX imports its public submodules eagerly, so `jax.sharding` works after a bare
        # `import jax`; here they load on first access.
        if not name.startswith("_") and importlib.util.find_spec("pyjax." + name) is not None:
            return importlib.import_module("jax." + name)
        raise AttributeError(
            f"module 'jax' has no attribute {name!r} (jax is aliased to pyjax, which does "
            "not provide it)")

    def __dir__(self):
        return sorted(set(dir(self.__dict__["_pyjax"])) | set(self.__dict__))


def version_module() -> types.ModuleType:
    """`jax.version` under the alias: the JAX API version pyjax implements."""
    module = types.ModuleType("jax.version", "The JAX API version pyjax implements.")
    module.__version__ = module._version = JAX_API_VERSION
    module.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
    return module


class _ExistingModuleLoader(importlib.abc.Loader):
    """Hands the import system a module that is already loaded under another name."""

    def __init__(self, module: types.ModuleType):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Finds `jax` and `jax.*` as pyjax's modules, ahead of any installed JAX."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "jax" and not fullname.startswith("jax."):
            return None
        if fullname == "jax":
            module = JaxModule(importlib.import_module("pyjax"))
        elif fullname == "jax.version":
            module = version_module()
        else:
            target_name = target_module_name(fullname)
            try:
                module = importlib.import_module(target_name)
            except ModuleNotFoundError as e:
                if e.name != target_name:
                    raise
                raise ModuleNotFoundError(
                    f"No module named {fullname!r}: jax is aliased to pyjax, which has no "
                    f"{target_name!r}", name=fullname) from None
        return importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(module),
                                              is_package=hasattr(module, "__path__"))


_finder = JaxAliasFinder()


def alias_jax() -> None:
    """Makes `import jax` and every `jax.*` import in this process resolve to pyjax, so
    that libraries written for JAX (optax, flax, equinox, ...) run on pyjax unmodified.
    Call it before the first `import jax`; calling it again does nothing. Raises
    ImportError when the real JAX is already imported, since two `jax` modules cannot
    share a process."""
    with _lock:
        if _finder in sys.meta_path:
            return
        loaded = sys.modules.get("jax")
        if loaded is not None and not isinstance(loaded, JaxModule):
            raise ImportError(
                f"pyjax.alias_jax(): the real JAX is already imported in this process "
                f"(from {getattr(loaded, '__file__', '?')}). Call alias_jax() before anything "
                "imports jax, or run the program with `python -m pyjax SCRIPT`.")
        sys.meta_path.insert(0, _finder)


def is_aliased() -> bool:
    """Whether `alias_jax()` is installed in this process."""
    return _finder in sys.meta_path
