"""device_put_p: the primitive jax.device_put records in traced programs (one operand per
array, with its target device or sharding, source and copy semantics), with all its
rules. jax.device_put itself (pyjax._src.api.devices) places concrete arrays directly.
Imports core, interpreters, backends and the lax families."""
from __future__ import annotations

import enum

import numpy as np

from pyjax._src import sharding as sharding_mod
from pyjax._src.array import Array, as_array, sharded_array
from pyjax._src.backends import devices as devices_mod
from pyjax._src.core.avals import get_aval
from pyjax._src.core.trace import define_primitive
from pyjax._src.interpreters import ad, jet
from pyjax._src.interpreters.ad import Zero
from pyjax._src.lax import builders as b


class ArrayCopySemantics(enum.Enum):
    """What device_put may do with its input's buffer (jaxlib's enum of that name)."""
    ALWAYS_COPY = 0
    REUSE_INPUT = 1
    DONATE_INPUT = 2

    def __repr__(self):
        return f"{type(self).__name__}.{self.name}"


def copy_semantics(donate, may_alias):
    """JAX's choice from device_put's donate= and may_alias= arguments."""
    if donate:
        return ArrayCopySemantics.DONATE_INPUT
    return ArrayCopySemantics.ALWAYS_COPY if may_alias is False \
        else ArrayCopySemantics.REUSE_INPUT


def _place(x, device):
    """x (an Array or a host value) committed to `device`; unchanged for None."""
    x = as_array(x)
    if device is None or not hasattr(device, "platform"):
        return x
    value = np.asarray(x)
    xla = devices_mod.xla_runtime()
    # a buffer of the new array's own, which donating it can reuse (see Array.buffer_on)
    buffer = None if xla is None else xla.put(value, x.aval, device, copy=True)
    return Array(None if buffer is not None else value, aval=x.aval, device=device,
                 committed=True, buffer=buffer)


def place(x, sharding):
    """x (a concrete value) committed where `sharding` says: on its one device, or laid
    out over the devices of a NamedSharding's mesh."""
    if isinstance(sharding, sharding_mod.SingleDeviceSharding):
        return _place(x, sharding.device)
    x = as_array(x)
    return sharded_array(np.asarray(x), x.aval, sharding)


def _device_put_jvp(primals, tangents, *, devices, srcs, copy_semantics):
    outs = device_put_p.bind(*primals, devices=devices, srcs=srcs,
                             copy_semantics=copy_semantics)
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    moved = iter(device_put_p.bind(
        *[tangents[i] for i in live], devices=tuple(devices[i] for i in live),
        srcs=tuple(srcs[i] for i in live),
        copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(live)) if live else ())
    return outs, [next(moved) if type(t) is not Zero else Zero(ad.tangent_aval(get_aval(o)))
                  for t, o in zip(tangents, outs)]


def _device_put_transpose(cts, *xs, devices, srcs, copy_semantics):
    """Cotangents go back where the inputs came from."""
    live = [i for i, x in enumerate(xs) if ad.is_undefined_primal(x)]
    moved = iter(device_put_p.bind(
        *[ad.instantiate_zeros(cts[i]) for i in live], devices=tuple(srcs[i] for i in live),
        srcs=tuple(devices[i] for i in live),
        copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,) * len(live)) if live else ())
    return [next(moved) if i in live else None for i in range(len(xs))]


device_put_p = define_primitive(
    "device_put", multiple_results=True,
    impl=lambda *xs, devices, srcs, copy_semantics: list(xs),
    eager=lambda *xs, devices, srcs, copy_semantics: [
        _place(x, d) for x, d in zip(xs, devices)],
    abstract_eval=lambda *avals, devices, srcs, copy_semantics: list(avals),
    jvp=_device_put_jvp, jet=jet.linear_rule, transpose=_device_put_transpose, is_linear=True,
    batch=lambda args, dims, **params: (device_put_p.bind(*args, **params), list(dims)),
    lower=lambda ctx, *xs, devices, srcs, copy_semantics: list(xs),
    samples=lambda: [b.Sample(
        [b.random_values((2, 3), np.float32), np.arange(3, dtype=np.int32)],
        {"devices": (None, None), "srcs": (None, None),
         "copy_semantics": (ArrayCopySemantics.REUSE_INPUT,) * 2})])


__all__ = ["device_put_p", "ArrayCopySemantics", "copy_semantics"]
