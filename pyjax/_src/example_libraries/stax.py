"""jax.example_libraries.stax: neural-network layers as (init_fun, apply_fun) pairs.

init_fun(rng, input_shape) -> (output_shape, params); apply_fun(params, inputs, **kwargs)
-> outputs. Combinators (serial, parallel, ...) build a layer out of layers."""
from __future__ import annotations

import functools
import operator

import numpy as np

from pyjax._src.lax import conv_helpers
from pyjax._src.lax import convolution as lax_conv
from pyjax._src.lax import elementwise as lax_ew
from pyjax._src.lax.windowed_reductions import reduce_window
from pyjax._src.nn.functions import gelu, log_softmax, relu, sigmoid, softmax, softplus
from pyjax._src.nn.initializers import glorot_normal, normal, ones, zeros
from pyjax._src.nn.activations import elu, leaky_relu, selu, standardize
from pyjax._src.numpy import lax_numpy as lnp
from pyjax._src.numpy import ufuncs as uf
from pyjax._src.random import distributions
from pyjax._src.random.keys import split

logsoftmax = log_softmax   # the name older stax code uses


glorot = glorot_normal   # the initializer names stax code uses
randn = normal


def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """Fully connected layer: inputs @ W + b."""
    def init_fun(rng, input_shape):
        output_shape = input_shape[:-1] + (out_dim,)
        k1, k2 = split(rng)
        return output_shape, (W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,)))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return lnp.dot(inputs, W) + b

    return init_fun, apply_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """Convolution layer; dimension_numbers = (lhs_spec, rhs_spec, out_spec) strings such as
    ("NHWC", "HWIO", "NHWC") name the axes of inputs, kernel and outputs."""
    one = (1,) * len(filter_shape)
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
        conv_helpers.conv_general_shape_tuple,
        lambda x, W, strides: lax_conv.conv_general_dilated(
            x, W, strides, padding, one, one, dimension_numbers=dimension_numbers))


def _conv_layer(dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
                output_shape_of, convolve):
    """A convolution layer (init_fun, apply_fun) given its output-shape rule and op."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape)
        output_shape = output_shape_of(input_shape, kernel_shape, strides, padding,
                                       dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return convolve(inputs, W, strides) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, input_shape, out_chan, filter_shape):
    """The kernel's shape in rhs_spec order: spatial sizes from filter_shape in turn."""
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else in_chan if c == "I" else next(spatial) for c in rhs_spec]


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """Transposed convolution layer (the gradient of a convolution with respect to its
    input); dimension_numbers as for GeneralConv."""
    return _conv_layer(
        dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init,
        conv_helpers.conv_transpose_shape_tuple,
        lambda x, W, strides: lax_conv.conv_transpose(
            x, W, strides, padding, dimension_numbers=dimension_numbers))


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros,
              gamma_init=ones):
    """Normalizes over `axis` with the statistics of the batch itself (no running
    averages), then scales by gamma and shifts by beta (one per remaining position)."""
    axis = (axis,) if np.isscalar(axis) else axis

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # index that broadcasts the per-position parameters back over the normalized axes
        expand = tuple(None if i in axis else slice(None) for i in range(lnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """Layer without parameters that applies fun(inputs, **fun_kwargs)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(uf.tanh)
Relu = elementwise(relu)
Exp = elementwise(uf.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)
Identity = elementwise(lambda x: x)


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """Pooling over windows of the spatial axes; spec (e.g. "NHWC", the default layout)
        names the batch (N) and channel (C) axes, which are not pooled."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        non_spatial_axes = (0, len(window_shape) + 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        for i in sorted(non_spatial_axes):
            window_shape = window_shape[:i] + (1,) + window_shape[i:]
            strides = strides[:i] + (1,) + strides[i:]

        def init_fun(rng, input_shape):
            pads = lax_conv.padtype_to_pads(input_shape, window_shape, strides, padding)
            ones_ = (1,) * len(window_shape)
            out_shape = conv_helpers.reduce_window_shape_tuple(input_shape, window_shape,
                                                               strides, pads, ones_, ones_)
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = reduce_window(inputs, init_val, reducer, window_shape, strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun
    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    """Rescaler for AvgPool: divide each window sum by the number of non-padding inputs in
    that window."""
    def rescale(outputs, inputs, spec):
        non_spatial_axes = (0, inputs.ndim - 1) if spec is None else \
            (spec.index("N"), spec.index("C"))
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial_axes)
        one = lnp.ones(spatial_shape, dtype=inputs.dtype)
        window_sizes = reduce_window(one, 0., lax_ew.add, dims, strides, padding)
        for i in sorted(non_spatial_axes):
            window_sizes = lnp.expand_dims(window_sizes, i)
        return outputs / window_sizes
    return rescale


MaxPool = _pooling_layer(lax_ew.max, -np.inf)
SumPool = _pooling_layer(lax_ew.add, 0.)
AvgPool = _pooling_layer(lax_ew.add, 0., _normalize_by_window_size)


def _flatten_init(rng, input_shape):
    return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()


def _flatten_apply(params, inputs, **kwargs):
    return lnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)   # keeps the batch axis, flattens the rest


def Dropout(rate, mode="train"):
    """In "train" mode keeps each input with probability `rate` (stax's convention: rate is
    the keep probability) and scales kept ones by 1 / rate; needs apply_fun(..., rng=key)."""
    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError("Dropout layer requires apply_fun to be called with a PRNG key "
                             "argument. That is, instead of `apply_fun(params, inputs)`, call "
                             "it like `apply_fun(params, inputs, rng)` where `rng` is a PRNG "
                             "key (e.g. from `jax.random.key`).")
        if mode != "train":
            return inputs
        keep = distributions.bernoulli(rng, rate, inputs.shape)
        return lnp.where(keep, inputs / rate, 0)

    return init_fun, apply_fun


def FanOut(num):
    """Layer that passes its input to `num` outputs (a list)."""
    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_init(rng, input_shape):
    return input_shape[0], ()


def _fan_in_sum_apply(params, inputs, **kwargs):
    return sum(inputs)


FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)   # adds up a list of inputs


def FanInConcat(axis=-1):
    """Layer that concatenates a list of inputs along `axis`."""
    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        concat_size = sum(shape[ax] for shape in input_shape)
        first = input_shape[0]
        return first[:ax] + (concat_size,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return lnp.concatenate(inputs, axis)

    return init_fun, apply_fun


def serial(*layers):
    """Layer that applies `layers` one after the other; its params are a list with one
    entry per layer. An rng passed to apply_fun is split into one key per layer."""
    num_layers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for layer_init in init_funs:
            rng, layer_rng = split(rng)
            input_shape, param = layer_init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = split(rng, num_layers) if rng is not None else (None,) * num_layers
        for layer_apply, param, layer_rng in zip(apply_funs, params, rngs):
            inputs = layer_apply(param, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Layer that applies layers[i] to inputs[i] (inputs and outputs are sequences, as
    FanOut and FanInSum/FanInConcat make and take)."""
    num_layers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = split(rng, num_layers)
        results = [layer_init(layer_rng, shape)
                   for layer_init, layer_rng, shape in zip(init_funs, rngs, input_shape)]
        return tuple(zip(*results))

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = split(rng, num_layers) if rng is not None else (None,) * num_layers
        return [layer_apply(param, x, rng=layer_rng, **kwargs)
                for layer_apply, param, x, layer_rng in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """Layer built by make_layer(input_shape) once the input shape is known."""
    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun

