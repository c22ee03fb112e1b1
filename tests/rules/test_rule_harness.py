"""The rule harness sees every primitive: it imports every module under pyjax/_src (so
families pyjax loads lazily register theirs), its completeness check catches a primitive
defined in a lazily imported module, and the public lazy-name tables match the modules."""
import importlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import harness
import pyjax
import pyjax.lax
from repo_paths import DATA_DIR, TESTS_DIR

SRC = pathlib.Path(pyjax.__file__).parent / "_src"


def _module_name(path):
    return ".".join(path.relative_to(SRC.parent.parent).with_suffix("").parts).removesuffix(
        ".__init__")


def test_harness_imports_every_src_module():
    # every module of pyjax._src's packages (alias_site/ is no package: its sitecustomize
    # runs in the processes `python -m pyjax` starts, never imported by pyjax)
    files = [p for p in SRC.rglob("*.py") if (p.parent / "__init__.py").exists()]
    assert {_module_name(p) for p in files} - set(harness.SRC_MODULES) == set()
    # ... so every module that defines primitives is among them.
    defining = {_module_name(p) for p in files if "define_primitive(" in p.read_text()}
    assert "pyjax._src.lax.special" in defining and defining <= set(harness.SRC_MODULES)


_INCOMPLETE_FAMILY = '''
from pyjax._src.core.avals import ShapedArray
from pyjax._src.core.trace import define_primitive

# Only impl and abstract_eval: no jvp, batch, lower or samples, and none declared absent.
incomplete_p = define_primitive("incomplete_probe", impl=lambda x: x,
                                abstract_eval=lambda x: ShapedArray(x.shape, x.dtype))
'''

_PROBE = '''
import sys
import harness
from pyjax._src.core.trace import registered_primitives
print("registered before:", "incomplete_probe" in registered_primitives())
harness.import_every_module("lazyprobe")
gaps = [g for s in harness.COMPLETENESS_SLOTS for g in harness.rule_gaps(s)]
print("\\n".join(gaps))
'''


def test_completeness_check_fails_on_an_incomplete_lazily_imported_primitive(tmp_path):
    """A family module that nothing imports at start-up (as pyjax's lazy families) with a
    primitive missing its rules: the harness imports it and the completeness check names
    each missing rule. Run in a fresh process so the throwaway primitive stays out of this
    one's registry."""
    package = tmp_path / "lazyprobe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "family.py").write_text(textwrap.dedent(_INCOMPLETE_FAMILY))
    path = [str(tmp_path), str(TESTS_DIR), str(SRC.parent.parent)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "registered before: False"   # lazily imported: not there at first
    gaps = {line.split(":")[1].strip() for line in lines[1:]
            if line.startswith("incomplete_probe:")}
    assert gaps == {"no jvp rule (write one, or declare its absence)",
                    "no batch rule (write one, or declare its absence)",
                    "no lower rule (write one, or declare its absence)",
                    "no samples rule (write one, or declare its absence)"}
    # pyjax's own primitives are all complete: the probe is the only one named.
    assert all(line.startswith("incomplete_probe:") for line in lines[1:])


def test_lax_lazy_name_table_matches_the_modules():
    jax_lax = set(json.loads((DATA_DIR / "jax-public-names.json").read_text())["jax.lax"])
    problems = []
    for public, (module, private) in pyjax.lax._LAZY_NAMES.items():
        family = importlib.import_module(f"pyjax._src.lax.{module}")
        if not hasattr(family, private or public):
            problems.append(f"{public}: pyjax._src.lax.{module} has no {private or public}")
        if public not in jax_lax:
            problems.append(f"{public}: not a jax.lax name")
        if public in vars(pyjax.lax) and vars(pyjax.lax)[public] is not getattr(
                family, private or public, None):
            problems.append(f"{public}: shadowed by an eager pyjax.lax name")
    # Every jax.lax name a lazy family exports is reachable through the table.
    for module in pyjax.lax._LAZY_FAMILIES:
        family = importlib.import_module(f"pyjax._src.lax.{module}")
        for name in getattr(family, "__all__", ()):
            if name in jax_lax and name not in pyjax.lax._LAZY_NAMES:
                problems.append(f"{name}: exported by {module} but missing from the table")
    assert not problems, "\n".join(problems)


def test_lazy_submodules_exist():
    for name in pyjax._LAZY_SUBMODULES:
        assert importlib.import_module(f"pyjax.{name}") is getattr(pyjax, name)
