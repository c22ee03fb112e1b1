"""Records the call signatures of JAX 0.10.2's numpy and scipy functions for pyjax's
signature test (run with real JAX, outside the repo's environment):
python record_jax_signatures.py -> jax_signatures.json.

Each entry is the signature as tests/signature_text.py renders it."""
import importlib
import inspect
import json
import pathlib
import sys

import jax.numpy as jnp

sys.path.insert(0, str(pathlib.Path(__file__).parents[1]))
from signature_text import signature_text  # noqa: E402

MODULES = [
    "numpy", "numpy.linalg", "numpy.fft", "image", "scipy.special", "scipy.linalg",
    "scipy.stats", "scipy.signal", "scipy.fft", "scipy.ndimage", "scipy.integrate",
    "scipy.optimize", "scipy.sparse.linalg", "scipy.cluster.vq",
    *(f"scipy.stats.{d}" for d in [
        "bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
        "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
        "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
        "truncnorm", "uniform", "vonmises", "wrapcauchy"]),
]
UFUNC_METHODS = ["reduce", "accumulate", "at", "outer", "reduceat"]
AT_METHODS = ["get", "set", "add", "subtract", "multiply", "divide", "power", "min", "max",
              "apply"]


def public_callables(namespace):
    for name in sorted(n for n in dir(namespace) if not n.startswith("_")):
        try:
            obj = getattr(namespace, name)
        except Exception:  # Array properties that refuse to be read (flat, device_buffer)
            continue
        if inspect.ismodule(obj) or isinstance(obj, type):
            continue
        if callable(obj):
            try:
                yield name, signature_text(obj)
            except (ValueError, TypeError):  # builtins without a signature
                pass


out = {}
for module in MODULES:
    out[module] = dict(public_callables(importlib.import_module(f"jax.{module}")))
out["numpy.ufunc"] = {
    f"{name}.{method}": signature_text(getattr(getattr(jnp, name), method))
    for name in sorted(dir(jnp)) if isinstance(getattr(jnp, name), jnp.ufunc)
    for method in UFUNC_METHODS}
x = jnp.ones(3)
out["Array"] = dict(public_callables(x))
out["Array.at"] = {name: signature_text(getattr(x.at[0], name)) for name in AT_METHODS}
path = pathlib.Path(__file__).with_name("jax_signatures.json")
path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
