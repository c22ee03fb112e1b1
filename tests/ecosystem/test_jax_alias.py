"""pyjax.alias_jax and `python -m pyjax`: code written for JAX imports pyjax's modules as
`jax`, `jax.numpy`, `jax.*`, with jax.__version__ at the JAX API level pyjax implements.
Each check runs in a fresh interpreter, since the alias is process-wide."""
import os
import subprocess
import sys
import textwrap

import pytest

from repo_paths import REPO_ROOT


def run_python(code, *args, module_args=None):
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    argv = [sys.executable] + (module_args or ["-c", textwrap.dedent(code)]) + list(args)
    return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=300)


def test_alias_maps_jax_modules_to_pyjax():
    out = run_python("""
        import pyjax
        pyjax.alias_jax()
        import jax, jax.numpy as jnp, jax.scipy.special, jax.interpreters.ad
        from jax.tree_util import tree_map
        import pyjax.numpy, pyjax.tree_util
        assert jnp is pyjax.numpy and tree_map is pyjax.tree_util.tree_map
        assert jax.jit is pyjax.jit and jax.scipy.special is pyjax.scipy.special
        assert jax.__version__ == "0.10.2" and jax.__version_info__ == (0, 10, 2)
        assert jax.typing.ArrayLike is pyjax.typing.ArrayLike   # lazily loaded submodule
        # read through once, then a plain module attribute (libraries look names up on
        # every call)
        assert vars(jax)["jit"] is pyjax.jit and vars(jax)["typing"] is pyjax.typing
        print(float(jax.jit(lambda x: jnp.sin(x) * 2)(1.0)))
        try:
            import jax.no_such_module
        except ModuleNotFoundError as e:
            print("missing:", e)
    """)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "1.6829419136047363"   # JAX: 1.6829419136047363
    assert "'jax.no_such_module'" in lines[1] and "pyjax" in lines[1]


def test_alias_serves_private_modules_from_jax_compat():
    out = run_python("""
        import pyjax
        pyjax.alias_jax()
        import jax._src.core, jax._src.traceback_util
        print(jax._src.core.__name__, jax._src.traceback_util.__name__)
        print(jax._src.core.ShapedArray is pyjax.core.ShapedArray)
    """)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["pyjax._src.jax_compat.core",
                                  "pyjax._src.jax_compat.traceback_util", "True"]


def test_alias_refuses_when_real_jax_is_loaded():
    out = run_python("""
        import sys, types
        sys.modules["jax"] = types.ModuleType("jax")   # what `import jax` leaves behind
        import pyjax
        try:
            pyjax.alias_jax()
        except ImportError as e:
            print(e)
    """)
    assert out.returncode == 0, out.stderr
    assert "real JAX is already imported" in out.stdout


def test_python_m_pyjax_runs_a_script_with_arguments(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import sys
        import jax, jax.numpy as jnp
        print(sys.argv[1:], float(jax.grad(lambda x: x ** 3)(float(sys.argv[1]))))
    """))
    out = run_python(None, str(script), "2.0", "--flag", module_args=["-m", "pyjax"])
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['2.0', '--flag'] 12.0"
    usage = run_python(None, module_args=["-m", "pyjax"])
    assert usage.returncode == 2 and "usage: python -m pyjax SCRIPT" in usage.stderr


def test_python_m_pyjax_aliases_jax_in_the_processes_it_starts(tmp_path):
    # pytest-xdist workers, multiprocessing's spawned children and `subprocess` runs of
    # python start fresh interpreters: they get the alias too, and a sitecustomize the
    # alias's own shadows still runs.
    other = tmp_path / "other_site"
    other.mkdir()
    (other / "sitecustomize.py").write_text("import os; os.environ['OTHER_SITE'] = 'ran'\n")
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import multiprocessing, subprocess, sys
        import jax

        def child(x):
            import jax, os
            return type(jax).__name__, os.environ.get("OTHER_SITE"), float(jax.numpy.sum(
                jax.numpy.arange(x)))

        if __name__ == "__main__":
            code = "import jax, sys; print(type(jax).__name__, jax.__version__, " \\
                   "any('alias_site' in p for p in sys.path))"
            print(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                 text=True, check=True).stdout.strip())
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                print(pool.map(child, [4]))
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO_ROOT), str(other)]))
    out = subprocess.run([sys.executable, "-m", "pyjax", str(script)], capture_output=True,
                         text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["JaxModule 0.10.2 False", "[('JaxModule', 'ran', 6.0)]"]


def test_arrays_tracers_and_keys_are_jax_arrays():
    import pyjax as jax
    import pyjax.numpy as jnp

    seen = []

    def record(x):
        seen.append((isinstance(x, jax.Array), isinstance(x, jnp.ndarray), jax.typeof(x).shape))
        return x

    jax.jit(record)(jnp.ones(2))
    jax.grad(lambda x: record(x) * 1.0)(1.0)
    jax.vmap(record)(jnp.ones((3, 2)))
    record(jnp.ones(2))
    assert seen == [(True, True, (2,)), (True, True, ()), (True, True, (2,)), (True, True, (2,))]
    keys = jax.random.split(jax.random.key(0), 3)
    assert isinstance(keys, jax.Array) and not isinstance(1.0, jax.Array)
    assert str(jax.typeof(keys)) == "key<fry>[3]" and jax.typeof(keys).shape == (3,)


def test_jax_array_registers_and_subclasses_as_an_abstract_base_class():
    import numpy as np

    import pyjax as jax

    class Registered:
        pass

    class Derived(Registered):
        pass

    assert not isinstance(Derived(), jax.Array) and not issubclass(Registered, jax.Array)
    assert jax.Array.register(Registered) is Registered
    assert isinstance(Derived(), jax.Array) and issubclass(Derived, jax.Array)

    class Sub(jax.Array):   # a subclass is a jax.Array, and a registry of its own
        pass

    class Under(Sub):
        pass

    assert isinstance(Under(), jax.Array) and isinstance(Under(), Sub)
    assert not isinstance(Sub(), Under) and issubclass(Under, jax.Array)
    assert issubclass(jax.Array, jax.Array) and not issubclass(np.ndarray, jax.Array)
    assert not isinstance(np.ones(2), jax.Array) and not isinstance(None, jax.Array)
    with pytest.raises(TypeError, match="Can only register classes"):
        jax.Array.register(1.0)


def test_config_with_absl_reads_jax_flags_from_the_command_line():
    pytest.importorskip("absl", reason="absl-py is installed by ./dev (ecosystem-deps)")
    out = run_python("""
        import sys
        from absl import app
        import pyjax as jax
        jax.config.config_with_absl()
        def main(argv):
            print(jax.config.jax_enable_x64, jax.numpy.ones(1).dtype, argv[1:])
        app.run(main)
    """, "--jax_enable_x64", "rest")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True float64 ['rest']"


def test_parse_flags_with_absl_applies_jax_flags_without_app_run():
    # flax's and JAX's own test modules call it at import
    pytest.importorskip("absl", reason="absl-py is installed by ./dev (ecosystem-deps)")
    out = run_python("""
        import pyjax as jax
        jax.config.parse_flags_with_absl()
        jax.config.parse_flags_with_absl()   # once per process; a second call is a no-op
        print(jax.config.jax_enable_x64, jax.numpy.ones(1).dtype)
    """, "--jax_enable_x64", "--other_flag", "--", "--jax_no_such")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True float64"


def test_array_registration_from_many_threads_keeps_every_class():
    # jax.Array's members are a tuple extended under a lock: concurrent registrations
    # (and subclass definitions) must not drop each other's class
    import threading

    import pyjax as jax
    classes = [type(f"Registered{i}", (), {}) for i in range(64)]
    barrier = threading.Barrier(8)

    def register(chunk):
        barrier.wait()
        for c in chunk:
            jax.Array.register(c)
    threads = [threading.Thread(target=register, args=(classes[i::8],)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(isinstance(c(), jax.Array) for c in classes)
