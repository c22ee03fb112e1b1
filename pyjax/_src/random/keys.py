"""PRNG keys for jax.random: typed key arrays (`jax.random.key`, dtype key<fry>) and raw
uint32 keys (`jax.random.PRNGKey`), and the key operations split, fold_in, key_data,
wrap_key_data, bits. A typed key array wraps its uint32 data (shape (..., 2)) and is a
pytree over that data, so jit, vmap and scan carry it. Imports lax and tree_util."""
from __future__ import annotations

import warnings

import numpy as np

from pyjax._src import config, dtypes, tree_util
from pyjax._src.array import Array
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import random_bits as rb
from pyjax._src.lax import structural
from pyjax._src.util import canonicalize_shape

IMPL_NAME = "threefry2x32"
IMPL_TAG = "fry"
KEY_SHAPE = (2,)


class PRNGSpec:
    """Names the PRNG implementation of a key (only threefry2x32 is provided)."""

    def __init__(self, name=IMPL_NAME):
        self.name = name

    def __repr__(self):
        return f"PRNGSpec({self.name!r})"

    def __str__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, PRNGSpec) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


class KeyTy:
    """The dtype of typed key arrays, printed key<fry>."""

    name = f"key<{IMPL_TAG}>"
    impl = PRNGSpec()
    type = dtypes.prng_key   # so that issubdtype(key.dtype, jax.dtypes.prng_key) holds

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyTy)

    def __hash__(self):
        return hash(KeyTy)


KEY_DTYPE = KeyTy()


class PRNGKeyArray:
    """An array of typed PRNG keys. Its shape excludes the trailing key-data dimension;
    `jax.random.key_data` gives the uint32 data."""

    __slots__ = ("_base",)

    def __init__(self, base):
        self._base = base

    @property
    def shape(self):
        return tuple(get_aval(self._base).shape[:-1])

    dtype = KEY_DTYPE
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return PRNGKeyArray(self._base[(*index, slice(None))])

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
            else shape
        shape = _resolve_shape(tuple(shape), self.size)
        return PRNGKeyArray(structural.reshape(self._base, (*shape, *KEY_SHAPE)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    @property
    def T(self):
        perm = tuple(reversed(range(self.ndim))) + (self.ndim,)
        return PRNGKeyArray(structural.transpose(self._base, perm))

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return (self._base == other._base).all(axis=-1)

    def __ne__(self, other):
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return (self._base != other._base).any(axis=-1)

    __hash__ = None

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX does not support converting a typed PRNG key array to a "
                        "NumPy array; use jax.random.key_data(keys) to get its uint32 "
                        "data.")

    def __repr__(self):
        if isinstance(self._base, Tracer):
            return f"Traced<{KEY_DTYPE.name}{list(self.shape)}>with<{self._base._trace!r}>"
        return (f"Array({self.shape}, dtype={KEY_DTYPE.name}) overlaying:\n"
                f"{np.asarray(self._base)}")

    __str__ = __repr__


tree_util.register_pytree_node(PRNGKeyArray, lambda k: ((k._base,), None),
                               lambda _, children: PRNGKeyArray(children[0]))


def _resolve_shape(shape, size):
    if shape.count(-1) > 1:
        raise ValueError(f"can only specify one unknown dimension, got shape {shape}")
    if -1 in shape:
        known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
        shape = tuple(size // known if d == -1 else d for d in shape)
    if int(np.prod(shape, dtype=np.int64)) != size:
        raise TypeError(f"cannot reshape a key array of {size} keys into shape {shape}")
    return shape


def _as_value(x):
    """A numpy value or traced value for raw key data (lists become uint32 arrays)."""
    if isinstance(x, (Array, Tracer, np.ndarray)):
        return x
    return np.asarray(x)


def check_key_data(data, where="key"):
    """Validates raw key data: uint32 with a trailing dimension of 2."""
    aval = get_aval(data)
    if aval.shape[-1:] != KEY_SHAPE:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.shape to end with "
            f"(2,); got shape={aval.shape} for impl={IMPL_NAME} (in {where}). Create keys "
            "with jax.random.key(seed) or jax.random.PRNGKey(seed).")
    if aval.dtype != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype "
                        f"= uint32; got dtype={aval.dtype} (in {where}).")
    return data


def unwrap(key, name, allow_batched=False):
    """(raw uint32 data, was_raw) for a typed or raw key passed to jax.random.`name`."""
    if isinstance(key, PRNGKeyArray):
        data, raw = key._base, False
    elif isinstance(key, (Array, Tracer, np.ndarray, list, tuple)):
        data, raw = check_key_data(_as_value(key), name), True
        _legacy_key_policy(name)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)} passed to "
                        f"jax.random.{name}; create keys with jax.random.key(seed).")
    shape = get_aval(data).shape[:-1]
    if shape and not allow_batched:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{shape} != (). Use jax.vmap for batching.")
    return data, raw


def _legacy_key_policy(name):
    """Applies jax_legacy_prng_key to a raw key passed to jax.random.`name`."""
    policy = config.legacy_prng_key.value
    if policy == "allow":
        return
    if policy == "error":
        raise ValueError(f"Legacy uint32 key array passed as key to jax.random.{name}. "
                         "Please create keys using jax.random.key(). If use of a raw key "
                         "array was intended, set jax_legacy_prng_key='allow'.")
    warnings.warn(f"Raw arrays as random keys to jax.random functions are deprecated "
                  f"(jax.random.{name}); create keys with jax.random.key(seed). Assuming a "
                  "valid threefry2x32 key for now.", UserWarning, stacklevel=4)


def rewrap(data, raw):
    return data if raw else PRNGKeyArray(data)


def _check_impl(impl, dtype, where):
    if dtype is not None:
        if impl is not None:
            raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to "
                             f"jax.random.{where}")
        impl = dtype
    if impl is None or impl in (IMPL_NAME, KEY_DTYPE) or isinstance(impl, PRNGSpec):
        if isinstance(impl, PRNGSpec) and impl.name != IMPL_NAME:
            raise ValueError(f'unrecognized PRNG implementation "{impl.name}". Did you '
                             f'mean one of: "{IMPL_NAME}"?')
        return
    if isinstance(impl, str):
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one '
                         f'of: "{IMPL_NAME}"? (pyjax provides threefry2x32 only)')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def _seed(seed, ctor):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not hasattr(seed, "aval") else seed.aval.ndim:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    data = rb.seed_key(seed)
    return Array(data) if isinstance(data, np.ndarray) else data


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (dtype key<fry>) made from an integer seed."""
    _check_impl(impl, dtype, "key")
    return PRNGKeyArray(_seed(seed, "key"))


def PRNGKey(seed, *, impl=None):
    """A raw PRNG key (uint32[2]) made from an integer seed (the legacy form)."""
    _check_impl(impl, None, "PRNGKey")
    return _seed(seed, "PRNGKey")


def split(key, num=2):
    """Splits one key into `num` new keys (an int or a shape), as the same kind of key."""
    data, raw = unwrap(key, "split")
    return rewrap(rb.split_key(data, canonical_shape(num, "split")), raw)


def fold_in(key, data):
    """A new key made from `key` and an integer (e.g. a step number)."""
    base, raw = unwrap(key, "fold_in")
    if np.ndim(data) if not hasattr(data, "aval") else data.aval.ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int) and not 0 <= data < 2 ** 32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    if isinstance(data, (int, np.integer)):   # NumPy integers wrap, as in a cast
        data = np.uint32(int(data) % 2 ** 32)
    return rewrap(rb.fold_in_key(base, data), raw)


def clone(key):
    """A copy of `key` (keys are immutable values; kept for API compatibility)."""
    return key


def key_data(keys):
    """The uint32 data of typed keys (raw keys are returned unchanged)."""
    data, _ = unwrap(keys, "key_data", allow_batched=True)
    return data


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 key data of shape (..., 2)."""
    _check_impl(impl, dtype, "wrap_key_data")
    data = check_key_data(_as_value(key_bits_array), "wrap_key_data")
    return PRNGKeyArray(data)


def key_impl(keys):
    """The name of the PRNG implementation of `keys`."""
    unwrap(keys, "key_impl", allow_batched=True)
    return IMPL_NAME


def key_dtype(impl=None):
    _check_impl(impl, None, "key_dtype")
    return KEY_DTYPE


def default_prng_impl():
    return PRNGSpec()


def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default)."""
    data, _ = unwrap(key, "bits")
    dtype = dtypes.default_uint_dtype() if dtype is None else dtypes.canonicalize_dtype(
        dtype)
    if np.dtype(dtype).kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, "
                         f"got {np.dtype(dtype)}")
    return rb.random_bits(data, np.dtype(dtype).itemsize * 8, canonical_shape(shape, "bits"))


def canonical_shape(shape, where):
    """A shape argument as a tuple of Python ints, with a clear error otherwise."""
    return canonicalize_shape(shape, f"jax.random.{where}")
