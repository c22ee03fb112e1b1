"""Put on PYTHONPATH by `python -m pyjax`, so that Python processes the program starts
(pytest-xdist workers, multiprocessing's spawned children, `subprocess` runs of python)
alias `jax` to pyjax as the program itself does. Python's `site` imports the first
`sitecustomize` on sys.path at start-up: this one installs the alias, then runs the
sitecustomize it shadows, if there is one."""
import importlib.machinery
import importlib.util
import os
import sys

_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
try:
    from pyjax._src.jax_alias import alias_jax
    alias_jax()
finally:
    _shadowed = importlib.machinery.PathFinder.find_spec("sitecustomize", sys.path)
    if _shadowed is not None and _shadowed.loader is not None:
        _shadowed.loader.exec_module(importlib.util.module_from_spec(_shadowed))
