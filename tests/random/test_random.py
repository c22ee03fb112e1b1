"""jax.random: the threefry2x32 primitive (known-answer vectors), keys and samplers against
values recorded from JAX 0.10.2 (tests/data/jax_random_reference.json, written by
tests/data/record_jax_random.py), typed and raw keys under jit/vmap/scan, and sample
moments of every distribution."""
import json

import numpy as np
import pytest
import scipy.stats

import pyjax as jax
import pyjax.numpy as jnp
import pyjax.random as jr
from pyjax import lax
from pyjax._src import config
from pyjax._src.lax import elementwise, random_bits
from pyjax._src.lax.random_bits import threefry2x32, threefry2x32_numpy
from pyjax._src.random.keys import PRNGKeyArray
from repo_paths import DATA_DIR

REF = json.loads((DATA_DIR / "jax_random_reference.json").read_text())
SEEDS = (0, 42)


def _values(x):
    v = np.asarray(x)
    if v.dtype.kind == "c":
        return np.stack([v.real, v.imag], -1).reshape(-1, 2).astype(np.float64)
    return v.astype(np.float64).reshape(-1)


def check(name, got, exact, ref=REF):
    rec = ref[name]
    got_arr = np.asarray(got)
    assert list(got_arr.shape) == rec["shape"], (name, got_arr.shape, rec["shape"])
    assert str(got_arr.dtype) == rec["dtype"], (name, got_arr.dtype, rec["dtype"])
    expected = np.asarray(rec["values"], np.float64).reshape(_values(got_arr).shape)
    if exact:
        np.testing.assert_array_equal(_values(got_arr), expected, err_msg=name)
    else:   # NumPy's erfinv/log and XLA's fused multiply-adds differ in the last bits
        np.testing.assert_allclose(_values(got_arr), expected, rtol=3e-6, atol=3e-6,
                                   err_msg=name)


def _cases():
    """(record name, function of a raw key, exact?) for every sampler recorded per seed."""
    logits = np.array([0.1, 1.0, -2.0, 0.5, 0.0], np.float32)
    logits2 = (np.arange(12.0, dtype=np.float32) / 5).reshape(3, 4)
    probs = np.array([0.1, 0.2, 0.3, 0.2, 0.2], np.float32)
    cov = np.array([[2.0, 0.5], [0.5, 1.0]], np.float32)
    cases = []
    for s in SEEDS:
        def add(name, fn, exact=True, s=s):
            cases.append(pytest.param(s, name.format(s=s), fn, exact, id=name.format(s=s)))
        for shape in [(), (5,), (2, 3), (7,)]:
            for dt in ["uint32", "uint8", "uint16"]:
                add(f"bits({{s}},{shape},{dt})", lambda k, sh=shape, d=dt: jr.bits(k, sh, d))
            add(f"uniform({{s}},{shape})", lambda k, sh=shape: jr.uniform(k, sh))
            add(f"normal({{s}},{shape})", lambda k, sh=shape: jr.normal(k, sh), False)
        add("uniform({s},(4,),minmax)", lambda k: jr.uniform(k, (4,), minval=-2., maxval=5.),
            False)
        add("uniform({s},(2,3),arraymin)", lambda k: jr.uniform(
            k, (2, 3), minval=jnp.array([0., 1., 2.]), maxval=4.), False)
        add("uniform({s},(6,),float16)", lambda k: jr.uniform(k, (6,), jnp.float16))
        add("uniform({s},(6,),bfloat16)", lambda k: jr.uniform(k, (6,), jnp.bfloat16))
        add("normal({s},(4,),complex64)", lambda k: jr.normal(k, (4,), jnp.complex64), False)
        add("randint({s},(8,),0,10)", lambda k: jr.randint(k, (8,), 0, 10))
        add("randint({s},(8,),-5,5)", lambda k: jr.randint(k, (8,), -5, 5))
        add("randint({s},(6,),0,256,uint8)", lambda k: jr.randint(k, (6,), 0, 256, jnp.uint8))
        add("randint({s},(6,),-3,100,int8)", lambda k: jr.randint(k, (6,), -3, 100, jnp.int8))
        add("randint({s},(6,),int32full)", lambda k: jr.randint(k, (6,), -2**31, 2**31 - 1))
        add("randint({s},(2,3),arraymax)", lambda k: jr.randint(
            k, (2, 3), 0, jnp.array([2, 10, 1000])))
        add("randint({s},(4,),5,5)", lambda k: jr.randint(k, (4,), 5, 5))
        add("bernoulli({s},0.3,(10,))", lambda k: jr.bernoulli(k, 0.3, (10,)))
        add("bernoulli({s},parray)", lambda k: jr.bernoulli(k, jnp.array([0.1, 0.5, 0.9])))
        add("bernoulli({s},high)", lambda k: jr.bernoulli(k, 0.3, (6,), mode="high"))
        add("categorical({s},(5,))", lambda k: jr.categorical(k, logits))
        add("categorical({s},shape(4,))", lambda k: jr.categorical(k, logits, shape=(4,)))
        add("categorical({s},2d)", lambda k: jr.categorical(k, logits2))
        add("categorical({s},2d,axis0)", lambda k: jr.categorical(k, logits2, axis=0))
        add("categorical({s},2d,shape)", lambda k: jr.categorical(k, logits2, shape=(2, 3)))
        add("categorical({s},noreplace)", lambda k: jr.categorical(k, logits, shape=(3,),
                                                                   replace=False))
        add("truncated_normal({s},-1,2,(6,))", lambda k: jr.truncated_normal(k, -1., 2., (6,)),
            False)
        for name in ["exponential", "gumbel", "laplace", "logistic", "cauchy", "maxwell"]:
            add(f"{name}({{s}},(5,))", lambda k, n=name: getattr(jr, n)(k, (5,)), False)
        add("rademacher({s},(5,))", lambda k: jr.rademacher(k, (5,)))
        add("gumbel({s},(5,),high)", lambda k: jr.gumbel(k, (5,), mode="high"), False)
        add("pareto({s},3.,(5,))", lambda k: jr.pareto(k, 3., (5,)), False)
        add("weibull_min({s},2.,1.5,(5,))", lambda k: jr.weibull_min(k, 2., 1.5, (5,)), False)
        add("rayleigh({s},2.,(5,))", lambda k: jr.rayleigh(k, 2., (5,)), False)
        add("wald({s},1.5,(5,))", lambda k: jr.wald(k, 1.5, (5,)), False)
        add("geometric({s},0.3,(6,))", lambda k: jr.geometric(k, 0.3, (6,)))
        add("triangular({s},0,1,3,(5,))", lambda k: jr.triangular(k, 0., 1., 3., (5,)), False)
        add("lognormal({s},0.5,(5,))", lambda k: jr.lognormal(k, 0.5, (5,)), False)
        add("double_sided_maxwell({s},1,2,(4,))",
            lambda k: jr.double_sided_maxwell(k, 1., 2., (4,)), False)
        add("permutation({s},10)", lambda k: jr.permutation(k, 10))
        add("permutation({s},2d,axis1)", lambda k: jr.permutation(
            k, jnp.arange(12).reshape(3, 4), axis=1))
        add("permutation({s},2d,independent)", lambda k: jr.permutation(
            k, jnp.arange(12).reshape(3, 4), axis=1, independent=True))
        add("choice({s},10,(3,))", lambda k: jr.choice(k, 10, (3,)))
        add("choice({s},10,(4,),noreplace)", lambda k: jr.choice(k, 10, (4,), replace=False))
        add("choice({s},p)", lambda k: jr.choice(k, 5, (6,), p=probs))
        add("choice({s},p,noreplace)", lambda k: jr.choice(k, 5, (3,), replace=False, p=probs))
        add("choice({s},2d,axis1)", lambda k: jr.choice(k, jnp.arange(12).reshape(3, 4), (2,),
                                                        axis=1))
        for a in [0.5, 1.0, 3.5]:
            add(f"gamma({{s}},{a},(5,))", lambda k, a=a: jr.gamma(k, a, (5,)), False)
            add(f"loggamma({{s}},{a},(5,))", lambda k, a=a: jr.loggamma(k, a, (5,)), False)
        add("gamma({s},array)", lambda k: jr.gamma(k, jnp.array([0.2, 1.0, 5.0, 20.0])), False)
        add("beta({s},2,3,(5,))", lambda k: jr.beta(k, 2., 3., (5,)), False)
        add("dirichlet({s},(2,))", lambda k: jr.dirichlet(k, jnp.array([1., 2., 3.]), (2,)),
            False)
        add("t({s},4.,(5,))", lambda k: jr.t(k, 4., (5,)), False)
        add("chisquare({s},3.,(5,))", lambda k: jr.chisquare(k, 3., (5,)), False)
        add("f({s},3.,5.,(5,))", lambda k: jr.f(k, 3., 5., (5,)), False)
        add("poisson({s},3.,(8,))", lambda k: jr.poisson(k, 3., (8,)))
        add("poisson({s},25.,(8,))", lambda k: jr.poisson(k, 25., (8,)))
        add("binomial({s},10,0.3,(6,))", lambda k: jr.binomial(k, 10., 0.3, (6,)))
        add("binomial({s},100,0.6,(6,))", lambda k: jr.binomial(k, 100., 0.6, (6,)))
        add("multinomial({s})", lambda k: jr.multinomial(k, 10., jnp.array([0.2, 0.3, 0.5])))
        add("multivariate_normal({s},(3,))", lambda k: jr.multivariate_normal(
            k, jnp.array([1., -1.]), cov, (3,)), False)
        add("orthogonal({s},3)", lambda k: jr.orthogonal(k, 3), False)
        add("generalized_normal({s},1.5,(5,))", lambda k: jr.generalized_normal(k, 1.5, (5,)),
            False)
        add("ball({s},3,(2,))", lambda k: jr.ball(k, 3, 2., (2,)), False)
        add("uniform(key({s}),(3,))", lambda k: jr.uniform(jr.wrap_key_data(k), (3,)))
    return cases


# --- the generator ------------------------------------------------------------------------

def test_threefry_known_answers():
    """Test vectors of Threefry-2x32 with 20 rounds from the Random123 distribution."""
    cases = [((0, 0), (0, 0), (0x6b200159, 0x99ba4efe)),
             ((0xffffffff,) * 2, (0xffffffff,) * 2, (0x1cb996fc, 0xbb002be7)),
             ((0x13198a2e, 0x03707344), (0x243f6a88, 0x85a308d3), (0xc4923a9c, 0x483df7a0))]
    for key, count, expected in cases:
        words = [np.uint32(v) for v in key + count]
        assert [int(v) for v in threefry2x32_numpy(*words)] == list(expected)
        assert [int(v) for v in threefry2x32(*words)] == list(expected)
        assert [int(v) for v in jax.jit(threefry2x32)(*words)] == list(expected)


def test_threefry_is_a_batchable_primitive():
    k1, k2 = np.uint32(3), np.uint32(9)
    xs = np.arange(8, dtype=np.uint32).reshape(2, 4)
    direct = threefry2x32(k1, k2, xs, xs + 1)
    mapped = jax.vmap(lambda a, b: threefry2x32(k1, k2, a, b))(xs, xs + 1)
    np.testing.assert_array_equal(direct[0], mapped[0])
    np.testing.assert_array_equal(direct[1], mapped[1])
    assert "threefry2x32" in str(jax.make_jaxpr(lambda k: jr.bits(k, (3,)))(jr.PRNGKey(0)))


# --- keys -----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 42, -1, 2**31 - 1, 1701])
def test_prngkey_matches_jax(seed):
    check(f"PRNGKey({seed})", jr.PRNGKey(seed), True)


@pytest.mark.parametrize("s", SEEDS)
def test_split_fold_in_and_key_data_match_jax(s):
    k = jr.PRNGKey(s)
    check(f"split({s})", jr.split(k), True)
    check(f"split({s},3)", jr.split(k, 3), True)
    check(f"split({s},(2,3))", jr.split(k, (2, 3)), True)
    for d in [0, 7, 2**32 - 1]:
        check(f"fold_in({s},{d})", jr.fold_in(k, d), True)
    check(f"key_data(key({s}))", jr.key_data(jr.key(s)), True)
    check(f"split(key({s}),4)", jr.key_data(jr.split(jr.key(s), 4)), True)


def test_typed_keys():
    k = jr.key(0)
    assert k.shape == () and str(k.dtype) == "key<fry>" and k.dtype == jr.key_dtype()
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    ks = jr.split(k, 3)
    assert ks.shape == (3,) and ks[1].shape == () and len(list(ks)) == 3
    assert jr.key_impl(ks) == "threefry2x32"
    np.testing.assert_array_equal(jr.key_data(ks[2]), jr.key_data(ks)[2])
    assert jr.split(k, (2, 3)).shape == (2, 3)
    assert bool((ks == ks).all()) and bool(k == jr.key(0)) and bool(k != jr.key(1))
    back = jr.wrap_key_data(jr.key_data(ks))
    np.testing.assert_array_equal(jr.key_data(back), jr.key_data(ks))
    # A raw key and its typed form give the same samples; split keeps the key's kind.
    np.testing.assert_array_equal(jr.normal(jr.PRNGKey(7), (3,)), jr.normal(jr.key(7), (3,)))
    assert isinstance(jr.split(jr.PRNGKey(0)), jax.Array)
    assert isinstance(jr.split(jr.key(0)), PRNGKeyArray)
    with pytest.raises(TypeError, match="PRNGKey dtype cannot be converted to a NumPy array"):
        np.asarray(k)


def test_key_errors():
    with pytest.raises(TypeError, match="expected key_data.shape to end with"):
        jr.uniform(jnp.zeros(3, jnp.uint32))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32"):
        jr.uniform(jnp.zeros(2, jnp.int32))
    with pytest.raises(ValueError, match="uniform accepts a single key.*Use jax.vmap"):
        jr.uniform(jr.split(jr.key(0), 2))
    with pytest.raises(ValueError, match="split accepts a single key"):
        jr.split(jr.split(jr.PRNGKey(0)))
    with pytest.raises(TypeError, match="scalar seed"):
        jr.PRNGKey(jnp.arange(2))
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        jr.normal(3)
    with pytest.raises(ValueError, match="unrecognized PRNG implementation"):
        jr.key(0, impl="mersenne")
    with pytest.raises(ValueError, match="must be a float"):
        jr.uniform(jr.key(0), dtype=jnp.int32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        jr.uniform(jr.key(0), (3,), minval=jnp.zeros(4))


def test_keys_under_jit_vmap_and_scan():
    k = jr.PRNGKey(1701)
    keys = jr.split(k, 4)
    check("vmap_uniform(split(1701,4))", jax.vmap(lambda kk: jr.uniform(kk, (2,)))(keys), True)
    check("jit_normal(1701,(3,))", jax.jit(lambda kk: jr.normal(kk, (3,)))(k), False)
    typed = jax.jit(lambda kk: jr.split(kk, 2))(jr.key(3))
    assert isinstance(typed, PRNGKeyArray) and typed.shape == (2,)
    np.testing.assert_array_equal(jr.key_data(typed), jr.key_data(jr.split(jr.key(3))))
    by_vmap = jax.vmap(lambda kk: jr.normal(kk, (2,)))(jr.split(jr.key(5), 3))
    by_loop = jnp.stack([jr.normal(kk, (2,)) for kk in jr.split(jr.key(5), 3)])
    np.testing.assert_allclose(by_vmap, by_loop, rtol=1e-6)

    def step(key, _):
        key, sub = jr.split(key)
        return key, jr.uniform(sub)
    _, draws = lax.scan(step, jr.key(0), None, length=3)
    key, expected = jr.key(0), []
    for _ in range(3):
        key, sub = jr.split(key)
        expected.append(jr.uniform(sub))
    np.testing.assert_allclose(draws, np.array(expected), rtol=1e-6)


@pytest.mark.skipif(config.executor.value != "xla", reason="needs the XLA executor")
def test_jit_on_xla_is_bit_exact():
    """XLA fuses the same multiply-adds JAX's XLA does, so compiled samples match JAX's
    bits exactly (the NumPy executor is within a few ulps)."""
    k = jr.PRNGKey(0)
    check("uniform(0,(4,),minmax)", jax.jit(lambda kk: jr.uniform(
        kk, (4,), minval=-2., maxval=5.))(k), True)
    check("normal(0,(5,))", jax.jit(lambda kk: jr.normal(kk, (5,)))(k), True)
    check("gamma(0,array)", jax.jit(lambda kk: jr.gamma(
        kk, jnp.array([0.2, 1.0, 5.0, 20.0])))(k), True)
    check("permutation(0,10)", jax.jit(lambda kk: jr.permutation(kk, 10))(k), True)


def test_x64_values_match_jax():
    ref = REF["x64"]
    with config.enable_x64(True):
        k = jr.PRNGKey(0)
        check("PRNGKey(2**40)", jr.PRNGKey(2**40), True, ref)
        check("PRNGKey(-1)", jr.PRNGKey(-1), True, ref)
        check("bits(0,(5,),uint64)", jr.bits(k, (5,), "uint64"), True, ref)
        check("uniform(0,(5,),float64)", jr.uniform(k, (5,), jnp.float64), True, ref)
        check("normal(0,(5,),float64)", jr.normal(k, (5,), jnp.float64), False, ref)
        check("randint(0,(5,),0,1000,int64)", jr.randint(k, (5,), 0, 1000, jnp.int64), True,
              ref)
        check("uniform(0,(5,),float32)", jr.uniform(k, (5,), jnp.float32), True, ref)


# --- samplers against JAX's recorded values -------------------------------------------------

@pytest.mark.parametrize("seed,name,fn,exact", _cases())
def test_sampler_matches_jax(seed, name, fn, exact):
    check(name, fn(jr.PRNGKey(seed)), exact)


# --- sample moments ---------------------------------------------------------------------------

N = 20000


def _moments_ok(x, mean, var, name):
    """Sample mean within 5 standard errors; sample variance within 10% (or 5 SE)."""
    x = np.asarray(x, np.float64).reshape(-1)
    se = np.sqrt(var / x.size)
    assert abs(x.mean() - mean) < 5 * se + 1e-9, (name, x.mean(), mean)
    assert abs(x.var() - var) < max(0.1 * var, 1e-9), (name, x.var(), var)


MOMENT_CASES = [
    ("uniform", lambda k: jr.uniform(k, (N,), minval=-1., maxval=3.), 1.0, 16 / 12),
    ("normal", lambda k: jr.normal(k, (N,)), 0.0, 1.0),
    ("truncated_normal", lambda k: jr.truncated_normal(k, -1., 2., (N,)),
     scipy.stats.truncnorm.mean(-1, 2), scipy.stats.truncnorm.var(-1, 2)),
    ("exponential", lambda k: jr.exponential(k, (N,)), 1.0, 1.0),
    ("gumbel", lambda k: jr.gumbel(k, (N,)), np.euler_gamma, np.pi ** 2 / 6),
    ("laplace", lambda k: jr.laplace(k, (N,)), 0.0, 2.0),
    ("logistic", lambda k: jr.logistic(k, (N,)), 0.0, np.pi ** 2 / 3),
    ("bernoulli", lambda k: jr.bernoulli(k, 0.3, (N,)), 0.3, 0.21),
    ("randint", lambda k: jr.randint(k, (N,), 0, 10), 4.5, 99 / 12),
    ("rademacher", lambda k: jr.rademacher(k, (N,)), 0.0, 1.0),
    ("gamma(0.5)", lambda k: jr.gamma(k, 0.5, (N,)), 0.5, 0.5),
    ("gamma(4)", lambda k: jr.gamma(k, 4.0, (N,)), 4.0, 4.0),
    ("loggamma(2)", lambda k: jnp.exp(jr.loggamma(k, 2.0, (N,))), 2.0, 2.0),
    ("beta(2,3)", lambda k: jr.beta(k, 2., 3., (N,)), 0.4, 0.04),
    ("chisquare(3)", lambda k: jr.chisquare(k, 3., (N,)), 3.0, 6.0),
    ("t(5)", lambda k: jr.t(k, 5., (N,)), 0.0, 5 / 3),
    ("f(4,10)", lambda k: jr.f(k, 4., 10., (N,)), 10 / 8, scipy.stats.f.var(4, 10)),
    ("poisson(3)", lambda k: jr.poisson(k, 3., (N,)), 3.0, 3.0),
    ("poisson(40)", lambda k: jr.poisson(k, 40., (N,)), 40.0, 40.0),
    ("binomial(10,0.3)", lambda k: jr.binomial(k, 10., 0.3, (N,)), 3.0, 2.1),
    ("binomial(200,0.7)", lambda k: jr.binomial(k, 200., 0.7, (N,)), 140.0, 42.0),
    ("geometric(0.25)", lambda k: jr.geometric(k, 0.25, (N,)), 4.0, 12.0),
    ("pareto(5)", lambda k: jr.pareto(k, 5., (N,)), 5 / 4, scipy.stats.pareto.var(5)),
    ("lognormal(0.5)", lambda k: jr.lognormal(k, 0.5, (N,)), *scipy.stats.lognorm.stats(0.5)),
    ("rayleigh(2)", lambda k: jr.rayleigh(k, 2., (N,)), *scipy.stats.rayleigh.stats(scale=2)),
    ("maxwell", lambda k: jr.maxwell(k, (N,)), *scipy.stats.maxwell.stats()),
    ("weibull_min(1.5)", lambda k: jr.weibull_min(k, 1., 1.5, (N,)),
     *scipy.stats.weibull_min.stats(1.5)),
    ("wald(1.5)", lambda k: jr.wald(k, 1.5, (N,)), 1.5, 1.5 ** 3),
    ("triangular(0,1,3)", lambda k: jr.triangular(k, 0., 1., 3., (N,)), 4 / 3, 7 / 18),
    ("double_sided_maxwell", lambda k: jr.double_sided_maxwell(k, 1., 2., (N,)), 1.0, 12.0),
    ("categorical", lambda k: jr.categorical(k, jnp.log(jnp.array([0.2, 0.5, 0.3])),
                                             shape=(N,)), 1.1, 0.49),
    ("choice(p)", lambda k: jr.choice(k, 3, (N,), p=jnp.array([0.2, 0.5, 0.3])), 1.1, 0.49),
    ("generalized_normal(2)", lambda k: jr.generalized_normal(k, 2., (N,)), 0.0, 0.5),
]


@pytest.mark.parametrize("name,sample,mean,var", MOMENT_CASES,
                         ids=[c[0] for c in MOMENT_CASES])
def test_sample_moments(name, sample, mean, var):
    _moments_ok(sample(jr.key(2024)), float(mean), float(var), name)


def test_multivariate_moments():
    k = jr.key(11)
    cov = np.array([[2.0, 0.6], [0.6, 1.0]], np.float32)
    for method in ("cholesky", "eigh", "svd"):
        x = np.asarray(jr.multivariate_normal(k, jnp.array([1., -2.]), cov, (N,),
                                              method=method), np.float64)
        np.testing.assert_allclose(x.mean(0), [1, -2], atol=0.05)
        np.testing.assert_allclose(np.cov(x.T), cov, atol=0.08)
    d = np.asarray(jr.dirichlet(k, jnp.array([1., 2., 3.]), (N,)), np.float64)
    np.testing.assert_allclose(d.sum(-1), 1, rtol=1e-5)
    np.testing.assert_allclose(d.mean(0), [1 / 6, 2 / 6, 3 / 6], atol=0.01)
    m = np.asarray(jr.multinomial(k, 20., jnp.array([0.2, 0.3, 0.5]), shape=(4000, 3)))
    assert (m.sum(-1) == 20).all()
    np.testing.assert_allclose(m.mean(0), [4, 6, 10], atol=0.15)
    q = np.asarray(jr.orthogonal(k, 4), np.float64)
    np.testing.assert_allclose(q @ q.T, np.eye(4), atol=1e-5)
    b = np.asarray(jr.ball(k, 3, shape=(1000,)), np.float64)
    assert (np.linalg.norm(b, axis=-1) <= 1 + 1e-6).all()
    perm = np.asarray(jr.permutation(k, 50))
    assert sorted(perm.tolist()) == list(range(50))
    picks = np.asarray(jr.choice(k, 20, (20,), replace=False))
    assert sorted(picks.tolist()) == list(range(20))


def test_gamma_gradient_is_the_implicit_reparameterization():
    """d sample / d alpha = -(dCDF/dalpha) / pdf at the sample, checked with SciPy."""
    alphas = np.array([0.5, 2.0, 9.0], np.float32)
    grads = jax.vmap(jax.grad(lambda a, kk: jr.gamma(kk, a)))(
        jnp.asarray(alphas), jr.split(jr.key(1), 3))
    samples = np.asarray(jax.vmap(lambda a, kk: jr.gamma(kk, a))(
        jnp.asarray(alphas), jr.split(jr.key(1), 3)), np.float64)
    a64 = alphas.astype(np.float64)
    h = 1e-6 * np.maximum(a64, 1)
    dcdf = (scipy.special.gammainc(a64 + h, samples) -
            scipy.special.gammainc(a64 - h, samples)) / (2 * h)
    expected = -dcdf / scipy.stats.gamma.pdf(samples, a64)
    np.testing.assert_allclose(grads, expected, rtol=2e-4)


def test_samplers_run_as_one_program_like_jax():
    """Samplers are compiled whole, as in JAX: fused float16 chains and the tail of
    truncated_normal give JAX's exact values (op by op they were a few ulps off)."""
    k = jr.key(9)
    np.testing.assert_array_equal(np.asarray(jr.gumbel(k, (50,), jnp.float16))[[14, 26, 37]],
                                  np.array([-1.055, -1.161, -1.555], np.float16))
    np.testing.assert_array_equal(
        np.asarray(jr.logistic(k, (50,), jnp.float16))[[14, 26, 37]],
        np.array([-2.812, -3.152, -4.727], np.float16))
    t = jr.truncated_normal(k, jnp.array([-np.inf, 0., 5.]), jnp.array([np.inf, 1., 6.]))
    np.testing.assert_array_equal(np.asarray(t), np.array(
        [-1.7417277097702026, 0.9552415013313293, 5.124692440032959], np.float32))
    np.testing.assert_array_equal(np.asarray(jr.normal(k, (3,), jnp.float16)),
                                  np.asarray(jax.jit(jr.normal, static_argnums=(1, 2))(
                                      k, (3,), jnp.float16)))


def test_fold_in_rejects_python_ints_outside_uint32():
    for data in (-3, 2 ** 32 + 3):
        with pytest.raises(OverflowError):
            jr.fold_in(jr.key(1), data)
    np.testing.assert_array_equal(jr.key_data(jr.fold_in(jr.key(1), np.int32(-3))),
                                  [767038066, 714192323])


def test_bernoulli_default_p_is_a_python_float():
    """p=0.5 is weakly typed: float64 uniforms under x64, as in JAX."""
    with config.enable_x64(True):
        np.testing.assert_array_equal(jr.bernoulli(jr.key(4), shape=(8,)),
                                      [True, True, False, True, False, False, False, True])
        np.testing.assert_array_equal(jr.bernoulli(jr.key(4), np.float32(0.5), (8,)),
                                      [False, False, True, False, False, False, True, False])


def test_random_arrays_of_2_to_the_32_elements_or_more_trace_and_lower():
    """Their element indices need 64 bits (two uint32 words), as in JAX; only traced and
    lowered here, since the arrays would take tens of GB."""
    out = jax.eval_shape(lambda s: jax.random.normal(jax.random.key(s), (10 ** 12,)), 0)
    assert (out.shape, out.dtype) == ((10 ** 12,), jnp.float32)
    text = jax.jit(lambda: jax.random.uniform(jax.random.key(3), (308000000, 128),
                                              dtype=jnp.bfloat16)).lower().as_text()
    assert "ui64" in text


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 5)])
def test_wide_element_indices_match_the_narrow_ones(shape):
    for f in (random_bits.wide_iota_2x32, jax.jit(random_bits.wide_iota_2x32,
                                                  static_argnums=0)):
        high, low = f(shape)
        np.testing.assert_array_equal(high, np.zeros(shape, np.uint32))
        np.testing.assert_array_equal(low, np.arange(np.prod(shape)).reshape(shape))
    # strides past 2**32 carry into the high word
    big = 3 * 2 ** 32 + 7
    product = elementwise.mul(random_bits._uint64(np.arange(5, dtype=np.uint32)),
                                 random_bits._uint64_constant(big))
    np.testing.assert_array_equal(product, np.arange(5, dtype=np.uint64) * np.uint64(big))


def test_array_equal_of_typed_keys():
    # chex's assert_trees_all_equal compares keys with equal_nan=True (values from JAX 0.10.2)
    ks = jr.split(jr.key(0), 2)
    assert bool(jnp.array_equal(ks, ks, equal_nan=True))
    assert not bool(jnp.array_equal(ks, ks[::-1], equal_nan=True))
    assert bool(jax.jit(lambda a, b: jnp.array_equal(a, b, equal_nan=True))(ks, ks))
    with pytest.raises(TypeError, match=r"equal does not accept dtypes key<fry>, int32\."):
        jnp.array_equal(ks, jnp.array([1, 2]), equal_nan=True)


@pytest.mark.parametrize("other", [1, np.int32(1), "array"])
def test_a_key_compared_with_a_number_or_int_array_raises_as_in_jax(other):
    # JAX 0.10.2: TypeError "equal does not accept dtypes key<fry>, int32." (not False)
    keys = jr.split(jr.key(0), 2)
    other = jnp.arange(2) if isinstance(other, str) else other
    with pytest.raises(TypeError, match="equal does not accept dtypes key<fry>, int32"):
        assert keys == other
    with pytest.raises(TypeError, match="not_equal does not accept dtypes key<fry>, int32"):
        assert keys != other
    with pytest.raises(TypeError, match="equal does not accept dtypes key<fry>, int32"):
        jax.jit(lambda k, o: k == o)(keys, other)
    # other keys compare by value; unrelated objects are simply unequal, as in JAX
    assert list(keys == jr.split(jr.key(0), 2)) == [True, True]
    assert (keys[0] == None) is False and (keys[0] != "a") is True  # noqa: E711
