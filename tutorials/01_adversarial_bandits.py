"""Tutorial 1 — adversarial kernelized bandits in five minutes.

Kernelized Exp3 (seed 1, Alg. 1) against the fully adaptive adversary of the paper's App. 17,
beside uniform Random: regret curves and the evolving sampling distribution P_t.

Run: ``python tutorials/01_adversarial_bandits.py`` (about a minute on 2 cores; set
``SMOKE_TEST=1`` for a seconds-long version). Writes ``tutorial1_regret.png`` and
``tutorial1_probabilities.png`` in the current folder (or in ``$TUTORIAL_OUT``).
"""

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from torch_advbandit import KernelizedExp3, UniformRandom  # noqa: E402
from torch_advbandit.environments import AdaptiveAdversary  # noqa: E402
from torch_advbandit.experiments import play  # noqa: E402
from torch_advbandit.kernels import make_kernel  # noqa: E402
from torch_advbandit.parameters import paper_parameters  # noqa: E402

SMOKE_TEST = os.environ.get("SMOKE_TEST") == "1"
OUT = Path(os.environ.get("TUTORIAL_OUT", "."))

# 1. Candidates and a kernel: 400 points of [0, 1] (the paper's setting 1), SE with ℓ = 0.3.
n, T = (100, 60) if SMOKE_TEST else (400, 1000)
X = torch.linspace(0, 1, n, dtype=torch.float64).unsqueeze(-1)
kernel = make_kernel("se", d=1)

# 2. The adversary: 1000 random RKHS functions of norm ≤ 2; each round it plays the one that
#    hurts the learner's current P_t most.
adversary = AdaptiveAdversary.from_kernel(
    kernel, X, num_functions=100 if SMOKE_TEST else 1000, generator=torch.Generator().manual_seed(0)
)

# 3. Two learners with the paper's parameters; record P_t of kernelized Exp3 as it evolves.
exp3 = KernelizedExp3(X, kernel, T, **paper_parameters("se", T, d=1), generator=torch.Generator().manual_seed(1))
random = UniformRandom(X, kernel, T, generator=torch.Generator().manual_seed(1))
snapshots = {}


def keep_snapshot(t):
    if t + 1 in (1, T // 4, T // 2, T):
        snapshots[t + 1] = exp3.probabilities().clone()


curves = {"Kernelized Exp3": play(exp3, adversary, T, on_round=keep_snapshot), "Random": play(random, adversary, T)}

# 4. Regret curves and P_t.
fig, ax = plt.subplots(figsize=(6, 4))
for name, traj in curves.items():
    ax.plot(range(1, T + 1), traj.expected_regret, label=f"{name}: {traj.expected_regret[-1]:.1f}")
ax.set(xlabel="round t", ylabel="cumulative expected regret", title="Adaptive adversary, setting 1, SE")
ax.legend()
fig.tight_layout()
fig.savefig(OUT / "tutorial1_regret.png", dpi=110)

fig, ax = plt.subplots(figsize=(6, 4))
for t, P in snapshots.items():
    ax.plot(X[:, 0], P, label=f"P_t after t = {t}")
ax.set(xlabel="x", ylabel="probability", yscale="log", title="Kernelized Exp3's sampling distribution")
ax.legend()
fig.tight_layout()
fig.savefig(OUT / "tutorial1_probabilities.png", dpi=110)

for name, traj in curves.items():
    print(f"{name:>16}: final regret {traj.expected_regret[-1]:8.2f}, {1e3 * sum(traj.round_seconds) / T:.2f} ms/round")
