"""The layering rule of DESIGN.md: a module under pyjax/_src never imports a module of a
higher layer (function-level imports included), and `import pyjax` stays light."""
import ast
import pathlib
import subprocess
import sys

SRC = pathlib.Path(__file__).resolve().parents[1] / "pyjax" / "_src"

LEVELS = [
    (0, ("util", "config", "dtypes", "errors", "layout")),
    (1, ("tree_util",)),
    (2, ("core",)),
    (3, ("interpreters",)),
    (4, ("backends", "array", "basearray", "sharding")),
    (5, ("lax",)),
    (6, ("api",)),
    (7, ("numpy", "nn", "random", "scipy", "debug", "test_util", "callbacks", "ops",
         "flatten_util", "example_libraries", "image", "ode", "checkify", "extend", "state",
         "sparse")),
    (8, ("jax_alias", "jax_compat")),
]


def level_of(module):
    """Level of a dotted module under pyjax._src (None if outside it)."""
    parts = module.split(".")
    if parts[:2] != ["pyjax", "_src"] or len(parts) < 3:
        return None
    for level, names in LEVELS:
        if parts[2] in names:
            return level
    raise AssertionError(f"module {module} is in no layer: add it to LEVELS and DESIGN.md")


def imported_modules(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module, node.lineno
            for alias in node.names:   # `from pyjax._src import lax` names a module
                yield f"{node.module}.{alias.name}", node.lineno


def test_no_module_imports_a_higher_layer():
    violations = []
    for path in SRC.rglob("*.py"):
        rel = path.relative_to(SRC.parent.parent).with_suffix("")
        module = ".".join(rel.parts).removesuffix(".__init__")
        own = level_of(module)
        if own is None:
            continue
        for target, line in imported_modules(path):
            try:
                other = level_of(target)
            except AssertionError:
                continue   # `from pyjax._src.x import some_function`: checked via x
            if other is not None and other > own:
                violations.append(f"{path.relative_to(SRC)}:{line} (level {own}) imports "
                                  f"{target} (level {other})")
    assert not violations, "\n".join(violations)


def test_import_pyjax_does_not_load_jaxlib():
    code = "import sys, pyjax, pyjax.numpy; print('jaxlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
