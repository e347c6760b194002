"""Collects the output points of a run and turns them into a :class:`solver.results.Results`.

Each output point is one row: consistent q, q̇, q̈, λ and the post-processed body, joint, driver
and energy values (the datasets of ``docs/file-format.md``), handed over by the compiled step loop
(:mod:`solver.codegen.output`) or computed when their chunk is taken (``post_rows``, else the
system's ``postprocess_batch``).  Rows go into fixed-size buffers of
``chunk_bytes``; a full buffer is either kept in memory (short runs, the GUI) or, when a results
path is given, appended to the results file by :class:`solver.results.ResultsWriter` and dropped,
so a streamed run holds one chunk of rows whatever its length.  The accepted integration steps
(t, h) are buffered the same way.
"""
from __future__ import annotations

import math

import numpy as np

from ..formulations.branches import force_angle_holders
from ..partitioning.self_stress import PROBE_COLUMNS, uniqueness_of, uniqueness_probes
from ..results import FLEX_ARRAYS, INCOMPLETE, METHOD_CODES, Results, ResultsWriter, load_results
from .heap import keep_freed_memory
from .hybrid import energy_conserved

CHUNK_BYTES = 4 * 2**20       # one buffer of rows (per table: outputs, steps)
POST_ARRAYS = ("r", "A", "v", "w", "a", "alpha", "reaction_force", "reaction_torque",
               "reaction_force_joint", "reaction_torque_joint", "driver_force")
STEP_COLUMNS = {"step_t": ((), np.float64), "step_h": ((), np.float64)}
UNFINISHED = "the run has not finished (or its process was killed)"   # message of a streamed file until the end
ENERGY_WARNING = 1e-2        # a conservative model's energy drift (of its scale) that gets a warning
CONDITIONING_WARNING = 1e-4  # an output row's conditioning (σ_min/σ_max of Φ_q[rows]) below this gets a warning:
                             # the motion's sensitivity to a perturbation grows as 1 / conditioning, so there the
                             # result depends on rtol (fuzz seed 1124, 3.8e-6 at its start, 2e-5 later: the default
                             # path ends 1.8 mm apart at rtol 1e-8 and 1e-10 on a 9 mm mechanism); the singular
                             # four-bar samples cross their passes between output rows at 6.4e-4 (rigid) and 1e-3
                             # (flexible) and agree with their exact motion to 1e-8 m


class Recorder:
    """Appends one output point at a time; :meth:`build` returns the Results (in memory, or read
    lazily from the finished file when ``path`` is given)."""

    def __init__(self, system, meta, on_event=None, path=None, chunk_bytes=None, rows=None):
        """meta: the run's description, shared with the caller (it may still add keys); path: the
        results file to stream into (None: keep everything in memory); chunk_bytes: size of one
        buffer of rows (default ``CHUNK_BYTES``); rows: the output rows the run expects (its output
        times): kept in memory, its first buffer holds no more than those, and handed over whole
        when it is exactly filled (a longer run goes on in buffers of ``chunk_bytes``)."""
        chunk_bytes = chunk_bytes or CHUNK_BYTES
        keep_freed_memory()          # the post-processing's temporaries reused, not faulted in every run
        self.system = system
        self.on_event = on_event
        self.meta = meta
        self.events = meta.setdefault("events", [])
        self.outputs = _Buffer(output_columns(system), chunk_bytes, None if path is not None else rows)
        # per row of the outputs buffer: post-processed already (add_rows(post=…)), and its energies
        self._posted = np.zeros(self.outputs.chunk_rows, dtype=bool)
        self._energies = np.zeros((self.outputs.chunk_rows, 4))
        # … and the unwrapped angles of its force elements that hold one, as the step loop tracked them
        # (NaN: not handed over); its post-processing takes their branches from these (BodyFrames.angles)
        self.angle_names = [h.name for h in force_angle_holders(system)] if getattr(system, "force_elements", None) else []
        self._angles = np.full((self.outputs.chunk_rows, len(self.angle_names)), np.nan)
        # (t, q, q̇, q̈, λ of N rows) → their post-processed columns ({column: N rows}, "energy") or None: the
        # rows not handed over post-processed, when their chunk is taken (solver.codegen.output.row_output);
        # None (or when it returns None): system.postprocess_batch
        self.post_rows = None
        self.steps = _Buffer(STEP_COLUMNS, chunk_bytes)
        self.chunks = {}             # in memory: name -> list of full buffers
        self.writer = None
        self._probes = None          # the state whose non-unique reaction components are still to find
        # a conservative model's energy account over the rows: (first total, largest |total − first|,
        # largest |kinetic| or |total|, time of the last row); None for a model that is not conservative
        self._energy = [None, 0.0, 0.0, 0.0] if energy_conserved(system) else None
        self._nearest = (np.inf, 0.0)    # the smallest conditioning of the rows and its time (complete())
        if path is not None:
            columns = {name: (shape, dtype, buf.rows) for buf in (self.outputs, self.steps)
                       for name, (shape, dtype) in buf.columns.items()}
            self.writer = ResultsWriter(path, columns, self._meta(INCOMPLETE, UNFINISHED))

    def add(self, t, q, qd, qdd, lam, violation, conditioning, method, angles=None):
        """Store one consistent state (:meth:`add_rows` of one row, without stacking it); ``angles``:
        {name: θ} of the force elements' unwrapped angles at it (``Branches.tracked``)."""
        self._probe(t, q, qd, qdd)
        row = {"t": t, "q": q, "qd": qd, "qdd": qdd, "lam": lam, "constraint_violation": violation,
               "conditioning": conditioning, "method_code": METHOD_CODES.index(method)}
        self._posted[self.outputs.n] = False
        self._angles[self.outputs.n] = [(angles or {}).get(name, np.nan) for name in self.angle_names]
        self._follow_conditioning(np.array([t]), np.array([conditioning]))
        if self.outputs.add(row):
            self._flush(self.outputs)

    def add_rows(self, t, q, qd, qdd, lam, violation, conditioning, method, post=None):
        """Store N consistent states (arrays with a leading axis N; ``method`` the partitioning of
        all of them), copied into the buffer a block at a time; their body, joint, driver and
        energy values are post-processed with the rest of their chunk
        (``MechanicalSystem.postprocess_batch``) when the chunk is taken, unless ``post`` holds them
        already ({column: N rows} of every post-processed column and "energy": kinetic, gravity,
        spring, strain — the compiled step loop's, :mod:`solver.codegen.output`).  The first state
        after the partition found redundant rows is also the one whose non-unique reaction
        components are found (:meth:`_nonunique`, with the same batch)."""
        if not len(t):
            return
        self._probe(float(t[0]), q[0], qd[0], qdd[0])
        rows = {"t": t, "q": q, "qd": qd, "qdd": qdd, "lam": lam, "constraint_violation": violation,
                "conditioning": conditioning, "method_code": np.full(len(t), METHOD_CODES.index(method))}
        if post is not None:
            rows.update((name, values) for name, values in post.items() if name != "energy")
        self._follow_conditioning(t, conditioning)
        start = 0
        while start < len(t):
            at = self.outputs.n
            stored, full = self.outputs.add_block(rows, start)
            self._posted[at:at + stored] = post is not None
            self._angles[at:at + stored] = np.nan
            if post is not None:
                self._energies[at:at + stored] = post["energy"][start:start + stored]
            start += stored
            if full:
                self._flush(self.outputs)

    def reserve(self, n):
        """Views of the next ``n`` rows of the output buffer, {column: rows} and "energy" (kinetic,
        gravity, spring, strain), for a writer in place — the compiled step loop, its rows
        post-processed in C (:meth:`commit_rows`) — or None when fewer than n rows are free."""
        buf = self.outputs
        if buf.data is None:
            buf._new()
        at = buf.n
        if buf.rows - at < n:
            return None
        views = {name: rows[at:at + n] for name, rows in buf.data.items()}
        views["energy"] = self._energies[at:at + n]
        return views

    def commit_rows(self, n, conditioning, method):
        """The first ``n`` rows of the last :meth:`reserve` have been written in place — t, q, q̇, q̈, λ,
        max |Φ|, the post-processed columns and energies —: stored as :meth:`add_rows` stores rows
        handed over post-processed (``conditioning``: their values; ``method`` their partitioning)."""
        if not n:
            return
        buf, at = self.outputs, self.outputs.n
        data = buf.data
        self._probe(float(data["t"][at]), data["q"][at], data["qd"][at], data["qdd"][at])
        data["conditioning"][at:at + n] = conditioning
        data["method_code"][at:at + n] = METHOD_CODES.index(method)
        self._follow_conditioning(data["t"][at:at + n], data["conditioning"][at:at + n])
        self._posted[at:at + n] = True
        self._angles[at:at + n] = np.nan
        buf.n += n
        if buf.n == buf.rows:
            self._flush(buf)

    def _probe(self, t, q, qd, qdd):
        """The first state stored after the partition found redundant rows: its probes (:meth:`_nonunique`)."""
        if self.meta.get("redundant") and "nonunique_components" not in self.meta and self._probes is None:
            self._probes = uniqueness_probes(self.system, t, q, qd, qdd)

    def step(self, t, h):
        if self.steps.add({"step_t": t, "step_h": h}):
            self._flush(self.steps)

    def add_steps(self, t, h):
        """:meth:`step` of N steps (arrays), a block at a time."""
        rows, start = {"step_t": t, "step_h": h}, 0
        while start < len(t):
            stored, full = self.steps.add_block(rows, start)
            start += stored
            if full:
                self._flush(self.steps)

    def event(self, t, kind, message):
        event = {"time": float(t), "kind": kind, "message": message}
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(dict(event))

    def build(self, status="ok", message="") -> Results:
        """The results of the run.  Streamed: the rows left are written, the file is closed with
        ``status`` and renamed onto its path, and the Results read from it — unless no output
        point was computed, in which case the file is dropped (an earlier one is kept)."""
        meta = self._meta(status, message)
        if self.writer is None or len(self.outputs) == 0:
            if self.writer is not None:
                self.writer.discard()
            arrays = {}
            for buf in (self.outputs, self.steps):
                last = self._take(buf)
                for name in last:
                    pieces = [p for p in self.chunks.get(name, []) + [last[name]] if len(p)] or [last[name]]
                    arrays[name] = pieces[0] if len(pieces) == 1 and _whole(pieces[0]) else np.concatenate(pieces)
            return Results(arrays, meta)
        for buf in (self.outputs, self.steps):
            self._flush(buf)
        return load_results(self.writer.close(meta), lazy=True)

    def external_work(self):
        """The run received work from outside the model (Interact's pull): its energy is not
        conserved, so no energy-drift account is kept or warned about."""
        self._energy = None

    def complete(self):
        """Post-process (and, streamed, write) the output rows buffered so far; a conservative
        model whose total energy drifted more than ENERGY_WARNING of its scale gets a warning, and so
        does a run whose rows came within conditioning CONDITIONING_WARNING of a singular configuration."""
        if self.outputs.n:
            self._flush(self.outputs)
        if self._energy is not None and self._energy[0] is not None:
            _, drift, scale, t = self._energy
            if drift > ENERGY_WARNING * scale:
                self.event(t, "warning", f"the total energy of this conservative model drifted by {drift / scale:.2g} "
                           "of its scale: the run may have left a singular configuration on another assembly "
                           "branch, or its tolerance is too loose — compare a run at a tighter rtol (or with "
                           "partitioning='qr')")
        conditioning, t = self._nearest
        if conditioning < CONDITIONING_WARNING:
            self.event(t, "warning", f"the mechanism came within conditioning {conditioning:.2g} of a singular "
                       f"configuration at t = {t:.6g} s (σ_min/σ_max of the constraint Jacobian, below "
                       f"{CONDITIONING_WARNING:g}): near there its motion is so sensitive that the results depend "
                       "on the tolerance — compare a run at a tighter rtol")

    def _follow_conditioning(self, t, conditioning):
        """Keep the smallest conditioning of the rows stored and its time (the warning of :meth:`complete`)."""
        conditioning = np.where(np.isfinite(conditioning), conditioning, np.inf)
        k = int(np.argmin(conditioning)) if len(t) else 0
        if len(t) and conditioning[k] < self._nearest[0]:
            self._nearest = (float(conditioning[k]), float(t[k]))

    def _account_energy(self, t, kinetic, total):
        """Follow a conservative model's energy over the rows post-processed (:meth:`complete`)."""
        if self._energy is None or not len(t):
            return
        if self._energy[0] is None:
            self._energy[0] = float(total[0])
        first = self._energy[0]
        self._energy[1] = max(self._energy[1], float(np.max(np.abs(total - first))))
        self._energy[2] = max(self._energy[2], float(np.max(np.abs(kinetic))), float(np.max(np.abs(total))))
        self._energy[3] = float(t[-1])

    def discard(self):
        """After an unexpected error: delete the unfinished results file, if any."""
        if self.writer is not None:
            self.writer.discard()

    # ---- helpers --------------------------------------------------------------------------------
    def _nonunique(self, probes, post):
        """At the first output point after the partition found redundant rows: which reaction
        components the self-stress states leave undetermined (:mod:`solver.partitioning.self_stress`;
        ``post``: the post-processing of ``probes.rows()``, done with the chunk of that output point);
        ``nonunique_reactions`` then lists only the joints with at least one such component."""
        t = probes.t
        u = uniqueness_of(self.system, probes, post)
        self.meta["nonunique_components"] = u.components
        self.meta["nonunique_components_global"] = u.global_components
        self.meta["nonunique_messages"] = u.messages
        self.meta["nonunique_reactions"] = [j for j in self.system.joint_names if j in u.components]
        if u.messages:
            self.event(t, "warning", "; ".join(u.messages.values()) + " (self-stress of the redundant "
                       "constraints; every other reaction component is unique)")
            # found when its chunk was taken: listed among the run's events at its own time
            at = next((k for k, e in enumerate(self.events) if e["time"] > t), len(self.events) - 1)
            self.events.insert(at, self.events.pop())

    def _take(self, buf):
        """The rows of ``buf`` so far, output rows completed by the batched post-processing (in
        the same batch: the rows of the pending non-unique components' probes, if any)."""
        rows = buf.n
        block = buf.take()
        if buf is self.outputs and len(block["t"]):
            todo = np.flatnonzero(~self._posted[:rows])      # rows not post-processed in C
            self._posted[:] = False
            if len(todo) or self._probes is not None:
                energies = self._post_process(block, rows, todo)
            else:                 # every row post-processed in C (its energies read before the next rows)
                energies = self._energies[:rows]
            kinetic, gravity, spring, strain = energies.T
            total = kinetic + gravity + spring + strain
            block["energy_table"][:] = np.column_stack([kinetic, gravity + spring, gravity, spring, strain, total])
            self._account_energy(block["t"], kinetic, total)
        return block

    def _post_process(self, block, rows, todo):
        """The rows ``todo`` of ``block`` (the ``rows`` taken) not post-processed yet, completed in place
        (in the same batch: the rows of the pending non-unique components' probes, if any); returns the
        energies of all ``rows``."""
        energies = self._energies[:rows].copy()
        tracked = self._angles[:rows].copy()
        if len(todo) == rows:
            todo = slice(None)
        if self.post_rows is not None and len(block["t"][todo]):
            post = self.post_rows(*(block[name][todo] for name in ("t", "q", "qd", "qdd", "lam")),
                                  **self._named(tracked[todo]))
            if post is not None:
                energies[todo] = post.pop("energy")
                for name, values in post.items():
                    block[name][todo] = values
                todo = np.zeros(0, dtype=int)
        args = [block[name][todo] for name in ("t", "q", "qd", "qdd", "lam")]
        n, probes, self._probes = len(args[0]), self._probes, None
        extra = None if probes is None else probes.rows()
        found = None if extra is None else self._probe_rows(extra)
        if found is not None:
            self._nonunique(probes, found)
            probes = extra = None
        angles = tracked[todo]
        if extra is not None:
            args = [np.concatenate([a, b]) for a, b in zip(args, extra)]
            angles = np.concatenate([angles, np.full((len(extra[0]), angles.shape[1]), np.nan)])
        if len(args[0]):
            post = self.system.postprocess_batch(*args, **self._named(angles))
            if probes is not None:
                self._nonunique(probes, None if extra is None else {key: v[n:] for key, v in post.items()})
            energies[todo] = post.pop("energy")[:n]
            for name, values in post.items():
                block[name][todo] = values[:n]
        return energies

    def _probe_rows(self, rows):
        """The reaction and driver-force columns of the uniqueness probes' ``rows`` (one state, λ
        along each probe direction: ``UniquenessProbes.rows``) post-processed in C by ``post_rows``
        — what :func:`~solver.partitioning.self_stress.uniqueness_of` reads — or None where the rows
        stay in Python (no compiled output, or it refuses the state)."""
        if self.post_rows is None:
            return None
        post = self.post_rows(*rows)
        if post is None:
            return None
        return {name: np.array(post[name]) for name in PROBE_COLUMNS}

    def _named(self, angles):
        """The post-processing's keyword ``angles``: {name: its column} of tracked angles (rows ×
        force elements holding an angle); no keyword when no force element holds one."""
        if not self.angle_names:
            return {}
        return {"angles": {name: angles[:, k] for k, name in enumerate(self.angle_names)}}

    def _flush(self, buf):
        block = self._take(buf)
        if self.writer is not None:
            self.writer.append(block, self._meta(INCOMPLETE, UNFINISHED))
        else:
            for name, rows in block.items():
                self.chunks.setdefault(name, []).append(rows)

    def _meta(self, status, message):
        s = self.system
        meta = dict(self.meta)
        meta.update(status=status, message=message, body_names=list(s.body_names),
                    joint_names=list(s.joint_names), driver_names=list(s.driver_names),
                    coupler_names=list(getattr(s, "coupler_names", [])),
                    coupler_rows=[c.row for c in getattr(s, "couplers", [])],
                    equations=[f"{e.owner}: {e.text}" for e in s.equations])
        layout = getattr(s, "flex_layout", [])
        if layout:
            meta["flexible_bodies"] = layout
        for f in getattr(s, "force_elements", ()):      # e.g. contacts: what re-evaluates their forces
            meta.update(f.results_meta() if hasattr(f, "results_meta") else {})
        return meta


def output_columns(system) -> dict:
    """{dataset name: (item shape, dtype)} of one output row of ``system`` (docs/file-format.md)."""
    s = system
    nq, m, nb, nj, nd = s.nq, len(s.equations), len(s.body_names), len(s.joint_names), len(s.driver_names)
    shapes = {"t": (), "q": (nq,), "qd": (nq,), "qdd": (nq,), "lam": (m,),
              "r": (nb, 3), "A": (nb, 3, 3), "v": (nb, 3), "w": (nb, 3), "a": (nb, 3), "alpha": (nb, 3),
              "reaction_force": (nj, 3), "reaction_torque": (nj, 3), "reaction_force_joint": (nj, 3),
              "reaction_torque_joint": (nj, 3), "driver_force": (nd,), "energy_table": (6,),
              "constraint_violation": (), "conditioning": ()}
    layout = getattr(s, "flex_layout", [])
    if layout:                  # flexible bodies (solver.results.FLEX_ARRAYS)
        nf, nk, nn = len(layout), sum(f["modes"] for f in layout), sum(f["nodes"] for f in layout)
        shapes.update(zip(FLEX_ARRAYS, ((nf, 3), (nf, 3, 3), (nk,), (nn, 3), (nn, 4))))
    columns = {name: (shape, np.float64) for name, shape in shapes.items()}
    columns["method_code"] = ((), np.int8)
    return columns


def _whole(rows) -> bool:
    """``rows`` spans the whole buffer it is a view of (results may keep it without a copy)."""
    return rows.base is not None and rows.base.size == rows.size


class _Buffer:
    """Rows of a table of columns {name: (item shape, dtype)}, ``rows`` at a time (as many as
    fit in ``chunk_bytes``, at least one; the first buffer no more than ``first`` rows, when given)."""

    def __init__(self, columns, chunk_bytes, first=None):
        self.columns = columns
        row_bytes = sum(np.dtype(dtype).itemsize * math.prod(shape) for shape, dtype in columns.values())
        self.chunk_rows = max(1, chunk_bytes // row_bytes)
        self.rows = min(self.chunk_rows, max(1, first)) if first else self.chunk_rows
        self.n = 0                   # rows filled in the current buffer
        self.taken = 0               # rows handed out by take()
        self._new()

    def __len__(self):
        return self.taken + self.n

    def add(self, row) -> bool:
        """Store one row ({name: value}); True when the buffer is full."""
        if self.data is None:
            self._new()
        for name, value in row.items():
            self.data[name][self.n] = value
        self.n += 1
        return self.n == self.rows

    def add_block(self, rows, start=0):
        """Store rows ``start:`` of ``rows`` ({name: array with a leading axis}), as many as fit;
        returns (rows stored, whether the buffer is now full)."""
        if self.data is None:
            self._new()
        k = min(self.rows - self.n, len(next(iter(rows.values()))) - start)
        for name, value in rows.items():
            self.data[name][self.n:self.n + k] = value[start:start + k]
        self.n += k
        return k, self.n == self.rows

    def take(self) -> dict:
        """The rows stored so far ({name: array}); the next rows go into a new buffer."""
        if self.data is None:          # nothing since the last take
            return {name: np.empty((0,) + shape, dtype) for name, (shape, dtype) in self.columns.items()}
        block = {name: a[:self.n] for name, a in self.data.items()}
        self.taken += self.n
        self.n, self.rows, self.data = 0, self.chunk_rows, None     # the next buffer allocated at its first row
        return block

    def _new(self):
        self.data = {name: np.empty((self.rows,) + shape, dtype) for name, (shape, dtype) in self.columns.items()}
