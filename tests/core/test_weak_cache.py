"""util.WeakCache: the one get-or-build cache keyed on an owner's lifetime."""
import gc

from pyjax._src.util import WeakCache


class _Owner:
    pass


def test_builds_once_per_owner_and_key():
    cache, calls = WeakCache(), []
    owner = _Owner()

    def build():
        calls.append(1)
        return len(calls)
    assert cache.get(owner, "a", build) == 1
    assert cache.get(owner, "a", build) == 1
    assert cache.get(owner, "b", build) == 2
    assert cache.get(_Owner(), "a", build) == 3


def test_entries_go_with_their_owner():
    cache, owner = WeakCache(), _Owner()
    cache.get(owner, "k", lambda: [1, 2, 3])
    assert len(cache._per_owner) == 1
    del owner
    gc.collect()
    assert len(cache._per_owner) == 0
