"""The layering rule of DESIGN.md: a module under pyjax/_src never imports a module of a
higher layer, modules import each other without cycles, pyjax/_src never imports the public
package, and `import pyjax` stays light. Imports inside functions count like any other."""
import ast
import subprocess
import sys

from repo_paths import REPO_ROOT

SRC = REPO_ROOT / "pyjax" / "_src"

LEVELS = [
    (0, ("util", "config", "dtypes", "errors", "layout", "traceback_util", "version",
         "monitoring", "shape_poly")),
    (1, ("tree_util",)),
    (2, ("core",)),
    (3, ("interpreters",)),
    (4, ("backends", "array", "basearray", "sharding")),
    (5, ("lax",)),
    (6, ("api",)),
    (7, ("numpy", "nn", "random", "scipy", "debug", "sharding_diagram", "test_util",
         "callbacks", "ops", "flatten_util", "example_libraries", "image", "ode", "checkify",
         "extend", "state", "sparse", "profiler", "export", "ffi", "test_case")),
    (8, ("jax_alias", "jax_compat", "alias_site")),
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
    """(module, line) for every import in `path`, at any depth; `from x import y` gives
    x.y where that is a module, else x; relative imports are resolved."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join(parts + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                yield (sub if sub in ALL_MODULES else base), node.lineno


def module_name(path):
    rel = path.relative_to(SRC.parent.parent).with_suffix("")
    return ".".join(rel.parts).removesuffix(".__init__")


PACKAGE = SRC.parent
ALL_MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def import_graph():
    """module -> {imported pyjax module: first line}, over all of pyjax. A module's own
    ancestor packages are left out: Python runs them before it in any case."""
    graph = {}
    for module, path in ALL_MODULES.items():
        edges = graph[module] = {}
        for target, line in imported_modules(path):
            while target and target not in ALL_MODULES:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                edges.setdefault(target, line)
    return graph


def strongly_connected(graph):
    """The import cycles: strongly connected sets of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph)))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    return found


def test_no_import_cycles():
    graph = import_graph()
    report = []
    for cycle in sorted(strongly_connected(graph), key=sorted):
        edges = [f"    {a}:{graph[a][b]} imports {b}" for a in sorted(cycle)
                 for b in sorted(graph[a]) if b in cycle]
        report.append("import cycle:\n" + "\n".join(edges))
    assert not report, "\n".join(report)


def test_src_never_imports_the_public_package():
    found = [f"{ALL_MODULES[m].relative_to(PACKAGE)}:{line} imports {target}"
             for m in ALL_MODULES if m.startswith("pyjax._src")
             for target, line in imported_modules(ALL_MODULES[m])
             if (target == "pyjax" or target.startswith("pyjax.")) and
             not target.startswith("pyjax._src")]
    assert not found, "\n".join(found)


def test_no_module_imports_a_higher_layer():
    violations = []
    for path in SRC.rglob("*.py"):
        module = module_name(path)
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
