"""Coverage of JAX's public API: every name of jax.numpy (and its linalg and fft), jax.lax,
jax, jax.debug, jax.nn (and its initializers), jax.random, jax.scipy.special, jax.tree_util
and jax.export (JAX 0.10.2, listed in jax-public-names.json) exists in pyjax, unless the
tables below list it with the reason. Prints the counts per module."""
import json
import types

import pytest

import pyjax
import pyjax.export
import pyjax.numpy as jnp
import pyjax.scipy.special
from repo_paths import DATA_DIR

# JAX 0.10.2's public names, recorded once into the repository (tests read nothing outside).
_NAMES = DATA_DIR / "jax-public-names.json"

MODULES = {"jax.numpy": jnp, "jax.numpy.linalg": jnp.linalg, "jax.numpy.fft": jnp.fft,
           "jax.lax": pyjax.lax, "jax": pyjax, "jax.debug": pyjax.debug, "jax.nn": pyjax.nn,
           "jax.nn.initializers": pyjax.nn.initializers, "jax.random": pyjax.random,
           "jax.scipy.special": pyjax.scipy.special, "jax.tree_util": pyjax.tree_util,
           "jax.export": pyjax.export}

# Names JAX deprecates in 0.10.2 (warn on access) that pyjax leaves out: none today.
EXCLUDED: dict[tuple[str, str], str] = {}

# Public names still missing, with why: each is work to do, not a decision.
MISSING: dict[tuple[str, str], str] = {}


def _names():
    return json.loads(_NAMES.read_text())


def test_every_module_of_the_names_file_is_checked():
    assert set(_names()) == set(MODULES)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_public_names_coverage(module, capsys):
    names = _names()[module]
    present = [n for n in names if hasattr(MODULES[module], n)]
    missing = sorted(set(names) - set(present))
    with capsys.disabled():
        print(f"\n{module}: {len(present)} of {len(names)} names"
              + (f"; missing: {', '.join(missing)}" if missing else ""))
    unexplained = [n for n in missing if (module, n) not in EXCLUDED | MISSING]
    assert not unexplained, f"{module} lacks JAX's public names {unexplained}"
    stale = [n for (m, n) in EXCLUDED | MISSING if m == module and n in present]
    assert not stale, f"{module}: {stale} exist now; remove them from the tables"


def test_names_are_callables_or_types_not_placeholders():
    """A name counts only if it is something real: a function, a class, a module or a
    constant, never None."""
    for module, obj in MODULES.items():
        for name in _names()[module]:
            if hasattr(obj, name) and name != "newaxis":
                assert getattr(obj, name) is not None, f"{module}.{name} is None"


# pyjax's own public names, beyond JAX's: each is a documented pyjax feature.
PYJAX_ADDITIONS = {("jax", "alias_jax"): "runs code written for JAX (README)",
                   ("jax.debug", "explain"): "explains retraces and NaNs (docs)"}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_public_names_beyond_jax(module):
    """Libraries branch on hasattr (jax.tree_map, jax.random.PRNGKeyArray, ...): a name
    JAX 0.10.2 removed must be absent here too, or they take the wrong path."""
    names = set(_names()[module])
    extra = sorted(n for n, v in vars(MODULES[module]).items()
                   if not n.startswith("_") and n not in names
                   and not isinstance(v, types.ModuleType)
                   and (module, n) not in PYJAX_ADDITIONS)
    assert not extra, f"{module} has public names JAX 0.10.2 lacks: {extra}"
