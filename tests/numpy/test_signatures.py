"""Every function of pyjax.numpy and pyjax.scipy (and the Array methods, ufunc methods and
`.at[]` updaters) takes the same parameters as JAX 0.10.2's: names, kinds (positional-only,
keyword-only) and defaults, against the table tests/data/record_jax_signatures.py recorded
from real JAX."""
import importlib
import json

import pytest

import pyjax.numpy as jnp
from repo_paths import DATA_DIR
from signature_text import signature_text

JAX_SIGNATURES = json.loads((DATA_DIR / "jax_signatures.json").read_text())

def _pyjax_callable(group: str, name: str):
    if group == "Array":
        return getattr(jnp.ones(3), name)
    if group == "Array.at":
        return getattr(jnp.ones(3).at[0], name)
    if group == "numpy.ufunc":
        ufunc, method = name.split(".")
        return getattr(getattr(jnp, ufunc), method)
    return getattr(importlib.import_module(f"pyjax.{group}"), name)


CASES = [(group, name) for group, table in sorted(JAX_SIGNATURES.items())
         for name in sorted(table)]


@pytest.mark.parametrize("group,name", CASES, ids=[f"{g}.{n}" for g, n in CASES])
def test_signature_matches_jax(group, name):
    expected = JAX_SIGNATURES[group][name]
    actual = signature_text(_pyjax_callable(group, name))
    assert actual == expected, f"{group}.{name}{actual} != JAX's {name}{expected}"


def test_functions_are_named_as_in_jax():
    # JAX 0.10.2 defines every alias as a function of its own (jnp.abs of jnp.absolute,
    # jnp.acos of jnp.arccos, jnp.amax of jnp.max): each public function's __name__ is the
    # name it is exported under, which is how tools and test ids tell them apart.
    misnamed = {name: fn.__name__ for name in dir(jnp) if not name.startswith("_")
                for fn in [getattr(jnp, name)]
                if callable(fn) and not isinstance(fn, type) and fn.__name__ != name}
    assert misnamed == {}
    assert jnp.abs is not jnp.absolute
