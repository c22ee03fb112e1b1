"""PRNG keys for jax.random: typed key arrays (`jax.random.key`, dtype key<fry>) and raw
uint32 keys (`jax.random.PRNGKey`), and the key operations split, fold_in, key_data,
wrap_key_data, bits, each carried out by the key's PRNG implementation (lax/prng.py). A
typed key array wraps its uint32 data (shape (..., *key_shape)) and is a pytree over that
data with its implementation as static data, so jit, vmap and scan carry it. A raw key
belongs to the default implementation (jax_default_prng_impl). Imports lax and
tree_util."""
from __future__ import annotations

import math
import warnings

import numpy as np

from pyjax._src import basearray, config, dtypes, tree_util
from pyjax._src import sharding as sharding_mod
from pyjax._src.api.custom_derivatives import SymbolicZero
from pyjax._src.api.vmap import vmap
from pyjax._src.array import Array
from pyjax._src.core.avals import AbstractValue, ShapedArray, get_aval, unsharded_sharding
from pyjax._src.core.trace import Tracer
from pyjax._src.lax import structural
from pyjax._src.lax.prng import PRNGS, PRNGImpl
from pyjax._src.numpy import indexing as jnp_indexing
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.numpy.util import is_arraylike
from pyjax._src.util import canonicalize_shape
from pyjax._src.lax.sharding_constraint import takes_out_sharding


class PRNGSpec:
    """Names the PRNG implementation of a key (jax.random.key(0, impl=PRNGSpec(...)))."""

    def __init__(self, impl):
        self._impl = impl

    name = property(lambda self: self._impl.name)

    def __repr__(self):
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self):
        return str(self._impl)   # the implementation's tag, as JAX prints it

    def __eq__(self, other):
        return isinstance(other, PRNGSpec) and other._impl == self._impl

    def __hash__(self):
        return hash(self._impl)


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed key arrays of one PRNG implementation, printed key<tag>
    (key<fry> for threefry2x32)."""

    type = dtypes.prng_key   # so that issubdtype(key.dtype, jax.dtypes.prng_key) holds

    def __init__(self, impl):
        self._impl = impl

    name = property(lambda self: f"key<{self._impl.tag}>")
    impl = property(lambda self: PRNGSpec(self._impl))
    # the bytes of one key: its uint32 key data
    itemsize = property(lambda self: 4 * math.prod(self._impl.key_shape))

    physical_shape = property(lambda self: self._impl.key_shape)
    physical_dtype = np.dtype(np.uint32)

    def to_physical(self, x):
        return x._base

    def from_physical(self, data):
        return PRNGKeyArray(self._impl, data)

    def aval(self, shape):
        return KeyAval(shape, self)

    def __repr__(self):
        return self.name

    __str__ = __repr__

    def __eq__(self, other):
        return isinstance(other, KeyTy) and other._impl == self._impl

    def __hash__(self):
        return hash((KeyTy, self._impl))


class KeyAval(AbstractValue):
    """The abstract type of a typed key array (what jax.typeof gives): its shape and the
    key dtype, printed key<fry>[2]."""

    __slots__ = ("shape", "dtype")
    weak_type = False

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), dtype

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    # keys are placed by no mesh in their type (pyjax does not split key arrays' types)
    sharding = property(lambda self: unsharded_sharding(len(self.shape)))

    def __eq__(self, other):
        return (isinstance(other, KeyAval) and other.shape == self.shape
                and other.dtype == self.dtype)

    def __hash__(self):
        return hash((KeyAval, self.shape, self.dtype))

    def str_short(self, short_dtypes=False, mesh_axis_types=False):
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"

    __repr__ = __str__ = str_short

    # As a part of a hijax value (core/hijax.py): a key array lowers to its key data.
    def lo_ty(self) -> list:
        return [ShapedArray(self.shape + tuple(self.dtype.physical_shape),
                            self.dtype.physical_dtype)]

    def lower_val(self, keys) -> list:
        return [self.dtype.to_physical(keys)]

    def raise_val(self, data):
        return self.dtype.from_physical(data)


class PRNGKeyArray:
    """An array of typed PRNG keys. Its shape excludes the trailing key-data dimensions;
    `jax.random.key_data` gives the uint32 data."""

    __slots__ = ("_impl", "_base")

    def __init__(self, impl: PRNGImpl, base):
        self._impl = impl
        self._base = base

    @property
    def shape(self):
        # the data's own shape: it may be a ShapeDtypeStruct (eval_shape's output)
        return tuple(self._base.shape[:-len(self._impl.key_shape)])

    @property
    def aval(self):
        return KeyAval(self.shape, self.dtype)

    dtype = property(lambda self: KeyTy(self._impl))
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: math.prod(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)

    def _wrap(self, base):
        return PRNGKeyArray(self._impl, base)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return self._wrap(self._base[(*index, *(slice(None),) * len(self._impl.key_shape))])

    @property
    def at(self):
        """Indexed reads and updates (keys.at[idx].get(), .set(other_keys)), carried out
        on the key data."""
        return _KeyIndexer(self)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
            else shape
        shape = _resolve_shape(tuple(shape), self.size)
        return self._wrap(structural.reshape(self._base, (*shape, *self._impl.key_shape)))

    def ravel(self):
        return self.reshape(-1)

    flatten = ravel

    # jnp's structural functions, which work on key arrays through their data
    def squeeze(self, axis=None):
        return lnp.squeeze(self, axis)

    def swapaxes(self, axis1, axis2):
        return lnp.swapaxes(self, axis1, axis2)

    def transpose(self, *axes):
        return lnp.transpose(self, axes[0] if len(axes) == 1 and not isinstance(
            axes[0], int) else (axes or None))

    def take(self, indices, axis=None, out=None, mode=None, unique_indices=False,
             indices_are_sorted=False, fill_value=None):
        return jnp_indexing.take(self, indices, axis, out, mode, unique_indices,
                                 indices_are_sorted, fill_value)

    @property
    def T(self):
        key_dims = tuple(range(self.ndim, self.ndim + len(self._impl.key_shape)))
        perm = tuple(reversed(range(self.ndim))) + key_dims
        return self._wrap(structural.transpose(self._base, perm))

    def _key_axes(self):
        return tuple(range(-len(self._impl.key_shape), 0))

    # A key compared with a number or a non-key array raises jnp's TypeError, as on JAX
    # ("equal does not accept dtypes key<fry>, int32"), rather than Python's False.
    def __eq__(self, other):
        if isinstance(other, PRNGKeyArray):
            return (self._base == other._base).all(axis=self._key_axes())
        return uf.equal(self, other) if is_arraylike(other) else NotImplemented

    def __ne__(self, other):
        if isinstance(other, PRNGKeyArray):
            return (self._base != other._base).any(axis=self._key_axes())
        return uf.not_equal(self, other) if is_arraylike(other) else NotImplemented

    __hash__ = None

    # Arithmetic raises jnp's TypeError for keys ("add does not accept dtype key<fry>").
    __add__ = lambda self, other: uf.add(self, other)
    __radd__ = lambda self, other: uf.add(other, self)
    __sub__ = lambda self, other: uf.subtract(self, other)
    __rsub__ = lambda self, other: uf.subtract(other, self)
    __mul__ = lambda self, other: uf.multiply(self, other)
    __rmul__ = lambda self, other: uf.multiply(other, self)
    __neg__ = lambda self: uf.negative(self)

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    # -- what a key array shares with its uint32 data (placement, buffers, lifetime) --
    _base_array = property(lambda self: self._base)
    device = property(lambda self: self._base.device)
    @property
    def sharding(self):
        """The data's sharding, its spec over the key array's own dimensions (the key
        data's trailing dimension is never split), as JAX reports a key's sharding."""
        s = self._base.sharding
        if isinstance(s, sharding_mod.NamedSharding) and len(s.spec) > self.ndim:
            return sharding_mod.NamedSharding(
                s.mesh, s.spec.update(partitions=s.spec.partitions[:self.ndim]))
        return s

    _committed = property(lambda self: getattr(self._base, "_committed", False))
    is_fully_addressable = property(lambda self: self._base.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._base.is_fully_replicated)

    def devices(self):
        return self._base.devices()

    def is_deleted(self):
        return self._base.is_deleted()

    def delete(self):
        self._base.delete()

    def copy_to_host_async(self):
        self._base.copy_to_host_async()

    def on_device_size_in_bytes(self):
        return self._base.on_device_size_in_bytes()

    def unsafe_buffer_pointer(self):
        return self._base.unsafe_buffer_pointer()

    def addressable_data(self, index):
        return self._wrap(self._base.addressable_data(index))

    @property
    def addressable_shards(self):
        return self._base.addressable_shards

    @property
    def global_shards(self):
        return self._base.global_shards

    def copy(self):
        return self._wrap(self._base.copy() if hasattr(self._base, "copy") else self._base)

    __copy__ = copy

    def __deepcopy__(self, memo):
        return self.copy()

    def __array__(self, dtype=None, copy=None):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                        "Use jax.random.key_data(keys) if you wish to extract the "
                        "underlying integer array.")

    def __repr__(self):
        name = self.dtype.name
        if isinstance(self._base, Tracer):
            return f"Traced<{name}{list(self.shape)}>with<{self._base._trace!r}>"
        return f"Array({self.shape}, dtype={name}) overlaying:\n{np.asarray(self._base)}"

    __str__ = __repr__


class _KeyIndexer:
    __slots__ = ("_keys",)

    def __init__(self, keys):
        self._keys = keys

    def __getitem__(self, index):
        return _KeyIndexed(self._keys, index)


class _KeyIndexed:
    __slots__ = ("_keys", "_index")

    def __init__(self, keys, index):
        self._keys = keys
        index = index if isinstance(index, tuple) else (index,)
        self._index = (*index, *(slice(None),) * len(keys._impl.key_shape))

    def get(self, **kwargs):
        """The indexed keys; out-of-bounds indices follow `mode` as for arrays (with
        mode='fill' a key of all-ones data)."""
        return self._keys._wrap(self._keys._base.at[self._index].get(**kwargs))

    def set(self, values, **kwargs):
        """The keys with the indexed ones replaced by `values` (keys of the same kind)."""
        if not isinstance(values, PRNGKeyArray) or values.dtype != self._keys.dtype:
            raise TypeError(f"key array .at[].set() takes keys of dtype "
                            f"{self._keys.dtype}, got {getattr(values, 'dtype', values)}.")
        return self._keys._wrap(self._keys._base.at[self._index].set(values._base, **kwargs))


basearray.Array.register(PRNGKeyArray)
def _key_array_of(impl, children):
    """A key array around its data. Transformations hand tangents and cotangents back
    through the same tree: for keys those come as float0 data, and are float0 of the
    keys' own shape (a SymbolicZero stays one), as in JAX, never a key array."""
    (base,) = children
    if getattr(base, "dtype", None) != dtypes.float0:
        return PRNGKeyArray(impl, base)
    shape = tuple(base.shape[:len(base.shape) - len(impl.key_shape)])
    if isinstance(base, SymbolicZero):
        return SymbolicZero(base.aval.update(shape=shape))
    return np.zeros(shape, dtypes.float0)   # float0 values hold no data


tree_util.register_array_node(PRNGKeyArray, lambda k: ((k._base,), k._impl),
                             _key_array_of)


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


def check_key_data(impl, data, where="key"):
    """Validates raw key data of `impl`: uint32 with trailing dimensions impl.key_shape."""
    aval = get_aval(data)
    n = len(impl.key_shape)
    if aval.shape[-n:] != impl.key_shape or aval.ndim < n:
        raise TypeError(
            f"JAX encountered invalid PRNG key data: expected key_data.shape to end with "
            f"{impl.key_shape}; got shape={aval.shape} for impl={impl.name} (in {where}). "
            "Create keys with jax.random.key(seed) or jax.random.PRNGKey(seed).")
    if aval.dtype != np.uint32:
        raise TypeError(f"JAX encountered invalid PRNG key data: expected key_data.dtype "
                        f"= uint32; got dtype={aval.dtype} (in {where}).")
    return data


def unwrap(key, name, allow_batched=False):
    """(typed key, was_raw) for a typed or raw key passed to jax.random.`name`; a raw key
    becomes a typed key of the default implementation."""
    if isinstance(key, PRNGKeyArray):
        typed, raw = key, False
    elif isinstance(key, (Array, Tracer, np.ndarray, list, tuple)):
        impl = default_impl()
        typed = PRNGKeyArray(impl, check_key_data(impl, _as_value(key), name))
        raw = True
        _legacy_key_policy(name)
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)} passed to "
                        f"jax.random.{name}; create keys with jax.random.key(seed).")
    if typed.shape and not allow_batched:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{typed.shape} != (). Use jax.vmap for batching.")
    return typed, raw


def _legacy_key_policy(name):
    """Applies jax_legacy_prng_key to a raw key passed to jax.random.`name`."""
    policy = config.legacy_prng_key.value
    if policy in ("error", "warn"):
        message = (f"Legacy uint32 key array passed as key to jax.random function (here "
                   f"jax.random.{name}). Please create keys using jax.random.key(). If use "
                   "of a raw key array was intended, set jax_legacy_prng_key='allow'.")
        if policy == "error":
            raise ValueError(message)
        warnings.warn(message, UserWarning, stacklevel=4)
    elif config.enable_custom_prng.value:
        warnings.warn("Raw arrays as random keys to jax.random functions are deprecated. "
                      f"Assuming valid {default_impl().name} key for now.",
                      FutureWarning, stacklevel=4)


def rewrap(key, raw):
    """A result key in the form the caller passed: raw key data or a typed key (always
    typed under jax_enable_custom_prng)."""
    return key._base if raw and not config.enable_custom_prng.value else key


def default_impl() -> PRNGImpl:
    return PRNGS[config.default_prng_impl.value]


def resolve_impl(impl, dtype, where) -> PRNGImpl:
    """The PRNG implementation an `impl=` or `dtype=` argument names (None: the default)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to "
                             f"jax.random.{where}")
        impl = dtype
    if impl is None:
        return default_impl()
    if isinstance(impl, PRNGImpl):
        return impl
    if isinstance(impl, (PRNGSpec, KeyTy)):
        return impl._impl
    if isinstance(impl, str):
        if impl in PRNGS:
            return PRNGS[impl]
        names = ", ".join(f'"{n}"' for n in PRNGS)
        raise ValueError(f'unrecognized PRNG implementation "{impl}". Did you mean one of: '
                         f'{names}?')
    raise TypeError(f"unrecognized type {type(impl)} for specifying PRNG implementation.")


def _seed(seed, ctor, impl):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor} accepts a scalar seed, but was given a PRNG key.")
    if np.ndim(seed) if not hasattr(seed, "aval") else seed.aval.ndim:
        raise TypeError(f"{ctor} accepts a scalar seed, but was given an array of shape "
                        f"{np.shape(seed)} != (). Use jax.vmap for batching")
    offset = config.random_seed_offset.value
    if offset:
        seed = seed + offset
    data = impl.seed(seed)
    return Array(data) if isinstance(data, np.ndarray) else data


def key(seed, *, impl=None, dtype=None):
    """A typed PRNG key (dtype key<fry> for the default threefry2x32) from an integer
    seed."""
    impl = resolve_impl(impl, dtype, "key")
    return PRNGKeyArray(impl, _seed(seed, "key", impl))


def random_seed(seeds, impl: PRNGImpl):
    """Typed keys of `impl`, one per element of the integer array `seeds` (an int seeds
    as int64, so that large Python hashes seed without overflow, as in JAX)."""
    if isinstance(seeds, PRNGKeyArray):
        raise TypeError("random_seed accepts integer seeds, but was given a PRNG key.")
    seeds = lnp.asarray(np.int64(seeds) if isinstance(seeds, int) else seeds)
    if not dtypes.issubdtype(seeds.dtype, np.integer):
        raise TypeError(f"random_seed accepts integer seeds, got dtype {seeds.dtype}")
    offset = config.random_seed_offset.value
    if offset:
        seeds = seeds + offset
    seed = impl.seed
    for _ in range(seeds.ndim):
        seed = vmap(seed)
    return PRNGKeyArray(impl, seed(seeds))


def seed_with_impl(impl: PRNGImpl, seed):
    """Typed keys of `impl` seeded by `seed` (an integer or an integer array)."""
    return random_seed(seed, impl=impl)


def PRNGKey(seed, *, impl=None):
    """A raw PRNG key (uint32 key data, e.g. uint32[2]) made from an integer seed (the
    legacy form)."""
    impl = resolve_impl(impl, None, "PRNGKey")
    return rewrap(PRNGKeyArray(impl, _seed(seed, "PRNGKey", impl)), True)


def split_keys(key: PRNGKeyArray, shape) -> PRNGKeyArray:
    """Typed keys of `shape` derived from one typed key."""
    return key._wrap(key._impl.split(key._base, tuple(shape)))


def random_bits(key: PRNGKeyArray, bit_width, shape):
    """Uniform random bits of `shape` (unsigned, `bit_width` bits) from one typed key."""
    return key._impl.random_bits(key._base, bit_width, tuple(shape))


def split(key, num=2):
    """Splits one key into `num` new keys (an int or a shape), as the same kind of key."""
    typed, raw = unwrap(key, "split")
    return rewrap(split_keys(typed, canonical_shape(num, "split")), raw)


def fold_in(key, data):
    """A new key made from `key` and an integer (e.g. a step number)."""
    typed, raw = unwrap(key, "fold_in")
    if np.ndim(data) if not hasattr(data, "aval") else data.aval.ndim:
        raise TypeError(f"fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data)} != (). Use jax.vmap for batching.")
    if isinstance(data, int) and not 0 <= data < 2 ** 32:
        raise OverflowError(f"Python integer {data} out of bounds for uint32")
    if isinstance(data, (int, np.integer)):   # NumPy integers wrap, as in a cast
        data = np.uint32(int(data) % 2 ** 32)
    return rewrap(typed._wrap(typed._impl.fold_in(typed._base, data)), raw)


def clone(key):
    """A copy of `key` (keys are immutable values; kept for API compatibility)."""
    return key


def key_data(keys):
    """The uint32 data of typed keys (raw keys are returned unchanged)."""
    typed, _ = unwrap(keys, "key_data", allow_batched=True)
    return typed._base


def wrap_key_data(key_bits_array, *, impl=None, dtype=None):
    """Typed keys over uint32 key data of shape (..., *key_shape)."""
    impl = resolve_impl(impl, dtype, "wrap_key_data")
    data = check_key_data(impl, _as_value(key_bits_array), "wrap_key_data")
    return PRNGKeyArray(impl, Array(data) if isinstance(data, np.ndarray) else data)


def key_impl(keys):
    """The PRNG implementation of `keys`: its name when one is registered under that name
    (the built-in ones), else a PRNGSpec of it (one made by jax.extend.random)."""
    typed, _ = unwrap(keys, "key_impl", allow_batched=True)
    impl = typed._impl
    return impl.name if impl.name in PRNGS else PRNGSpec(impl)


def key_dtype(impl=None):
    return KeyTy(resolve_impl(impl, None, "key_dtype"))


def default_prng_impl():
    return PRNGSpec(default_impl())


@takes_out_sharding
def bits(key, shape=(), dtype=None):
    """Uniform random bits as unsigned integers (uint32 by default)."""
    typed, _ = unwrap(key, "bits")
    dtype = dtypes.default_uint_dtype() if dtype is None else dtypes.check_user_dtype(
        dtype, "bits")
    if np.dtype(dtype).kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, "
                         f"got {np.dtype(dtype)}")
    return random_bits(typed, np.dtype(dtype).itemsize * 8, canonical_shape(shape, "bits"))


def canonical_shape(shape, where):
    """A shape argument as a tuple of Python ints, with a clear error otherwise."""
    return canonicalize_shape(shape, f"jax.random.{where}")
