"""Run many trials at once: local worker processes by default, or a Ray cluster; nothing is lost.

Every backend follows one protocol. The driver lists the configurations without a current record,
hands each to a worker, and writes each finished record itself, atomically, under
``out_dir/trials`` (so a Ray cluster without a shared file system works too); at the end the
records are compacted into ``out_dir/trials.jsonl.xz``
(:class:`~torch_advbandit.experiments.store.RecordStore`). A re-run skips the recorded trials;
killing the sweep at any moment loses only the trials in flight, and of a resumable trial kind
only the rounds since its last snapshot (:mod:`~torch_advbandit.experiments.checkpoints`).
Workers report their rounds through a queue, which drives one progress bar per running trial and
an overall bar.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ._processes import die_with_parent, sigterm_as_interrupt
from ._progress import DirectQueue, Progress, drain
from .checkpoints import RelayedCheckpoint, TrialCheckpoint, checkpoint_path
from .records import TrialRecord, atomic_file
from .store import RecordStore, pending_configs
from .trials import Trial, config_from_dict

BACKENDS = ("local", "ray", "serial")


def execute_trial(
    config: dict[str, Any],
    threads: int | None = None,
    progress_queue: Any = None,
    checkpoints: tuple[str | None, float] | None = None,
    saved: bytes | None = None,
) -> dict[str, Any]:
    """Worker entry point: run one trial and return its record as a plain dict.

    ``progress_queue`` (anything with ``put``) receives ``(key, rounds_done, rounds_total)`` about
    fifty times per trial. ``checkpoints = (out_dir, every_seconds)`` saves a resumable trial
    kind's state to ``out_dir/checkpoints/<key>.pt`` every ``every_seconds`` and continues from a
    usable snapshot there (:mod:`~torch_advbandit.experiments.checkpoints`). With ``out_dir =
    None`` (a worker that does not see the results folder) each snapshot goes to
    ``progress_queue`` as ``(key, data)`` instead, and the trial continues from ``saved``, the
    bytes of its last snapshot, when given
    (:class:`~torch_advbandit.experiments.checkpoints.RelayedCheckpoint`).

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

    if checkpoints is None or not getattr(trial, "resumable", False):
        return asdict(trial.run(on_round=on_round))
    out_dir, seconds = checkpoints
    if out_dir is not None:
        checkpoint = TrialCheckpoint(
            checkpoint_path(out_dir, trial.key), trial.key, trial.stream, every_seconds=seconds
        )
    elif progress_queue is None:
        raise ValueError("checkpoints without a results folder are relayed: progress_queue is needed")
    else:
        relay = lambda key, data: progress_queue.put((key, data))  # noqa: E731
        checkpoint = RelayedCheckpoint(trial.key, trial.stream, saved, relay, every_seconds=seconds)
    return asdict(trial.run(on_round=on_round, checkpoint=checkpoint))


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
    checkpoint_every: float | None = 600.0,
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
        checkpoint_every: seconds between two snapshots of a running trial of a resumable kind
            (adversarial trials), under ``out_dir/checkpoints``; a re-run continues a stopped trial
            from its snapshot (:mod:`~torch_advbandit.experiments.checkpoints`). ``None`` turns them
            off. Ray workers need not see ``out_dir``: they send their snapshots to the driver,
            which writes them there and hands a re-run the last one.

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
    if checkpoint_every is not None and (isinstance(checkpoint_every, bool) or not checkpoint_every >= 0):
        raise ValueError(f"checkpoint_every must be None or a non-negative number, got {checkpoint_every!r}")
    checkpoints = None if checkpoint_every is None else (str(out_dir), float(checkpoint_every))
    store = RecordStore(out_dir)
    configs, todo = pending_configs(configs, out_dir)
    failures = []
    if todo:
        cpus = os.cpu_count() or 1
        workers = min(workers or cpus, len(todo))
        threads = threads_per_worker or max(1, cpus // workers)
        bars = Progress(todo, progress, name)
        try:
            with sigterm_as_interrupt():
                failures = _run_backend(backend, todo, store, bars, workers, threads, checkpoints, address)
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


def _run_backend(backend, todo, store, bars, workers, threads, checkpoints, address) -> list[tuple[str, str]]:
    if backend == "serial":
        return _run_serial(todo, store, bars, checkpoints)
    if backend == "local":
        return _run_local(todo, store, bars, workers, threads, checkpoints)
    return _run_ray(todo, store, bars, workers, threads, checkpoints, address)


def _save(result: dict[str, Any], store: RecordStore, bars: Progress) -> None:
    record = TrialRecord(**result)
    store.put(record)
    checkpoint_path(store.out_dir, record.trial.key).unlink(missing_ok=True)  # the record supersedes it
    bars.finished(record.trial.key)


def _run_serial(todo, store, bars, checkpoints) -> list[tuple[str, str]]:
    failures = []
    for config in todo:
        try:
            result = execute_trial(asdict(config), None, DirectQueue(bars), checkpoints)
            _save(result, store, bars)
        except Exception as exc:  # noqa: BLE001 - reported after the sweep, others still run
            failures.append((config.key, repr(exc)))
            bars.finished(config.key)
    return failures


def _run_local(todo, store, bars, workers, threads, checkpoints) -> list[tuple[str, str]]:
    import multiprocessing
    from multiprocessing.managers import SyncManager

    context = multiprocessing.get_context("spawn")  # fork is unsafe with torch's thread pools
    failures = []
    manager = SyncManager(ctx=context)
    manager.start(die_with_parent, (os.getpid(),))  # the queue's server process dies with the driver too
    with manager:  # shut down on the way out
        q = manager.Queue()
        pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=die_with_parent, initargs=(os.getpid(),)
        )
        with pool:
            futures = {pool.submit(execute_trial, asdict(c), threads, q, checkpoints): c for c in todo}
            try:
                while futures:
                    done, _ = wait(futures, timeout=0.2, return_when=FIRST_COMPLETED)
                    drain(q, bars)
                    for future in done:
                        config = futures.pop(future)
                        try:
                            _save(future.result(), store, bars)
                        except Exception as exc:  # noqa: BLE001
                            failures.append((config.key, repr(exc)))
                            bars.finished(config.key)
            except BaseException:  # Ctrl-C, SIGTERM (see sigterm_as_interrupt): stop the workers too
                processes = list((getattr(pool, "_processes", None) or {}).values())  # shutdown clears it
                pool.shutdown(wait=False, cancel_futures=True)
                for process in processes:
                    process.terminate()
                raise
    return failures


def _saved_snapshot(out_dir: Path, config: Trial) -> bytes | None:
    """The bytes of ``config``'s snapshot under ``out_dir`` (``None``: none, or not a resumable kind)."""
    path = checkpoint_path(out_dir, config.key)
    return path.read_bytes() if getattr(config, "resumable", False) and path.is_file() else None


def _run_ray(todo, store, bars, workers, threads, checkpoints, address) -> list[tuple[str, str]]:
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
        relay = None if checkpoints is None else (None, checkpoints[1])  # snapshots come back through q
        refs = {
            task.remote(asdict(c), threads, q, relay, _saved_snapshot(store.out_dir, c) if relay else None): c
            for c in todo
        }

        def keep(key: str, data: bytes) -> None:  # a late snapshot of a finished trial is dropped
            if any(c.key == key for c in refs.values()):
                with atomic_file(checkpoint_path(store.out_dir, key), "wb") as fh:
                    fh.write(data)

        try:
            while refs:
                ready, _ = ray.wait(list(refs), num_returns=1, timeout=0.2)
                drain(q, bars, keep)
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
