"""Running a study: each variant is one task — the serialized project (the dict of the project
file) plus its edits — that builds the model, applies the edits through ``Model.set_field``, runs
headless and returns its responses.  Executors: ``"serial"`` (in this process), ``"local"`` (a
``dask.distributed.LocalCluster`` of ``workers`` processes, one thread each, started and closed
here, listening on the loopback interface with TLS credentials made for it alone) or an existing
cluster (a scheduler address ``"tls://HOST:PORT"`` — its credentials come from the dask config,
docs/studies.md — or ``"tcp://HOST:PORT"``, or a ``distributed.Client``).  A scheduler you point
at is trusted: it runs the study's code and sees its models.  A variant that fails is reported with its message; the others go on.

Cancelling (``cancel()`` returns True; polled every ``POLL_S``) cancels every future not yet
finished; on the local cluster the running ones die with its worker processes, on an existing
cluster they finish on their workers and their results are dropped.  BLAS stays single-threaded
inside every run (``solver.simulate``).
"""
from __future__ import annotations

import contextlib
import csv
import io
import json
import logging
import os
import time
import uuid
from dataclasses import dataclass, field

import numpy as np

from ..errors import Cancelled, ModelError, SolverError
from ..io.files import atomic_write
from ..io.project import project_from_dict
from ..model.project_format import project_to_dict
from .spec import Study, apply_edit

POLL_S = 0.1
LOOPBACK = "127.0.0.1"      # the local cluster listens here only, with TLS (local_security)
EXECUTORS = ("serial", "local")


@dataclass
class VariantOutcome:
    """How one variant ended: ``status`` 'ok', 'failed' (``message`` says why) or 'cancelled'."""
    index: int
    values: dict
    status: str
    responses: dict = field(default_factory=dict)
    message: str = ""
    wall_time: float = 0.0
    results_file: str | None = None


@dataclass
class StudyResults:
    """All variants of a study, in variant order."""
    parameters: list
    responses: list
    variants: list
    wall_time: float = 0.0

    def counts(self) -> dict:
        """Number of variants per status."""
        out = {"ok": 0, "failed": 0, "cancelled": 0}
        for v in self.variants:
            out[v.status] += 1
        return out

    def response(self, name) -> np.ndarray:
        """One response over all variants (NaN where the variant did not finish)."""
        return np.array([v.responses.get(name, np.nan) for v in self.variants], dtype=float)

    def parameter(self, path) -> list:
        return [v.values[path] for v in self.variants]

    def table(self) -> tuple[list[str], list[list]]:
        """Header and rows: variant, status, each parameter, each response, message."""
        header = ["variant", "status", *self.parameters, *self.responses, "message"]
        rows = [[v.index, v.status, *(v.values[p] for p in self.parameters),
                 *(v.responses.get(r, np.nan) for r in self.responses), v.message] for v in self.variants]
        return header, rows

    def to_csv(self, target):
        """Write the table as CSV to a path or a text stream (numbers with full precision, vectors
        as JSON, NaN where a variant has no value)."""
        if not hasattr(target, "write"):         # a path: written atomically, never through a link
            text = io.StringIO(newline="")
            self.to_csv(text)
            atomic_write(target, text.getvalue().encode("utf-8"), keep_backup=False)
            return
        header, rows = self.table()
        writer = csv.writer(target)
        writer.writerow(header)
        writer.writerows([[_cell(x) for x in row] for row in rows])


# ---- Public API ---------------------------------------------------------------------------------
def run_study(study: Study, executor="local", workers=2, progress=None, cancel=None) -> StudyResults:
    """Run every variant of ``study``; returns :class:`StudyResults`.

    ``executor``: 'serial', 'local' (LocalCluster of ``workers`` processes) or a Dask scheduler
    address / ``distributed.Client``.  ``progress(done, total, outcome)`` is called as each variant
    ends; ``cancel()`` returning True stops the study (remaining variants are 'cancelled').
    Raises ModelError for a bad executor or an unreachable scheduler."""
    start = time.perf_counter()
    project = project_to_dict(study.model)
    tasks = [(i, values, study.edits(values)) for i, values in enumerate(study.variants())]
    args = (study.responses, study.results_dir, study.model.base_dir)
    if study.results_dir:
        os.makedirs(study.results_dir, exist_ok=True)
    if executor == "serial":
        outcomes = _run_serial(project, tasks, args, progress, cancel)
    else:
        outcomes = _run_dask(project, tasks, args, executor, workers, progress, cancel)
    return StudyResults(study.paths, [r.name for r in study.responses], outcomes,
                        time.perf_counter() - start)


def run_variant(project: dict, index: int, values: dict, edits, responses, results_dir=None,
                base_dir="", cancel=None) -> VariantOutcome:
    """One variant, headless (what each Dask task runs); ``base_dir``: the project file's folder
    (relative modes files start there).  Never raises: failures are outcomes."""
    from ..analysis.dynamics import simulate
    start = time.perf_counter()

    def outcome(status, **kw):
        return VariantOutcome(index, values, status, wall_time=time.perf_counter() - start, **kw)

    results_file = None
    try:
        model = project_from_dict(project)
        model.base_dir = base_dir
        for path, value in edits:
            apply_edit(model, path, value)
        results = simulate(model, cancel=cancel) if any(r.needs_run for r in responses) else None
        results_file = _save(results, results_dir, index)
        return outcome("ok", responses={r.name: r.evaluate(results, model) for r in responses},
                       results_file=results_file)
    except ModelError as exc:
        return outcome("failed", message=str(exc))
    except SolverError as exc:          # the results up to the failure are kept, like any failed run
        return outcome("failed", message=str(exc), results_file=_save(exc.results, results_dir, index))
    except Cancelled:
        return outcome("cancelled", message="cancelled")
    except Exception as exc:  # noqa: BLE001 — one broken variant never stops the study
        return outcome("failed", message=f"internal error: {type(exc).__name__}: {exc}",
                       results_file=results_file)


# ---- executors ----------------------------------------------------------------------------------
def _run_serial(project, tasks, args, progress, cancel):
    outcomes = []
    for i, values, edits in tasks:
        if cancel is not None and cancel():
            outcomes.append(VariantOutcome(i, values, "cancelled", message="cancelled"))
            continue
        outcomes.append(run_variant(project, i, values, edits, *args, cancel=cancel))
        _report(progress, len(outcomes), len(tasks), outcomes[-1])
    return outcomes


def _run_dask(project, tasks, args, executor, workers, progress, cancel):
    from distributed import wait
    with _client(executor, workers) as client:
        shared = client.scatter(project, broadcast=True, hash=False)
        tag = uuid.uuid4().hex[:8]
        futures = {client.submit(run_variant, shared, i, values, edits, *args, key=f"mbs-variant-{tag}-{i}",
                                 pure=False): (i, values) for i, values, edits in tasks}
        outcomes, pending = {}, set(futures)
        while pending:
            if cancel is not None and cancel():
                client.cancel(list(pending))
                outcomes.update({futures[f][0]: VariantOutcome(*futures[f], "cancelled", message="cancelled")
                                 for f in pending})
                break
            try:
                done, pending = wait(pending, timeout=POLL_S, return_when="FIRST_COMPLETED")
            except TimeoutError:
                continue
            for f in done:
                i, values = futures[f]
                outcomes[i] = (f.result() if f.status == "finished" else VariantOutcome(
                    i, values, "failed", message=f"worker failed: {f.exception()}" if f.status == "error"
                    else f"task {f.status} by the cluster"))
                _report(progress, len(outcomes), len(tasks), outcomes[i])
        client.cancel([shared])
    return [outcomes[i] for i in sorted(outcomes)]


@contextlib.contextmanager
def _client(executor, workers):
    """A distributed.Client for the executor (closing what it started)."""
    from distributed import Client, LocalCluster
    if isinstance(executor, Client):
        yield executor
    elif executor == "local":
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise ModelError(f"workers: must be a positive integer; got {workers!r}")
        security = local_security()
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          host=LOOPBACK, protocol="tls://", security=security,
                          silence_logs=logging.CRITICAL) as cluster, \
                Client(cluster, security=security) as client:
            yield client
    elif isinstance(executor, str) and "://" in executor:
        try:
            client = Client(executor, timeout=10)     # TLS credentials: dask config (docs/studies.md)
        except (OSError, TimeoutError, ValueError) as exc:
            raise ModelError(f"scheduler: cannot connect to {executor} ({exc})") from None
        with client:
            yield client
    else:
        raise ModelError(f"executor: must be {', '.join(EXECUTORS)}, a scheduler address tcp://HOST:PORT "
                         f"or a distributed.Client; got {executor!r}")


def local_security():
    """TLS credentials made for one local cluster (``distributed.Security.temporary``): a fresh
    certificate authority and keys held in memory, required by the scheduler and the workers.  A
    process without them (another local user's, say) cannot connect to the cluster, so it cannot
    run code as the study's user."""
    from distributed.security import Security
    try:
        return Security.temporary()
    except ImportError as exc:               # the 'cryptography' package is missing
        raise ModelError(f"executor: the local cluster needs TLS credentials ({exc}); install "
                         "'cryptography' or run the study with executor 'serial'") from None


def _save(results, results_dir, index):
    """Save a variant's results as ``variant-0007.h5`` in ``results_dir``; returns the path or None."""
    if results is None or not results_dir or len(results) == 0:
        return None
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"variant-{index:04d}.h5")
    results.save(path)
    return path


def _report(progress, done, total, outcome):
    if progress is not None:
        progress(done, total, outcome)


def _cell(x):
    if isinstance(x, float):
        return repr(x)
    if isinstance(x, (list, tuple)):
        return json.dumps(list(x))
    return x
