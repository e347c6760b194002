"""Collects output points of a run and turns them into a :class:`solver.results.Results`."""
from __future__ import annotations

import numpy as np

from ..results import Results, METHOD_CODES


class Recorder:
    """Appends one output point at a time (consistent q, q̇, q̈, λ plus post-processed values)."""

    def __init__(self, system, meta, on_event=None):
        self.system = system
        self.on_event = on_event
        self.meta = meta
        self.rows = []
        self.step_t = []
        self.step_h = []
        self.events = meta.setdefault("events", [])

    def add(self, t, q, qd, qdd, lam, violation, conditioning, method):
        post = self.system.postprocess(q, qd, qdd, lam, t)
        kinetic, gravity, spring, strain = post["energy"]
        energy = (kinetic, gravity + spring, gravity, spring, strain, kinetic + gravity + spring + strain)
        self.rows.append((t, q, qd, qdd, lam, post, energy, violation, conditioning, METHOD_CODES.index(method)))

    def step(self, t, h):
        self.step_t.append(t)
        self.step_h.append(h)

    def event(self, t, kind, message):
        event = {"time": float(t), "kind": kind, "message": message}
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(dict(event))

    @property
    def last_time(self):
        return self.rows[-1][0] if self.rows else None

    def build(self, status="ok", message="") -> Results:
        s = self.system
        n = len(self.rows)
        nb, nj, nd = len(s.body_names), len(s.joint_names), len(s.driver_names)

        def stack(key, shape):
            return np.array([r[5][key] for r in self.rows]) if n else np.zeros((0,) + shape)
        arrays = {
            "t": np.array([r[0] for r in self.rows]),
            "q": np.array([r[1] for r in self.rows]).reshape(n, s.nq),
            "qd": np.array([r[2] for r in self.rows]).reshape(n, s.nq),
            "qdd": np.array([r[3] for r in self.rows]).reshape(n, s.nq),
            "lam": np.array([r[4] for r in self.rows]).reshape(n, len(s.equations)),
            "r": stack("r", (nb, 3)), "A": stack("A", (nb, 3, 3)), "v": stack("v", (nb, 3)),
            "w": stack("w", (nb, 3)), "a": stack("a", (nb, 3)), "alpha": stack("alpha", (nb, 3)),
            "reaction_force": stack("reaction_force", (nj, 3)),
            "reaction_torque": stack("reaction_torque", (nj, 3)),
            "reaction_force_joint": stack("reaction_force_joint", (nj, 3)),
            "reaction_torque_joint": stack("reaction_torque_joint", (nj, 3)),
            "driver_force": stack("driver_force", (nd,)),
            "energy_table": np.array([r[6] for r in self.rows]).reshape(n, 6),
            "constraint_violation": np.array([r[7] for r in self.rows]),
            "conditioning": np.array([r[8] for r in self.rows]),
            "method_code": np.array([r[9] for r in self.rows], dtype=np.int8),
            "step_t": np.array(self.step_t), "step_h": np.array(self.step_h),
        }
        layout = getattr(s, "flex_layout", [])
        if layout:                  # flexible bodies (solver.results.FLEX_ARRAYS)
            nf, nk, nn = len(layout), sum(f["modes"] for f in layout), sum(f["nodes"] for f in layout)
            for key, shape in (("flex_r", (nf, 3)), ("flex_A", (nf, 3, 3)), ("flex_a", (nk,)),
                               ("flex_disp", (nn, 3)), ("flex_stress", (nn, 4))):
                arrays[key] = stack(key, shape)
        meta = dict(self.meta)
        meta.update(status=status, message=message, body_names=list(s.body_names),
                    joint_names=list(s.joint_names), driver_names=list(s.driver_names),
                    equations=[f"{e.owner}: {e.text}" for e in s.equations])
        if layout:
            meta["flexible_bodies"] = layout
        return Results(arrays, meta)
