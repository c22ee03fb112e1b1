"""jax.debug.visualize_sharding's diagram, character for character as JAX 0.10.2 prints it
(through rich) for the same shardings: cells sized from each block's share of the array,
columns shrunk and labels wrapped or cut ("…") when the table exceeds max_width. The
devices are stand-ins (only platform and id are read), as in JAX's own tests."""
import contextlib
import io

import numpy as np
import pytest

import pyjax as jax
from pyjax.sharding import Mesh, NamedSharding, PartitionSpec as P


class _Device:
    def __init__(self, platform, id):
        self.platform, self.id = platform, id


def _devices(shape):
    return np.array([_Device("CPU", i) for i in range(int(np.prod(shape)))]).reshape(shape)


CASES = [
    ((5,), (1,), ('x',), P('x'), {},
     '┌───────┐\n'
     '│ CPU 0 │\n'
     '└───────┘\n'),
    ((5,), (1,), ('x',), P('x'), dict(scale=8.0),
     '┌──────────────────────────────────────┐\n'
     '│                CPU 0                 │\n'
     '└──────────────────────────────────────┘\n'),
    ((8, 8), (4, 2), ('x', 'y'), P(None, 'y'), {},
     '┌───────────┬───────────┐\n'
     '│           │           │\n'
     '│           │           │\n'
     '│           │           │\n'
     '│           │           │\n'
     '│CPU 0,2,4,6│CPU 1,3,5,7│\n'
     '│           │           │\n'
     '│           │           │\n'
     '│           │           │\n'
     '│           │           │\n'
     '└───────────┴───────────┘\n'),
    ((32,), (16,), ('x',), P('x'), {},
     '┌────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬───┬────┐\n'
     '│ C… │ C… │ C… │ C… │ C… │ C… │ C… │ C… │ C… │ C… │CPU │CPU │CPU │CPU │C… │CPU │\n'
     '│ 0  │ 1  │ 2  │ 3  │ 4  │ 5  │ 6  │ 7  │ 8  │ 9  │10  │11  │12  │13  │14 │15  │\n'
     '└────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴───┴────┘\n'),
    ((4, 4), (2, 2), ('x', 'y'), P('y', 'x'), dict(min_width=15),
     '┌─────────────┬─────────────┐\n'
     '│             │             │\n'
     '│    CPU 0    │    CPU 2    │\n'
     '│             │             │\n'
     '│             │             │\n'
     '├─────────────┼─────────────┤\n'
     '│             │             │\n'
     '│    CPU 1    │    CPU 3    │\n'
     '│             │             │\n'
     '│             │             │\n'
     '└─────────────┴─────────────┘\n'),
    ((6, 100), (2, 4), ('x', 'y'), P('x', 'y'), dict(max_width=40),
     '┌─────────┬─────────┬─────────┬────────┐\n'
     '│         │         │         │        │\n'
     '│         │         │         │        │\n'
     '│         │         │         │        │\n'
     '├─────────┼─────────┼─────────┼────────┤\n'
     '│         │         │         │        │\n'
     '│         │         │         │        │\n'
     '│         │         │         │        │\n'
     '└─────────┴─────────┴─────────┴────────┘\n'),
    ((8, 32), (2, 16), ('x', 'y'), P(None, 'y'), {},
     '┌────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬────┬───┐\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU │CPU│\n'
     '│0,16│1,17│2,18│3,19│4,20│5,21│6,22│7,23│8,24│9,25│10,…│11,…│12,…│13,…│14,…│15…│\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '│    │    │    │    │    │    │    │    │    │    │    │    │    │    │    │   │\n'
     '└────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴────┴───┘\n'),
    ((16, 16), (4, 4), ('x', 'y'), P('y', None), dict(scale=0.5, min_width=2),
     '┌─────────────┐\n'
     '│CPU 0,4,8,12 │\n'
     '├─────────────┤\n'
     '│CPU 1,5,9,13 │\n'
     '├─────────────┤\n'
     '│CPU 2,6,10,14│\n'
     '├─────────────┤\n'
     '│CPU 3,7,11,15│\n'
     '└─────────────┘\n'),
    ((16, 16), (4, 4), ('x', 'y'), P(None, 'x'), dict(max_width=20, min_width=30),
     '┌────┬────┬───┬────┐\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '│    │    │   │ …  │\n'
     '│    │    │   │ …  │\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '│    │    │   │    │\n'
     '└────┴────┴───┴────┘\n'),
    ((24,), (4, 2), ('x', 'y'), P(('y', 'x')), dict(max_width=25),
     '┌──┬──┬──┬──┬──┬──┬──┬──┐\n'
     '│  │  │  │  │  │  │  │  │\n'
     '└──┴──┴──┴──┴──┴──┴──┴──┘\n'),]


@pytest.mark.parametrize("shape,mesh_shape,names,spec,options,expected", CASES)
def test_diagram_matches_jax(shape, mesh_shape, names, spec, options, expected):
    sharding = NamedSharding(Mesh(_devices(mesh_shape), names), spec)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        jax.debug.visualize_sharding(shape, sharding, **options)
    assert printed.getvalue() == expected


def test_only_one_and_two_dimensions():
    sharding = NamedSharding(Mesh(_devices((1,)), ("x",)), P())
    with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
        jax.debug.visualize_sharding((2, 2, 2), sharding)
