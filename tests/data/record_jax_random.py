"""Records jax.random outputs of JAX 0.10.2 (default threefry2x32, partitionable) for
pyjax's tests. Run with real JAX, outside the repo's environment:
python record_jax_random.py -> jax_random_reference.json."""
import json
import pathlib

import numpy as np
import jax
import jax.numpy as jnp
import jax.random as jr

out = {}


def rec(name, value):
    v = np.asarray(value)
    if v.dtype == jnp.bfloat16:
        vals = v.astype(np.float32).tolist()
    elif v.dtype.kind == 'c':
        vals = [[float(z.real), float(z.imag)] for z in v.reshape(-1)]
    else:
        vals = v.reshape(-1).tolist()
    out[name] = {"dtype": str(v.dtype), "shape": list(v.shape), "values": vals}


K = {s: jr.PRNGKey(s) for s in [0, 1, 42, -1, 2**31 - 1, 1701]}
for s, k in K.items():
    rec(f"PRNGKey({s})", k)
k0, k42, k1701 = K[0], K[42], K[1701]
for s in [0, 42]:
    k = K[s]
    rec(f"split({s})", jr.split(k))
    rec(f"split({s},3)", jr.split(k, 3))
    rec(f"split({s},(2,3))", jr.split(k, (2, 3)))
    for d in [0, 7, 2**32 - 1]:
        rec(f"fold_in({s},{d})", jr.fold_in(k, d))
    rec(f"key_data(key({s}))", jr.key_data(jr.key(s)))
    rec(f"split(key({s}),4)", jr.key_data(jr.split(jr.key(s), 4)))
for s in [0, 42]:
    k = K[s]
    for shape in [(), (5,), (2, 3), (7,)]:
        for dt in ['uint32', 'uint8', 'uint16']:
            rec(f"bits({s},{shape},{dt})", jr.bits(k, shape, dt))
        rec(f"uniform({s},{shape})", jr.uniform(k, shape))
        rec(f"normal({s},{shape})", jr.normal(k, shape))
    rec(f"uniform({s},(4,),minmax)", jr.uniform(k, (4,), minval=-2., maxval=5.))
    rec(f"uniform({s},(2,3),arraymin)",
        jr.uniform(k, (2, 3), minval=jnp.array([0., 1., 2.]), maxval=4.))
    rec(f"uniform({s},(6,),float16)", jr.uniform(k, (6,), jnp.float16))
    rec(f"uniform({s},(6,),bfloat16)", jr.uniform(k, (6,), jnp.bfloat16))
    rec(f"normal({s},(4,),complex64)", jr.normal(k, (4,), jnp.complex64))
    rec(f"normal({s},(5,),float16)", jr.normal(k, (5,), jnp.float16))
    rec(f"randint({s},(8,),0,10)", jr.randint(k, (8,), 0, 10))
    rec(f"randint({s},(8,),-5,5)", jr.randint(k, (8,), -5, 5))
    rec(f"randint({s},(6,),0,256,uint8)", jr.randint(k, (6,), 0, 256, jnp.uint8))
    rec(f"randint({s},(6,),-3,100,int8)", jr.randint(k, (6,), -3, 100, jnp.int8))
    rec(f"randint({s},(6,),int32full)", jr.randint(k, (6,), -2**31, 2**31 - 1))
    rec(f"randint({s},(2,3),arraymax)", jr.randint(k, (2, 3), 0, jnp.array([2, 10, 1000])))
    rec(f"randint({s},(4,),5,5)", jr.randint(k, (4,), 5, 5))
    rec(f"bernoulli({s},0.3,(10,))", jr.bernoulli(k, 0.3, (10,)))
    rec(f"bernoulli({s},parray)", jr.bernoulli(k, jnp.array([0.1, 0.5, 0.9])))
    rec(f"bernoulli({s},high)", jr.bernoulli(k, 0.3, (6,), mode='high'))
    logits = jnp.array([0.1, 1.0, -2.0, 0.5, 0.0])
    rec(f"categorical({s},(5,))", jr.categorical(k, logits))
    rec(f"categorical({s},shape(4,))", jr.categorical(k, logits, shape=(4,)))
    logits2 = jnp.arange(12.).reshape(3, 4) / 5
    rec(f"categorical({s},2d)", jr.categorical(k, logits2))
    rec(f"categorical({s},2d,axis0)", jr.categorical(k, logits2, axis=0))
    rec(f"categorical({s},2d,shape)", jr.categorical(k, logits2, shape=(2, 3)))
    rec(f"categorical({s},noreplace)", jr.categorical(k, logits, shape=(3,), replace=False))
    rec(f"truncated_normal({s},-1,2,(6,))", jr.truncated_normal(k, -1., 2., (6,)))
    for name in ['exponential', 'gumbel', 'laplace', 'logistic', 'cauchy', 'rademacher',
                 'maxwell']:
        rec(f"{name}({s},(5,))", getattr(jr, name)(k, (5,)))
    rec(f"gumbel({s},(5,),high)", jr.gumbel(k, (5,), mode='high'))
    rec(f"pareto({s},3.,(5,))", jr.pareto(k, 3., (5,)))
    rec(f"weibull_min({s},2.,1.5,(5,))", jr.weibull_min(k, 2., 1.5, (5,)))
    rec(f"rayleigh({s},2.,(5,))", jr.rayleigh(k, 2., (5,)))
    rec(f"wald({s},1.5,(5,))", jr.wald(k, 1.5, (5,)))
    rec(f"geometric({s},0.3,(6,))", jr.geometric(k, 0.3, (6,)))
    rec(f"triangular({s},0,1,3,(5,))", jr.triangular(k, 0., 1., 3., (5,)))
    rec(f"lognormal({s},0.5,(5,))", jr.lognormal(k, 0.5, (5,)))
    rec(f"double_sided_maxwell({s},1,2,(4,))", jr.double_sided_maxwell(k, 1., 2., (4,)))
    rec(f"permutation({s},10)", jr.permutation(k, 10))
    rec(f"permutation({s},2d,axis1)", jr.permutation(k, jnp.arange(12).reshape(3, 4), axis=1))
    rec(f"permutation({s},2d,independent)",
        jr.permutation(k, jnp.arange(12).reshape(3, 4), axis=1, independent=True))
    rec(f"choice({s},10,(3,))", jr.choice(k, 10, (3,)))
    rec(f"choice({s},10,(4,),noreplace)", jr.choice(k, 10, (4,), replace=False))
    rec(f"choice({s},p)", jr.choice(k, 5, (6,), p=jnp.array([0.1, 0.2, 0.3, 0.2, 0.2])))
    rec(f"choice({s},p,noreplace)",
        jr.choice(k, 5, (3,), replace=False, p=jnp.array([0.1, 0.2, 0.3, 0.2, 0.2])))
    rec(f"choice({s},2d,axis1)", jr.choice(k, jnp.arange(12).reshape(3, 4), (2,), axis=1))
    for a in [0.5, 1.0, 3.5]:
        rec(f"gamma({s},{a},(5,))", jr.gamma(k, a, (5,)))
        rec(f"loggamma({s},{a},(5,))", jr.loggamma(k, a, (5,)))
    rec(f"gamma({s},array)", jr.gamma(k, jnp.array([0.2, 1.0, 5.0, 20.0])))
    rec(f"beta({s},2,3,(5,))", jr.beta(k, 2., 3., (5,)))
    rec(f"dirichlet({s},(2,))", jr.dirichlet(k, jnp.array([1., 2., 3.]), (2,)))
    rec(f"t({s},4.,(5,))", jr.t(k, 4., (5,)))
    rec(f"chisquare({s},3.,(5,))", jr.chisquare(k, 3., (5,)))
    rec(f"f({s},3.,5.,(5,))", jr.f(k, 3., 5., (5,)))
    rec(f"poisson({s},3.,(8,))", jr.poisson(k, 3., (8,)))
    rec(f"poisson({s},25.,(8,))", jr.poisson(k, 25., (8,)))
    rec(f"binomial({s},10,0.3,(6,))", jr.binomial(k, 10., 0.3, (6,)))
    rec(f"binomial({s},100,0.6,(6,))", jr.binomial(k, 100., 0.6, (6,)))
    rec(f"multinomial({s})", jr.multinomial(k, 10., jnp.array([0.2, 0.3, 0.5])))
    cov = jnp.array([[2., 0.5], [0.5, 1.]])
    rec(f"multivariate_normal({s},(3,))",
        jr.multivariate_normal(k, jnp.array([1., -1.]), cov, (3,)))
    rec(f"orthogonal({s},3)", jr.orthogonal(k, 3))
    rec(f"generalized_normal({s},1.5,(5,))", jr.generalized_normal(k, 1.5, (5,)))
    rec(f"ball({s},3,(2,))", jr.ball(k, 3, 2., (2,)))
    # typed keys give the same values as raw keys
    rec(f"uniform(key({s}),(3,))", jr.uniform(jr.key(s), (3,)))
# vmap over keys, jit
keys = jr.split(k1701, 4)
rec("vmap_uniform(split(1701,4))", jax.vmap(lambda k: jr.uniform(k, (2,)))(keys))
rec("jit_normal(1701,(3,))", jax.jit(lambda k: jr.normal(k, (3,)))(k1701))

jax.config.update("jax_enable_x64", True)
out["x64"] = {}
x64 = {}
saved = out
out = x64
k = jr.PRNGKey(0)
rec("PRNGKey(2**40)", jr.PRNGKey(2**40))
rec("PRNGKey(-1)", jr.PRNGKey(-1))
rec("bits(0,(5,),uint64)", jr.bits(k, (5,), 'uint64'))
rec("uniform(0,(5,),float64)", jr.uniform(k, (5,), jnp.float64))
rec("normal(0,(5,),float64)", jr.normal(k, (5,), jnp.float64))
rec("randint(0,(5,),0,1000,int64)", jr.randint(k, (5,), 0, 1000, jnp.int64))
rec("uniform(0,(5,),float32)", jr.uniform(k, (5,), jnp.float32))
saved["x64"] = x64
path = pathlib.Path(__file__).with_name("jax_random_reference.json")
path.write_text(json.dumps(saved, separators=(',', ':')))
print(len(saved), "records")
