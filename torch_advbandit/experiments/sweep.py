"""Run many trials at once: local worker processes by default, or a Ray cluster; nothing is lost.

Every backend follows one protocol. The driver lists the configurations without a current record,
hands each to a worker, and writes each finished record itself, atomically, under
``out_dir/trials`` (so a Ray cluster without a shared file system works too); at the end the
records are compacted into ``out_dir/trials.jsonl.xz``
(:class:`~torch_advbandit.experiments.store.RecordStore`). A re-run skips the recorded trials;
killing the sweep at any moment loses only the trials in flight. Workers report their rounds
through a queue, which drives one progress bar per running trial and an overall bar.
"""

from __future__ import annotations

import os
import queue as queue_module
import signal
import sys
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .records import TrialRecord
from .store import RecordStore, pending_configs
from .trials import Trial, config_from_dict

BACKENDS = ("local", "ray", "serial")


def execute_trial(config: dict[str, Any], threads: int | None = None, progress_queue: Any = None) -> dict[str, Any]:
    """Worker entry point: run one trial and return its record as a plain dict.

    ``progress_queue`` (anything with ``put``) receives ``(key, rounds_done, rounds_total)`` about
    fifty times per trial.

    Example:
        >>> from dataclasses import asdict
        >>> from torch_advbandit.experiments import TrialConfig
        >>> config = TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5)
        >>> len(execute_trial(asdict(config))["expected_regret"])
        5
    """
    import torch

    if threads is not None:
        torch.set_num_threads(threads)
    trial = config_from_dict(config)
    total = trial.rounds_to_run
    every = max(1, total // 50)

    def on_round(t: int) -> None:
        if progress_queue is not None and ((t + 1) % every == 0 or t + 1 == total):
            progress_queue.put((trial.key, t + 1, total))

    return asdict(trial.run(on_round=on_round))


class _Progress:
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


def _drain(q: Any, progress: _Progress) -> None:
    while True:
        try:
            message = q.get_nowait()
        except (queue_module.Empty, Exception):  # ray.util.queue.Empty is not queue.Empty
            return
        progress.message(*message)


def run_sweep(
    configs: Iterable[Trial],
    out_dir: str | Path,
    *,
    backend: str = "local",
    workers: int | None = None,
    threads_per_worker: int | None = None,
    address: str | None = None,
    progress: bool = True,
    name: str = "sweep",
    compact: bool = True,
    drop_stale: bool = False,
) -> list[TrialRecord]:
    """Run every configuration without a current record under ``out_dir``; return all records.

    Args:
        configs: the trials (duplicates are run once).
        out_dir: results folder; records go to ``out_dir/trials/<key>.json`` as they finish.
        backend: ``"local"`` (worker processes on this machine), ``"ray"`` (tasks on a Ray
            cluster; ``pip install torch_advbandit[ray]``) or ``"serial"`` (this process, one
            trial after another: the driver of ``torch-advbandit run``).
        workers: local processes, or CPUs for a local Ray instance (default: the CPU count,
            at most the number of pending trials).
        threads_per_worker: torch threads in each worker (default: CPUs / workers, at least 1),
            so workers do not oversubscribe the cores. Per-round times depend on it; it is
            stored in every record's ``environment``.
        address: Ray cluster address (``"auto"`` or ``"ray://host:10001"``); a local Ray
            instance is started when omitted.
        progress: show the overall and per-trial progress bars.
        name: the overall bar's label.
        compact: merge the records into ``out_dir/trials.jsonl.xz`` at the end (also after
            failures: the finished trials are archived).
        drop_stale: when compacting, delete the records made by other code (default: kept, never served).

    Returns:
        The records of every configuration, in the order given.

    Raises:
        RuntimeError: after the sweep, if some trials failed (the others are kept).

    Example:
        >>> import tempfile
        >>> from torch_advbandit.experiments import TrialConfig
        >>> cfg = TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5)
        >>> [r.trial.key for r in run_sweep([cfg], tempfile.mkdtemp(), backend="serial", progress=False)]
        ['s1-se-uniform-T5-seed0-F10x5-cpu']
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend must be one of {BACKENDS}, got {backend!r}")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    store = RecordStore(out_dir)
    configs, todo = pending_configs(configs, out_dir)
    failures = []
    if todo:
        cpus = os.cpu_count() or 1
        workers = min(workers or cpus, len(todo))
        threads = threads_per_worker or max(1, cpus // workers)
        bars = _Progress(todo, progress, name)
        try:
            with _sigterm_as_interrupt():
                failures = _run_backend(backend, todo, store, bars, workers, threads, address)
        finally:
            bars.close()
    if compact:
        store.compact(drop_stale=drop_stale)
    if failures:
        lines = "\n".join(f"  {key}: {err}" for key, err in failures)
        raise RuntimeError(f"{len(failures)} trial(s) failed (finished trials are kept):\n{lines}")
    records = [store.get(c) for c in configs]
    if any(r is None for r in records):  # pragma: no cover - a record removed while the sweep ran
        raise RuntimeError(f"records under {out_dir} changed during the sweep; run it again")
    return records


def _run_backend(backend, todo, store, bars, workers, threads, address) -> list[tuple[str, str]]:
    if backend == "serial":
        return _run_serial(todo, store, bars)
    if backend == "local":
        return _run_local(todo, store, bars, workers, threads)
    return _run_ray(todo, store, bars, workers, threads, address)


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """While the sweep runs, SIGTERM (``kill``, ``timeout``, a batch scheduler) acts like Ctrl-C.

    Python's default SIGTERM ends the driver at once, and its worker processes would run on,
    orphaned, until their trials finish, with nobody left to record them. Raised as
    ``KeyboardInterrupt`` instead, it takes the interrupt path: the workers are terminated and the
    records already written stay. A handler the caller installed is left alone, and so is any
    thread but the main one (signals are delivered there only).
    """
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGTERM) not in (
        signal.SIG_DFL,
        None,
    ):
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _save(result: dict[str, Any], store: RecordStore, bars: _Progress) -> None:
    record = TrialRecord(**result)
    store.put(record)
    bars.finished(record.trial.key)


class _DirectQueue:
    def __init__(self, bars: _Progress) -> None:
        self.bars = bars

    def put(self, message) -> None:
        self.bars.message(*message)


def _run_serial(todo, store, bars) -> list[tuple[str, str]]:
    failures = []
    for config in todo:
        try:
            result = execute_trial(asdict(config), None, _DirectQueue(bars))
            _save(result, store, bars)
        except Exception as exc:  # noqa: BLE001 - reported after the sweep, others still run
            failures.append((config.key, repr(exc)))
            bars.finished(config.key)
    return failures


def _die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when the driver ``parent`` dies, whatever killed it.

    On Linux the kernel delivers ``SIGKILL`` on the parent's death (``prctl(PR_SET_PDEATHSIG)``), so
    even a ``kill -9`` of the driver leaves no worker running; a parent that died before the call
    is caught by comparing ``getppid()``. Elsewhere this does nothing (SIGTERM and Ctrl-C still stop
    the workers through the interrupt path).
    """
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG = 1
        except (OSError, AttributeError):  # pragma: no cover - no prctl in this libc
            return
        if os.getppid() != parent:
            os._exit(1)


def _run_local(todo, store, bars, workers, threads) -> list[tuple[str, str]]:
    import multiprocessing
    from multiprocessing.managers import SyncManager

    context = multiprocessing.get_context("spawn")  # fork is unsafe with torch's thread pools
    failures = []
    manager = SyncManager(ctx=context)
    manager.start(_die_with_parent, (os.getpid(),))  # the queue's server process dies with the driver too
    with manager:  # shut down on the way out
        q = manager.Queue()
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_die_with_parent, initargs=(os.getpid(),)
        )
        with pool:
            futures = {pool.submit(execute_trial, asdict(c), threads, q): c for c in todo}
            try:
                while futures:
                    done, _ = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
                    _drain(q, bars)
                    for future in done:
                        config = futures.pop(future)
                        try:
                            _save(future.result(), store, bars)
                        except Exception as exc:  # noqa: BLE001
                            failures.append((config.key, repr(exc)))
                            bars.finished(config.key)
            except BaseException:  # Ctrl-C, SIGTERM (see _sigterm_as_interrupt): stop the workers too
                processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown clears it
                pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()
                raise
    return failures


def _run_ray(todo, store, bars, workers, threads, address) -> list[tuple[str, str]]:
    try:
        import ray
        from ray.util.queue import Queue
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise RuntimeError("backend 'ray' needs Ray: pip install 'torch_advbandit[ray]'") from exc

    started = not ray.is_initialized()
    if started:
        if address is None:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False)
    failures = []
    try:
        q = Queue()
        task = ray.remote(num_cpus=1)(execute_trial)
        refs = {task.remote(asdict(c), threads, q): c for c in todo}
        try:
            while refs:
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.2)
                _drain(q, bars)
                for ref in ready:
                    config = refs.pop(ref)
                    try:
                        _save(ray.get(ref), store, bars)
                    except Exception as exc:  # noqa: BLE001
                        failures.append((config.key, repr(exc)))
                        bars.finished(config.key)
        except BaseException:
            for ref in refs:
                ray.cancel(ref, force=True)
            raise
    finally:
        if started:
            ray.shutdown()
    return failures


def run_trials(configs: Iterable[Trial], out_dir: str | Path, *, progress: bool = True) -> list[TrialRecord]:
    """Deprecated alias of ``run_sweep(configs, out_dir, backend="serial", progress=progress)``.

    Example:
        >>> import tempfile, warnings
        >>> from torch_advbandit.experiments import TrialConfig
        >>> cfg = TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5)
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", DeprecationWarning)
        ...     len(run_trials([cfg], tempfile.mkdtemp(), progress=False))
        1
    """
    import warnings

    warnings.warn("run_trials is run_sweep(..., backend='serial')", DeprecationWarning, stacklevel=2)
    return run_sweep(configs, out_dir, backend="serial", progress=progress, name="trials")
