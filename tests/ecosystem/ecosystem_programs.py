"""Small real programs written for JAX with libraries of its ecosystem. Each returns a few
numbers; test_ecosystem.py (beside it) runs them on pyjax (through pyjax.alias_jax) and compares
with the values the same programs gave on JAX 0.10.2 with the same library versions.
Importing this module imports nothing; each program imports `jax` and its library."""


def _regression_data():
    import jax.numpy as jnp
    x = jnp.linspace(-1, 1, 32 * 4).reshape(32, 4)
    return x, jnp.sin(x.sum(1, keepdims=True))


def optax_mlp_step(layers=8):
    """One jitted step of Adam with gradient clipping on an MLP (2 leaves a layer: 25
    layers are 50 leaves), as a callable that carries the parameters and optimizer state
    from call to call and returns the loss; `.leaves` counts the parameters."""
    import jax
    import jax.numpy as jnp
    import optax

    def init(key, sizes):
        params = []
        for m, n in zip(sizes[:-1], sizes[1:]):
            key, k1 = jax.random.split(key)
            params.append({"w": jax.random.normal(k1, (m, n)) * 0.3, "b": jnp.zeros(n)})
        return params

    def loss(params, x, y):
        h = x
        for p in params[:-1]:
            h = jnp.tanh(h @ p["w"] + p["b"])
        return jnp.mean((h @ params[-1]["w"] + params[-1]["b"] - y) ** 2)

    x, y = _regression_data()
    params = init(jax.random.PRNGKey(0), [4] + [8] * (layers - 1) + [1])
    opt = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(1e-2))
    carry = [params, opt.init(params)]

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(loss)(params, x, y)
        updates, state = opt.update(grads, state, params)
        return optax.apply_updates(params, updates), state, value

    return _params_and_state_stepper(step, carry)


def _params_and_state_stepper(step, carry):
    """A step factory's result for `step(params, state) -> (params, state, loss)`: each
    call runs one step on `carry` ([params, state], updated in place) and returns the
    loss; `.leaves` counts the parameter leaves."""
    import jax

    def one_step():
        carry[0], carry[1], value = step(*carry)
        return value
    one_step.leaves = len(jax.tree_util.tree_leaves(carry[0]))
    return one_step


def optax_mlp_training(steps=10, layers=8):
    """optax_mlp_step's losses over a few steps."""
    step = optax_mlp_step(layers)
    losses = [float(step()) for _ in range(steps)]
    return {"first_loss": losses[0], "last_loss": losses[-1], "leaves": step.leaves}


def equinox_mlp_step():
    """One step of an eqx.nn.MLP trained with filter_jit / filter_value_and_grad (the
    model carried from call to call), returning the loss; error_if runs equinox's own
    primitives."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    carry = [eqx.nn.MLP(4, 1, 16, 2, key=jax.random.PRNGKey(0))]
    x, y = _regression_data()

    def loss(m, x, y):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    @eqx.filter_jit
    def step(m):
        value, grads = eqx.filter_value_and_grad(loss)(m, x, y)
        m = eqx.apply_updates(m, jax.tree_util.tree_map(lambda g: -0.1 * g, grads))
        return eqx.error_if(m, ~jnp.isfinite(value), "non-finite loss"), value

    def one_step():
        carry[0], value = step(carry[0])
        return value
    return one_step


def equinox_mlp_training(steps=10):
    """equinox_mlp_step over a few steps; error_if and unvmap_any run equinox's own
    primitives (jvp, batching and lowering rules)."""
    import equinox as eqx
    import jax
    import jax.numpy as jnp

    step = equinox_mlp_step()
    for _ in range(steps):
        value = step()
    checked = eqx.filter_jit(lambda a: eqx.error_if(a, a < 0, "negative"))
    try:
        checked(jnp.array(-1.0))
        raised = False
    except Exception as e:   # EquinoxRuntimeError
        raised = type(e).__name__
    batched_any = jax.vmap(lambda b: eqx.internal.unvmap_any(b))(jnp.array([False, True]))
    return {"last_loss": float(value), "error_if_raised": raised,
            "unvmap_any": [bool(b) for b in batched_any]}


def _numpyro_regression_model():
    """(model, x, y): a small Bayesian linear regression."""
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    x = jnp.linspace(-1, 1, 50)
    y = 0.5 + 2.0 * x + 0.3 * jnp.sin(7 * x)

    def model(x, y=None):
        a = numpyro.sample("a", dist.Normal(0, 5))
        b = numpyro.sample("b", dist.Normal(0, 5))
        s = numpyro.sample("s", dist.HalfNormal(1.0))
        numpyro.sample("obs", dist.Normal(a + b * x, s), obs=y)
    return model, x, y


def numpyro_svi_step():
    """One jitted SVI update (AutoNormal guide, Adam) of the regression, its state
    carried from call to call, returning the loss."""
    import jax
    import numpyro.optim
    from numpyro.infer import SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    model, x, y = _numpyro_regression_model()
    svi = SVI(model, AutoNormal(model), numpyro.optim.Adam(0.05), Trace_ELBO())
    update = jax.jit(svi.update)
    carry = [svi.init(jax.random.PRNGKey(1), x, y)]

    def one_step():
        carry[0], loss = update(carry[0], x, y)
        return loss
    return one_step


def numpyro_regression(num_warmup=50, num_samples=50, svi_steps=100):
    """NUTS and SVI (AutoNormal, Adam) on a small Bayesian linear regression."""
    import jax
    from numpyro.infer import MCMC, NUTS

    model, x, y = _numpyro_regression_model()
    mcmc = MCMC(NUTS(model), num_warmup=num_warmup, num_samples=num_samples,
                progress_bar=False)
    mcmc.run(jax.random.PRNGKey(0), x, y)
    samples = mcmc.get_samples()
    svi_step = numpyro_svi_step()
    for _ in range(svi_steps):
        loss = svi_step()
    return {"nuts_mean_a": float(samples["a"].mean()), "nuts_mean_b": float(samples["b"].mean()),
            "svi_last_loss": float(loss)}


def chex_jitted_call():
    """A callable calling a jitted function that makes chex's static assertions while
    tracing, on a (3, 4) array."""
    import chex
    import jax
    import jax.numpy as jnp

    @jax.jit
    def double(a):
        chex.assert_shape(a, (3, 4))
        chex.assert_rank(a, 2)
        return a * 2

    x = jnp.ones((3, 4))
    return lambda: double(x)


def chex_assertions():
    """Static assertions eagerly and under jit, a chex dataclass pytree, and chexify's
    value assertions compiled into a jitted function."""
    import chex
    import jax
    import jax.numpy as jnp

    x = jnp.ones((3, 4))
    chex.assert_shape(x, (3, 4))
    chex.assert_type(x, jnp.float32)
    chex.assert_trees_all_close({"a": x}, {"a": x + 1e-7})
    double = chex_jitted_call()

    try:
        chex.assert_shape(x, (4, 3))
        shape_error = False
    except AssertionError:
        shape_error = True

    @chex.dataclass
    class Params:
        w: chex.Array
        b: chex.Array

    shapes = jax.tree_util.tree_map(lambda z: z.shape, Params(w=x, b=jnp.zeros(4)))
    checked = chex.chexify(jax.jit(lambda a: (chex.assert_tree_all_finite(a), a)[1]))
    total = float(checked(x).sum())
    try:
        checked(x / 0.0)
        chex.block_until_chexify_assertions_complete()
        finite_error = False
    except AssertionError:
        finite_error = True
    return {"jit_sum": float(double().sum()), "shape_error": shape_error,
            "dataclass_shapes": [list(shapes.w), list(shapes.b)], "chexify_sum": total,
            "finite_error": finite_error}


def einops_jitted_call():
    """A callable calling a jitted einops.reduce on a (2, 3, 4) array."""
    import einops
    import jax
    import jax.numpy as jnp

    x = jnp.arange(24.0).reshape(2, 3, 4)
    reduce = jax.jit(lambda z: einops.reduce(z, "b c d -> c", "sum"))
    return lambda: reduce(x)


def einops_and_jaxtyping():
    """einops rearrange/reduce on arrays and on jit tracers; jaxtyping's array types
    checked with isinstance on arrays and on tracers."""
    import einops
    import jax
    import jax.numpy as jnp
    from jaxtyping import Array, Float, Int

    x = jnp.arange(24.0).reshape(2, 3, 4)
    eager = einops.rearrange(x, "b c (h w) -> (b h) c w", h=2)
    traced = einops_jitted_call()()
    checks = [isinstance(x, Float[Array, "2 3 4"]), isinstance(x, Int[Array, "..."]),
              isinstance(x, Float[Array, "2 3"])]
    traced_check = []
    jax.jit(lambda z: traced_check.append(isinstance(z, Float[Array, "b c d"])) or z)(x)
    return {"rearranged_shape": list(eager.shape), "rearranged_sum": float(eager[1].sum()),
            "reduced": [float(v) for v in traced], "jaxtyping": checks + traced_check}


def flax_linen_step():
    """One jitted step of a flax.linen MLP trained with optax's SGD with momentum (the
    parameters and optimizer state carried from call to call), returning the loss;
    `.leaves` counts the parameters."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import optax

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.tanh(nn.Dense(16)(x))
            x = nn.LayerNorm()(x)
            return nn.Dense(1)(x)

    x, y = _regression_data()
    model = MLP()
    params = model.init(jax.random.PRNGKey(0), x)
    opt = optax.sgd(0.1, momentum=0.9)
    carry = [params, opt.init(params)]

    @jax.jit
    def step(params, state):
        value, grads = jax.value_and_grad(
            lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, value

    return _params_and_state_stepper(step, carry)


def flax_linen_training(steps=10):
    """flax_linen_step over a few steps."""
    step = flax_linen_step()
    for _ in range(steps):
        value = step()
    return {"last_loss": float(value), "leaves": step.leaves}


def flax_nnx_step():
    """One step of a flax.nnx MLP trained with nnx.Optimizer under nnx.jit (the model and
    optimizer updated in place), returning the loss."""
    import jax.numpy as jnp
    import optax
    from flax import nnx

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(4, 16, rngs=rngs)
            self.out = nnx.Linear(16, 1, rngs=rngs)

        def __call__(self, x):
            return self.out(jnp.tanh(self.hidden(x)))

    x, y = _regression_data()
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)

    @nnx.jit
    def step(model, optimizer):
        value, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, grads)
        return value

    return lambda: step(model, optimizer)


def flax_nnx_training(steps=10):
    """flax_nnx_step over a few steps."""
    step = flax_nnx_step()
    for _ in range(steps):
        value = step()
    return {"last_loss": float(value)}


def blackjax_nuts_run(num_steps=100):
    """A callable running blackjax's NUTS kernel on a 2-D Gaussian for num_steps steps
    in a lax.scan under jit, from the same state and key each call; it returns the
    positions."""
    import blackjax
    import jax
    import jax.numpy as jnp

    def logdensity(x):
        return -0.5 * jnp.sum((x - jnp.array([1.0, -2.0])) ** 2 / jnp.array([1.0, 0.25]))

    nuts = blackjax.nuts(logdensity, step_size=0.3, inverse_mass_matrix=jnp.ones(2))
    state = nuts.init(jnp.zeros(2))

    @jax.jit
    def run(state, key):
        def one(state, key):
            state, info = nuts.step(key, state)
            return state, state.position
        return jax.lax.scan(one, state, jax.random.split(key, num_steps))

    key = jax.random.PRNGKey(0)
    return lambda: run(state, key)[1]


def blackjax_nuts(num_steps=100):
    """blackjax_nuts_run's positions, averaged."""
    positions = blackjax_nuts_run(num_steps)()
    return {"mean": [float(v) for v in positions.mean(0)]}
