"""`python -m pyjax SCRIPT [ARGS]` (or `python -m pyjax -m MODULE [ARGS]`) runs a program
written for JAX on pyjax: `import jax` inside it, and in the libraries it uses, is pyjax."""
import os
import runpy
import sys

from pyjax._src.jax_alias import alias_jax

_ALIAS_SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_src", "alias_site")
_USAGE = "usage: python -m pyjax SCRIPT [ARGS...]  |  python -m pyjax -m MODULE [ARGS...]"


def main(argv):
    if not argv or argv[0] in ("-h", "--help") or (argv[0] == "-m" and len(argv) < 2):
        print(_USAGE, file=sys.stderr)
        return 2
    alias_jax()
    # Python processes the program starts alias jax too (see alias_site/sitecustomize.py).
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [_ALIAS_SITE] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    if argv[0] == "-m":
        sys.argv = [argv[1]] + argv[2:]
        runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
        runpy.run_path(argv[0], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
