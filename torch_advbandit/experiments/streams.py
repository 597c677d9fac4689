"""Versions of the code that decides what a seed produces, carried by every record.

A record is served only by code that would reproduce it. Every component whose code decides a
trial's random stream and results — an environment, a policy — has a version here, and a trial's
``stream`` names the versions of its components, e.g. ``"adaptive@1+kernelized_exp3@1"``. A record
whose stream differs from the current code's is stale: the sweep runs the trial again and the
stale record is never served. ``tests/test_streams.py`` pins a digest of each component's output
at its version and fails until a change that alters that output bumps the version here.

A change can alter a component's output only under a condition a record shows (for example, only while a
change point is in force). :data:`CARRIED` names such changes, one step a version: the records of the version before
a step that show its condition never held are the output of the version after it too, and a record that passes
every step up to the current version is served as current (:func:`reproduces`); it keeps the stream it was made
with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from ..memory_average import held_row

#: Version of each environment and policy of the experiments; bump on any change of its output.
STREAM_VERSIONS: dict[str, int] = {
    # environments of the adversarial trials ([Iwazaki2026] App. 17 and Sec. 5)
    "adaptive": 1,
    "lower_bound": 1,
    # policies of the adversarial trials
    "kernelized_exp3": 1,
    "rls_kernelized_exp3": 1,
    "rls_kernelized_exp3_truncated": 1,
    "apg_exp3": 1,
    "uniform": 1,
    "kernelized_exp3_derived": 2,  # 2: (c3, c4) = DERIVED_CONSTANTS for every kernel
    "rls_kernelized_exp3_derived": 2,  # 2: as kernelized_exp3_derived
    "apg_exp3_anytime": 1,
    "kernelized_exp3_auto_units": 1,
    "kernelized_exp3_anytime": 3,  # 3: parameters for twice the epoch end (2: for the epoch end; scores kept)
    # environments and policies of the drift trials ([Deng2022] Fig. 1)
    "abrupt": 1,
    "slow": 1,
    "wgp_ucb": 1,
    "igp_ucb": 1,
    "sw_gp_ucb": 1,
    "r_gp_ucb": 1,
    "wgp_ucb_auto": 3,  # 2: change points; 3: η = 1 until 10 rows are scored
    # problems and methods of the drifting benchmark against vanilla BoTorch
    "branin": 1,
    "hartmann6": 1,
    "levy4": 1,
    "hartmann3": 1,
    "styblinskitang3": 1,
    "botorch_ucb": 1,
    "wgp_auto_fitted": 10,  # 2: one fit for rows observed together; 3: design rows not scored, margin; 4: calibrated;
    # 5: change points, robust scores, fits from BoTorch's initial noise; 6: η = 1 until 10 rows are scored;
    # 7: fits at η = 1 whatever the memory's discount; 8: selections average the memories; 9: while a change point
    # is in force, the fit is of every row as two segments sharing the hyperparameters; 10: the average yields to
    # the chosen memory where its pick is the row of most recent lone observations (memory_average.held_row)
    "wgp_auto_tested": 6,  # 2: the policy's fit at η = 1 on every row is the change test's stationary fit; 3: as
    # wgp_auto_fitted@7; 4: as wgp_auto_fitted@8; 5: as wgp_auto_fitted@9; 6: as wgp_auto_fitted@10
    "wgp_auto_time_varying": 4,  # 2: as wgp_auto_fitted@9; 3: as wgp_auto_fitted@10; 4: while a change point is
    # in force, selections on the GP of every row with the segments before and since it correlated by a fitted ρ
    "wgp_fixed_fitted": 2,  # 2: fits from BoTorch's initial noise
    "wgp_fixed_tested": 1,
    "sw_fitted": 2,  # 2: fits from BoTorch's initial noise
    "restart_fitted": 2,  # 2: fits from BoTorch's initial noise
    "tv_fitted": 2,  # 2: ε = 0 until 10 rounds are observed
    "tv_tested": 2,  # 2: the fitted ε refitted from the ε = 0 optimum where the test does not pass
    "tv_changes": 2,  # 2: as tv_tested; the model after a change starts from the space kernel fitted before it
    "tv_changes_anytime": 1,
    "botorch_oracle": 1,
}


def stream_of(*components: str) -> str:
    """The stream name of a trial made of ``components``: ``name@version`` joined by ``+``.

    Example:
        >>> stream_of("adaptive", "uniform")
        'adaptive@1+uniform@1'
    """
    missing = [c for c in components if c not in STREAM_VERSIONS]
    if missing:
        raise ValueError(f"no stream version for {missing}: add them to STREAM_VERSIONS")
    return "+".join(f"{c}@{STREAM_VERSIONS[c]}" for c in components)


def no_change_point(record: Any) -> bool:
    """Whether no round of ``record`` (a :class:`~torch_advbandit.experiments.records.TrialRecord`) had a change point
    in force: its per-round ``diagnostics["since"]``, recorded after every update, is 0 throughout.

    Example:
        >>> from types import SimpleNamespace
        >>> no_change_point(SimpleNamespace(diagnostics={"since": [0.0, 0.0]}, expected_regret=[1.0, 2.0]))
        True
    """
    since = record.diagnostics.get("since")
    return since is not None and len(since) == len(record.expected_regret) and all(v == 0 for v in since)


def never_held(record: Any) -> bool:
    """Whether no selection of ``record`` was of the candidate of :data:`~torch_advbandit.memory_average.REPEATS` of the
    :data:`~torch_advbandit.memory_average.REPEAT_WINDOW` selections before it (its ``chosen``, one a round; every
    lone observation of a drifting trial is its selection): the average over memories never yielded to the chosen
    memory (:func:`~torch_advbandit.memory_average.held_row`).

    Example:
        >>> from types import SimpleNamespace
        >>> never_held(SimpleNamespace(chosen=[3] * 16 + [5], expected_regret=[1.0] * 17))
        True
        >>> never_held(SimpleNamespace(chosen=[3] * 17, expected_regret=[1.0] * 17))
        False
    """
    chosen = torch.tensor(list(record.chosen)).unsqueeze(-1)  # one row a selection: the held row is a candidate index
    if chosen.shape[0] != len(record.expected_regret):
        return False
    held = (held_row(chosen[:t]) for t in range(chosen.shape[0]))
    return all(h is None or not torch.equal(h, chosen[t]) for t, h in enumerate(held))


#: ``component → ((made, by, rule), ...)``, one step a version: version ``by`` reproduces the records of version
#: ``made`` that satisfy ``rule`` (served only while the last step's ``by`` is the current version). The GP-UCB
#: policies of ``discount="auto"`` fit the hyperparameters of every row as two segments while a change point is in
#: force, and as before otherwise; then their average over memories yields to the chosen memory where its pick is
#: the row of most recent lone observations, and selects as before otherwise; then, with the time-varying test, they
#: select on the correlated segments while a change point is in force, and as before otherwise.
CARRIED: dict[str, tuple[tuple[int, int, Callable[[Any], bool]], ...]] = {
    "wgp_auto_fitted": ((8, 9, no_change_point), (9, 10, never_held)),
    "wgp_auto_tested": ((4, 5, no_change_point), (5, 6, never_held)),
    "wgp_auto_time_varying": ((1, 2, no_change_point), (2, 3, never_held), (3, 4, no_change_point)),
}


def reproduces(stream: str, record: Any) -> bool:
    """Whether the code of ``stream`` (a current trial's) reproduces ``record``: made with that stream, or with one
    that differs only in components whose :data:`CARRIED` steps lead from the record's version to the current one,
    each step's rule holding for the record.

    Example:
        >>> from types import SimpleNamespace
        >>> record = SimpleNamespace(stream="branin@1+wgp_auto_time_varying@1", expected_regret=[1.0],
        ...                          diagnostics={"since": [0.0]}, chosen=[7])
        >>> reproduces(stream_of("branin", "wgp_auto_time_varying"), record)
        True
        >>> reproduces(stream_of("branin", "wgp_auto_time_varying"), SimpleNamespace(**{**vars(record),
        ...            "diagnostics": {"since": [3.0]}}))
        False
    """
    if record.stream == stream:
        return True
    recorded, current = _versions(record.stream), _versions(stream)
    if recorded is None or current is None or recorded.keys() != current.keys():
        return False
    for component, version in recorded.items():
        if version == current[component]:
            continue
        if current[component] != STREAM_VERSIONS.get(component):
            return False
        steps = {made: (by, rule) for made, by, rule in CARRIED.get(component, ())}
        while version != current[component]:
            by, rule = steps.get(version, (None, None))
            if by is None or not rule(record):
                return False
            version = by
    return True


def _versions(stream: str) -> dict[str, int] | None:
    """``component → version`` of a stream name; ``None`` if it is not one."""
    out = {}
    for part in stream.split("+"):
        name, _, version = part.partition("@")
        if not version.isdigit() or name in out:
            return None
        out[name] = int(version)
    return out
