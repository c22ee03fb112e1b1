"""Coverage of JAX's public API: how many names of jax.numpy (and its linalg and fft),
jax.lax, jax, jax.debug, jax.nn, jax.random, jax.scipy.special and jax.tree_util (JAX
0.10.2, listed in jax-public-names.json) pyjax provides. Prints the counts; fails if a
count drops below its recorded floor (raise the floors as coverage grows, never lower
them)."""
import json

import pytest

import pyjax
import pyjax.numpy as jnp
import pyjax.scipy.special
from repo_paths import DATA_DIR

# JAX 0.10.2's public names, recorded once into the repository (tests read nothing outside).
_NAMES = DATA_DIR / "jax-public-names.json"

FLOORS = {"jax.numpy": 414, "jax.numpy.linalg": 31, "jax.numpy.fft": 18, "jax.lax": 344,
          "jax": 77, "jax.debug": 6, "jax.nn": 32, "jax.random": 48,
          "jax.scipy.special": 53, "jax.tree_util": 36}
MODULES = {"jax.numpy": jnp, "jax.numpy.linalg": jnp.linalg, "jax.numpy.fft": jnp.fft,
           "jax.lax": pyjax.lax, "jax": pyjax, "jax.debug": pyjax.debug, "jax.nn": pyjax.nn,
           "jax.random": pyjax.random, "jax.scipy.special": pyjax.scipy.special,
           "jax.tree_util": pyjax.tree_util}


def _names():
    return json.loads(_NAMES.read_text())


@pytest.mark.parametrize("module", sorted(FLOORS))
def test_public_names_coverage(module, capsys):
    names = _names()[module]
    present = [n for n in names if hasattr(MODULES[module], n)]
    missing = sorted(set(names) - set(present))
    with capsys.disabled():
        print(f"\n{module}: {len(present)} of {len(names)} names"
              + (f"; missing: {', '.join(missing)}" if missing else ""))
    assert len(present) >= FLOORS[module], (
        f"{module} coverage fell to {len(present)} (floor {FLOORS[module]}); missing: "
        f"{missing}")


def test_names_are_callables_or_types_not_placeholders():
    """A name counts only if it is something real: a function, a class, a module or a
    constant, never None."""
    for module, obj in MODULES.items():
        for name in _names()[module]:
            if hasattr(obj, name) and name != "newaxis":
                assert getattr(obj, name) is not None, f"{module}.{name} is None"
