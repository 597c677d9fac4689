"""The records of one results folder: loose files while a sweep runs, one compressed archive at rest.

A sweep writes each finished record to ``out/trials/<key>.json`` (atomic, so concurrent workers,
a crash or a Ray cluster lose nothing but the trials in flight); :meth:`RecordStore.compact` then
merges the loose files into ``out/trials.jsonl.xz`` — one JSON record per line, xz-compressed,
rewritten atomically under a lock — and removes them. A record is served only when it is whole
(:meth:`~torch_advbandit.experiments.records.TrialRecord.validate`), belongs to the configuration
asked for, and was made by the current code (its ``stream``, :mod:`~torch_advbandit.experiments.streams`), or by
an earlier version whose output the current one reproduces for it
(:func:`~torch_advbandit.experiments.streams.reproduces`).
A damaged loose file is moved aside (``.corrupt``), a damaged archive line goes to
``out/trials.corrupt.jsonl`` at the next compaction; a stale record stays stored until a re-run
replaces it, and is never served.
"""

from __future__ import annotations

import json
import lzma
import os
import warnings
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from .records import TrialRecord, atomic_file, record_path
from .streams import reproduces
from .trials import Trial, config_from_dict

#: The compact archive of a results folder.
ARCHIVE = "trials.jsonl.xz"
#: Where damaged archive lines are kept for inspection.
CORRUPT = "trials.corrupt.jsonl"


class RecordStore:
    """The records under ``out_dir``: ``out_dir/trials.jsonl.xz`` plus loose ``out_dir/trials/*.json``.

    Example:
        >>> import tempfile
        >>> from torch_advbandit.experiments import TrialConfig
        >>> store = RecordStore(tempfile.mkdtemp())
        >>> config = TrialConfig(1, "se", "uniform", 5, 0, num_functions=10, num_centres=5)
        >>> _ = store.put(config.run())
        >>> store.compact().name, store.get(config).trial == config
        ('trials.jsonl.xz', True)
    """

    def __init__(self, out_dir: str | Path) -> None:
        self.out_dir = Path(out_dir)
        self.loose_dir = self.out_dir / "trials"
        self.archive = self.out_dir / ARCHIVE
        self._lines: dict[str, str] | None = None
        self.stale: list[str] = []

    def _archived(self) -> dict[str, str]:
        """``key → line`` of the archive (read once); lines without a usable configuration map to ``""``."""
        if self._lines is None:
            self._lines = {}
            if self.archive.exists():
                for i, line in enumerate(_read_lines(self.archive)):
                    key = _line_key(line)
                    if key is None:
                        warnings.warn(f"damaged archived record (line {i + 1} of {ARCHIVE})", RuntimeWarning, 3)
                    self._lines[key or f"<damaged line {i}>"] = line
        return self._lines

    def get(self, config: Trial) -> TrialRecord | None:
        """The current, whole record of ``config``, or ``None`` (missing, damaged or stale).

        A damaged loose file is moved aside with a ``RuntimeWarning``; the key of a stale record
        (another ``stream``) is added to :attr:`stale`.
        """
        path = record_path(self.loose_dir, config)
        if path.exists():
            record = _checked(path.read_text, config, path.name)
            if record is None:
                _move_aside(path)
                return None
        else:
            line = self._archived().get(config.key)
            if line is None:
                return None
            record = _checked(lambda: line, config, f"archived {config.key}")
            if record is None:
                warnings.warn(f"damaged archived record {config.key}: the trial will run again", RuntimeWarning, 3)
                return None
        if not reproduces(config.stream, record):
            self.stale.append(config.key)
            return None
        return record

    def records(self) -> list[TrialRecord]:
        """Every record this folder serves, sorted by key: whole, current (the code's ``stream``), one per trial.

        A loose file takes its trial's place in the archive, as in :meth:`get`. Damaged and stale
        records are left out (a damaged one with a ``RuntimeWarning``; the keys of stale ones are
        added to :attr:`stale`); nothing under the folder is moved or rewritten, so a read-only
        folder can be read.
        """
        found = self._parsed_archive()
        damaged = [key for key, record in found.items() if record is None and not key.startswith("<damaged")]
        for path, record in self._loose():
            if record is None:
                damaged.append(path.name)
            else:
                found[record.trial.key] = record
        if damaged:
            warnings.warn(
                f"{len(damaged)} damaged record(s) under {self.out_dir} left out (e.g. {damaged[0]})", RuntimeWarning, 2
            )
        current, stale = [], []
        for record in (r for r in found.values() if r is not None):
            (current if reproduces(record.trial.stream, record) else stale).append(record)  # one check a record
        self.stale.extend(r.trial.key for r in stale)
        return sorted(current, key=lambda r: r.trial.key)

    def _parsed_archive(self) -> dict[str, TrialRecord | None]:
        """``key → record`` of the archive, each line read once (``None``: damaged)."""
        return {key: _checked(lambda line=line: line) for key, line in self._archived().items()}

    def _loose(self) -> list[tuple[Path, TrialRecord | None]]:
        """The loose files, sorted by name, each with its record (``None``: damaged)."""
        paths = sorted(self.loose_dir.glob("*.json")) if self.loose_dir.exists() else []
        return [(path, _checked(path.read_text, origin=path.name)) for path in paths]

    def merge(self, source: str | Path) -> int:
        """Copy in the records of the results folder ``source`` that this folder does not serve; how many.

        Only what ``RecordStore(source).records()`` serves is copied (whole, current records), and
        only for trials without a current record here: a record of this folder is never replaced.
        The copies are loose files (atomic writes); :meth:`compact` archives them. ``source`` is
        only read.

        Raises:
            ValueError: ``source`` is not a folder.

        Example:
            >>> import tempfile
            >>> from torch_advbandit.experiments import TrialConfig
            >>> a, b = RecordStore(tempfile.mkdtemp()), RecordStore(tempfile.mkdtemp())
            >>> configs = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5) for s in (0, 1)]
            >>> _ = a.put(configs[0].run()); _ = b.put(configs[1].run())
            >>> a.merge(b.out_dir), a.merge(b.out_dir), [r.trial.seed for r in a.records()]
            (1, 0, [0, 1])
        """
        source = Path(source)
        if not source.is_dir():
            raise ValueError(f"source must be a results folder, got {str(source)!r} (not a folder)")
        if source.resolve() == self.out_dir.resolve():
            return 0
        missing = [r for r in RecordStore(source).records() if self.get(r.trial) is None]
        for record in missing:
            self.put(record)
        return len(missing)

    def put(self, record: TrialRecord) -> Path:
        """Write ``record`` as a loose file (atomically); :meth:`compact` archives it."""
        return record.save(self.loose_dir)

    def compact(self, *, drop_stale: bool = False) -> Path | None:
        """Merge the loose records into the archive and remove them; the archive path (``None``: no records).

        A loose record replaces an archived one of the same key. Damaged loose files are moved
        aside; damaged archive lines are appended to ``trials.corrupt.jsonl``. With ``drop_stale``,
        records made by other versions of the code are deleted, so the archive holds only what the
        current code reproduces. Lines are sorted by key, so the archive's bytes depend only on its
        records.
        """
        with _locked(self.out_dir / ".trials.lock"):
            self._lines = None
            lines = dict(self._archived())
            parsed = self._parsed_archive()
            damaged = [lines.pop(k) for k, record in parsed.items() if record is None]
            merged = []
            for path, record in self._loose():
                if record is None:
                    _move_aside(path)
                    continue
                key = record.trial.key
                lines[key], parsed[key] = json.dumps(record.to_dict(), separators=(",", ":")), record
                merged.append(path)
            stale = [k for k in lines if drop_stale and not reproduces(parsed[k].trial.stream, parsed[k])]
            for key in stale:
                del lines[key]
            if damaged:
                with open(self.out_dir / CORRUPT, "a") as fh:
                    fh.writelines(line + "\n" for line in damaged)
                warnings.warn(f"{len(damaged)} damaged archived record(s) moved to {CORRUPT}", RuntimeWarning, 2)
            if not lines:
                self._lines = {}
                return None
            if merged or damaged or stale or not self.archive.exists():
                with atomic_file(self.archive, "wb") as fh:
                    fh.write(lzma.compress("".join(lines[k] + "\n" for k in sorted(lines)).encode()))
            for path in merged:
                path.unlink()
            if self.loose_dir.exists() and not any(self.loose_dir.iterdir()):
                self.loose_dir.rmdir()
            self._lines = lines
            return self.archive


def pending_configs(configs: Iterable[Trial], out_dir: str | Path) -> tuple[list, list]:
    """``(all, todo)``: the de-duplicated configurations and those without a current record under ``out_dir``.

    Stale records (made by other versions of the code) count as pending, with one ``RuntimeWarning``
    that says how many.

    Example:
        >>> from torch_advbandit.experiments import TrialConfig
        >>> configs = [TrialConfig(1, "se", "uniform", 5, s, num_functions=10, num_centres=5) for s in (0, 1, 1)]
        >>> import tempfile
        >>> out = Path(tempfile.mkdtemp())
        >>> _ = RecordStore(out).put(configs[0].run())
        >>> every, todo = pending_configs(configs, out)
        >>> len(every), [c.seed for c in todo]
        (2, [1])
    """
    store = RecordStore(out_dir)
    configs = list(dict.fromkeys(configs))
    todo = [c for c in configs if store.get(c) is None]
    if store.stale:
        warnings.warn(
            f"{len(store.stale)} stale record(s) under {out_dir} were made by other versions of the code "
            f"(e.g. {store.stale[0]}): those trials run again",
            RuntimeWarning,
            stacklevel=2,
        )
    return configs, todo


def _checked(read, config: Trial | None = None, origin: str = "record") -> TrialRecord | None:
    """The record ``read()`` returns as JSON if it is whole and (when given) of ``config``; else ``None``."""
    try:
        record = TrialRecord.from_json(read(), origin)
        trial = config_from_dict(record.config)
        record.validate(trial.rounds_to_run)
        return record if config is None or trial == config else None
    except (OSError, ValueError, TypeError, KeyError, RecursionError):  # JSONDecodeError is a ValueError
        return None


def _line_key(line: str) -> str | None:
    try:
        return config_from_dict(json.loads(line)["config"]).key
    except (ValueError, TypeError, KeyError, RecursionError):
        return None


def _read_lines(path: Path) -> list[str]:
    """The archive's lines; an archive that does not decompress is moved aside and reads as empty."""
    try:
        return [line for line in lzma.decompress(path.read_bytes()).decode().split("\n") if line]
    except (lzma.LZMAError, UnicodeDecodeError, EOFError):
        _move_aside(path)
        return []


def _move_aside(path: Path) -> None:
    """Rename a damaged ``path`` to ``<name>.corrupt[-k]`` (never deleted) with a ``RuntimeWarning``."""
    target = path.with_name(path.name + ".corrupt")
    k = 1
    while target.exists():
        target = path.with_name(f"{path.name}.corrupt-{k}")
        k += 1
    os.replace(path, target)
    warnings.warn(
        f"damaged record {path.name} moved to {target.name}; the trial will run again", RuntimeWarning, stacklevel=4
    )


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """An exclusive ``flock`` on ``path`` (POSIX), so two sweeps never rewrite one archive at once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        try:
            import fcntl
        except ImportError:  # pragma: no cover - Windows: no advisory locks
            yield
            return
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
