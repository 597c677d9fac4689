"""Snapshots of a running trial, so that a stopped long trial continues where it stopped.

A sweep loses the trials in flight when it is stopped; for trials of hours (RLS-kernelized Exp3
with rough kernels on 10⁴ candidates at ``T = 1000``) that is most of the work. While a trial runs,
:func:`~torch_advbandit.experiments.runner.play` writes its state — the policy's ``state_dict``
(round, generator, learned state), the regret accumulators and the trajectory so far — every
``every_seconds`` to ``out_dir/checkpoints/<key>.pt``, atomically. The next run of the same trial
loads it and plays only the remaining rounds: the record is the one an uninterrupted run makes, bit
for bit (the policy's state continues identically and the environment is stateless between rounds).

A snapshot is used only if it is whole and was made for this trial by the current code: its
``key`` and ``stream`` (:mod:`~torch_advbandit.experiments.streams`) must match, the policy's
settings must print the same (they are stored as their ``repr``: a snapshot holds plain data only,
so a policy that gains a constructor argument no longer continues older snapshots) and the policy
must accept the state. Anything else is ignored with a ``RuntimeWarning`` and the trial starts from round
0; the snapshot is overwritten at the next save. Snapshots are state, never results: the sweep
deletes a trial's snapshot once its record is written.

Workers that do not see the results folder (Ray tasks on other machines) use
:class:`RelayedCheckpoint`: the worker sends each snapshot's bytes to the driver, which writes the
file, and the driver hands a re-run the bytes of the last one. The same checks apply on load.
"""

from __future__ import annotations

import io
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

from .._validation import check_positive
from .records import atomic_file

#: The folder of the snapshots under a results folder.
CHECKPOINTS = "checkpoints"
#: Version of the snapshot layout; a snapshot of another layout is ignored.
CHECKPOINT_FORMAT = 1


class TrialCheckpoint:
    """The snapshot file of one trial: when to write it, and how to read it back safely.

    Args:
        path: the file (``<out_dir>/checkpoints/<key>.pt``).
        key: the trial's key; stored and compared on load.
        stream: the trial's stream (the versions of the code that decide its results); compared on load.
        every_seconds: wall time between two snapshots (``0``: after every round).

    Example:
        >>> import tempfile
        >>> path = Path(tempfile.mkdtemp()) / "trial.pt"
        >>> checkpoint = TrialCheckpoint(path, "trial", "adaptive@1+uniform@1", every_seconds=0)
        >>> checkpoint.due(), checkpoint.load()
        (True, None)
        >>> checkpoint.save({"t": 3})
        >>> checkpoint.load()["t"]
        3
        >>> TrialCheckpoint(path, "trial", "adaptive@1+uniform@2").load() is None  # other code: ignored
        True
    """

    def __init__(self, path: str | Path, key: str, stream: str, *, every_seconds: float = 600.0) -> None:
        self.path = Path(path)
        self.key = key
        self.stream = stream
        self.every_seconds = check_positive(every_seconds, "every_seconds", allow_zero=True)
        self._last = time.monotonic()

    def due(self) -> bool:
        """True when ``every_seconds`` have passed since the last snapshot (or since this object was made)."""
        return time.monotonic() - self._last >= self.every_seconds

    def save(self, state: dict[str, Any]) -> None:
        """Write ``state`` (tensors, numbers, strings, lists and dicts of them) atomically."""
        self._write({"format": CHECKPOINT_FORMAT, "key": self.key, "stream": self.stream, "state": state})
        self._last = time.monotonic()

    def load(self) -> dict[str, Any] | None:
        """The saved state, or ``None``: no snapshot, or one that is damaged, of another trial or of other code."""
        try:
            payload = self._read()
        except Exception as exc:  # noqa: BLE001 - any unreadable file is a damaged snapshot
            return self.ignore(f"it does not load ({type(exc).__name__})")
        if payload is None:
            return None
        if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
            return self.ignore("its layout is not this code's")
        if payload.get("key") != self.key:
            return self.ignore(f"it belongs to {payload.get('key')!r}")
        if payload.get("stream") != self.stream:
            return self.ignore(f"it was made by other code ({payload.get('stream')!r}, now {self.stream!r})")
        state = payload.get("state")
        return state if isinstance(state, dict) else self.ignore("it holds no state")

    def _write(self, payload: dict[str, Any]) -> None:
        with atomic_file(self.path, "wb") as fh:
            torch.save(payload, fh)

    def _read(self) -> Any:
        return torch.load(self.path, map_location="cpu", weights_only=True) if self.path.exists() else None

    def ignore(self, reason: str) -> None:
        """Warn that the snapshot is not used (``reason``): the trial starts from round 0. Returns ``None``."""
        warnings.warn(
            f"checkpoint {self.path.name} not used: {reason}; the trial starts from round 0", RuntimeWarning, 3
        )


class RelayedCheckpoint(TrialCheckpoint):
    """A trial's snapshots kept by someone else: each one is sent as bytes, the last one is given back.

    For workers that do not see the results folder (Ray tasks on other machines): ``send(key,
    data)`` carries each snapshot to the driver, which writes ``data`` to the trial's file
    (:func:`checkpoint_path`); a re-run is given that file's bytes as ``saved``. What is loaded
    passes :meth:`TrialCheckpoint.load`'s checks, so damaged bytes or another trial's snapshot are
    ignored with a ``RuntimeWarning``.

    Args:
        key: the trial's key.
        stream: the trial's stream.
        saved: the bytes of the last snapshot (``None``: start from round 0).
        send: called with ``(key, data)`` for every new snapshot.
        every_seconds: wall time between two snapshots.

    Example:
        >>> sent = []
        >>> checkpoint = RelayedCheckpoint("trial", "s@1", None, lambda key, data: sent.append(data), every_seconds=0)
        >>> checkpoint.load() is None
        True
        >>> checkpoint.save({"t": 3})
        >>> RelayedCheckpoint("trial", "s@1", sent[-1], print).load()["t"]
        3
    """

    def __init__(
        self,
        key: str,
        stream: str,
        saved: bytes | None,
        send: Callable[[str, bytes], Any],
        *,
        every_seconds: float = 600.0,
    ) -> None:
        if saved is not None and not isinstance(saved, bytes):
            raise TypeError(f"saved must be bytes or None, got {type(saved).__name__}")
        super().__init__(Path(CHECKPOINTS) / f"{key}.pt", key, stream, every_seconds=every_seconds)
        self._saved = saved
        self._send = send

    def _write(self, payload: dict[str, Any]) -> None:
        buffer = io.BytesIO()
        torch.save(payload, buffer)
        self._send(self.key, buffer.getvalue())

    def _read(self) -> Any:
        if self._saved is None:
            return None
        return torch.load(io.BytesIO(self._saved), map_location="cpu", weights_only=True)


def checkpoint_path(out_dir: str | Path, key: str) -> Path:
    """Where the snapshot of the trial ``key`` lives under the results folder ``out_dir``.

    Example:
        >>> checkpoint_path("out", "s1-se-uniform-T50-seed0-F1000x100-cpu").as_posix()
        'out/checkpoints/s1-se-uniform-T50-seed0-F1000x100-cpu.pt'
    """
    return Path(out_dir) / CHECKPOINTS / f"{key}.pt"
