"""The sweep driver's messages from its workers: progress bars, and snapshots relayed by Ray workers.

A worker puts ``(key, rounds_done, rounds_total)`` on its queue about fifty times per trial, and
``(key, data)`` for each snapshot of a trial whose results folder it does not see
(:class:`~torch_advbandit.experiments.checkpoints.RelayedCheckpoint`); the driver drains the queue.
"""

from __future__ import annotations

import queue as queue_module
from collections.abc import Callable
from typing import Any

from .trials import Trial


class Progress:
    """An overall bar (trials) plus one bar per running trial, fed by worker messages."""

    def __init__(self, todo: list[Trial], enabled: bool, name: str) -> None:
        from tqdm.auto import tqdm

        self._tqdm = tqdm
        self.enabled = enabled
        self.overall = tqdm(total=len(todo), unit="trial", desc=name, disable=not enabled, dynamic_ncols=True)
        self.bars: dict[str, Any] = {}
        self.free = list(range(1, 64))

    def message(self, key: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        bar = self.bars.get(key)
        if bar is None:
            position = self.free.pop(0) if self.free else None
            bar = self._tqdm(total=total, desc=key, unit="round", leave=False, position=position, dynamic_ncols=True)
            self.bars[key] = bar
        bar.update(done - bar.n)

    def finished(self, key: str) -> None:
        bar = self.bars.pop(key, None)
        if bar is not None:
            if bar.pos is not None and abs(bar.pos) not in self.free:
                self.free.insert(0, abs(bar.pos))
            bar.close()
        self.overall.update(1)

    def close(self) -> None:
        for bar in self.bars.values():
            bar.close()
        self.overall.close()


def drain(q: Any, progress: Progress, on_snapshot: Callable[[str, bytes], None] | None = None) -> None:
    """Handle every message waiting in ``q``: progress to the bars, snapshots to ``on_snapshot``."""
    while True:
        try:
            message = q.get_nowait()
        except (queue_module.Empty, Exception):  # ray.util.queue.Empty is not queue.Empty
            return
        if len(message) == 2:
            if on_snapshot is not None:
                on_snapshot(*message)
        else:
            progress.message(*message)


class DirectQueue:
    """The serial backend's queue: messages go straight to the bars."""

    def __init__(self, bars: Progress) -> None:
        self.bars = bars

    def put(self, message) -> None:
        self.bars.message(*message)
