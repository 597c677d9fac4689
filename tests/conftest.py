import math
import os

import pytest
import torch
from hypothesis import HealthCheck, settings

# Property-based tests (tests/test_properties.py): a bounded profile for CI and a long one,
# selected with HYPOTHESIS_PROFILE=long (see docs/robustness.rst).
settings.register_profile(
    "ci", max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile(
    "long", max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

if os.environ.get("PYTEST_XDIST_WORKER"):  # pytest -n N: one torch thread a worker, so the workers share the cores,
    torch.set_num_threads(1)
    os.environ.setdefault("OMP_NUM_THREADS", "1")  # and in the processes a test starts (a notebook's kernel, a script)

DT = torch.float64

DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cpu-audit", id="cpu-audit"),
    pytest.param(
        "cuda",
        id="cuda",
        marks=[pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")],
    ),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device-aware test runs on the CPU and, when present, on CUDA.

    ``cpu-audit`` is the CPU run again under :class:`device_audit.LibraryDeviceAudit`: any tensor
    the library creates without following the candidates' device lands on ``meta`` and fails the
    test, which is what it would do on CUDA; and any ``.cpu()`` / ``.numpy()`` call from the
    library's hot paths fails it too, as does a floating tensor created without ``dtype=``.
    """
    if request.param != "cpu-audit":
        yield torch.device(request.param)
        return
    from device_audit import LibraryDeviceAudit

    with LibraryDeviceAudit() as audit:
        yield torch.device("cpu")
    assert not audit.host_calls, f"host round trips from the library: {sorted(set(audit.host_calls))}"
    assert not audit.default_dtype_calls, f"float32-by-default tensors: {sorted(set(audit.default_dtype_calls))}"


def oracle_kernel(name, X, Y, ell):
    """Closed-form SE / Matérn kernels, independent of GPyTorch."""
    r = torch.cdist(X, Y) / ell
    if name == "se":
        return torch.exp(-0.5 * r * r)
    if name == "matern52":
        s = math.sqrt(5.0) * r
        return (1 + s + s * s / 3) * torch.exp(-s)
    if name == "matern32":
        s = math.sqrt(3.0) * r
        return (1 + s) * torch.exp(-s)
    raise ValueError(name)


def oracle_A(K, P, c):
    """A = Ψ G⁻¹ Ψᵀ with the explicit feature map Ψ = chol(K) (definitional feature-space form)."""
    n = K.shape[0]
    L = torch.linalg.cholesky(K + 1e-11 * torch.eye(n, dtype=K.dtype, device=K.device))
    G = L.T @ torch.diag(P) @ L + c * torch.eye(n, dtype=K.dtype, device=K.device)
    return L @ torch.linalg.solve(G, L.T)


def grid(n, device="cpu"):
    return torch.linspace(0, 1, n, dtype=DT, device=device).unsqueeze(-1)


def regret_ratios_to_uniform(make_policy, kernel_name, *, n=100, T=300, seeds=3):
    """Final expected regret of ``make_policy(X, kernel, T, generator)`` over Random's, per seed,
    against the adaptive adversary (100 functions) on an ``n``-point grid."""
    from torch_advbandit import UniformRandom
    from torch_advbandit.environments import AdaptiveAdversary
    from torch_advbandit.experiments import play
    from torch_advbandit.kernels import make_kernel

    X = grid(n)
    k = make_kernel(kernel_name, 1)
    ratios = []
    for seed in range(seeds):
        env = AdaptiveAdversary.from_kernel(k, X, num_functions=100, generator=torch.Generator().manual_seed(seed))
        policy = make_policy(X, k, T, torch.Generator().manual_seed(seed))
        uniform = UniformRandom(X, k, T, generator=torch.Generator().manual_seed(seed))
        ratios.append(play(policy, env, T).expected_regret[-1] / play(uniform, env, T).expected_regret[-1])
    return ratios


def archived(out):
    """``key → record dict`` of ``out/trials.jsonl.xz``, read independently of the store."""
    import json
    import lzma

    from torch_advbandit.experiments import config_from_dict

    path = out / "trials.jsonl.xz"
    if not path.exists():
        return {}
    records = [json.loads(line) for line in lzma.decompress(path.read_bytes()).decode().splitlines()]
    return {config_from_dict(r["config"]).key: r for r in records}


def same_state(s1, s2):
    """Two ``state_dict()``s bit-equal: tensors (and their dtypes), settings, a fitted kernel's state, the rest."""
    from torch_advbandit.policies.settings import same_settings

    assert s1.keys() == s2.keys()
    for key in s1:
        a, b = s1[key], s2[key]
        if isinstance(a, torch.Tensor):
            assert isinstance(b, torch.Tensor) and a.dtype == b.dtype and torch.equal(a, b), key
        elif key == "hyperparameters":
            assert same_settings(a, b), key
        elif isinstance(a, dict):  # a fitted kernel's state: tensors of any shape (ARD lengthscales)
            assert isinstance(b, dict) and a.keys() == b.keys(), key
            assert all(torch.equal(a[k], b[k]) if isinstance(a[k], torch.Tensor) else a[k] == b[k] for k in a), key
        else:
            assert a == b, key
