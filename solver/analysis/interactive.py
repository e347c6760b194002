"""An interactive run: a dynamic run advanced in short chunks while a user pulls its bodies.

:class:`InteractiveRun` compiles a model once (the defaults: generated kernels, the compiled step
loop) and integrates it chunk by chunk (``step(dt)``), each chunk continuing from the state the
last one ended with (``Run._dynamic`` from that state; the Python loop's scipy integrator itself
is continued — :meth:`_ChunkRun._integrator`: so "bdf" stays in the Python loop here, where a plain
run steps it in C — while the C loop and LSODA choose their step afresh at each chunk start).  Nothing is recompiled between chunks: the loads a user changes while it runs
enter as *held external loads* — generalized forces Q_x evaluated from the state at the start of a
chunk and held over it (a zero-order hold, as a display-rate controller acts), added to the kernels'
Q by the compiled reduction's ``Qx`` buffer (the buffer the force elements not generated use) or,
on the generic path, to ``system.forces``.  The hold is exact at rest, so equilibria are exact; a
pull's stiffness is chosen so that ω·dt stays well below 1 at display rates (below).

The pull (MuJoCo's viewer perturbation, Todorov et al. (2012)): a spring–damper from the anchor P
(a point fixed in the grabbed body) to a target point X (the GUI's mouse point),

    F = Λ (ω² (X − P) − 2 ζ ω v_P),     ω = 2π·PULL_FREQUENCY, ζ = PULL_DAMPING,

acting at P, with Λ the effective (operational-space) inertia of the point P in the mechanism
(Khatib (1987)): Λ = (J_P N (NᵀMN)⁻¹ Nᵀ J_Pᵀ)⁺, N the motions the constraints allow.  Stiffness
Λω² and damping 2ζωΛ scale with the mass the hand feels at P — for a free body pulled at its CM,
Λ = m·I: k = m ω², c = 2ζ m ω — so the point follows the cursor as a critically damped oscillator of
the same frequency (and the same sag g/ω² under gravity) whether the body weighs 1 g or 100 kg or
carries a robot behind it; and ω·dt ≈ 0.2 per display frame keeps the hold stable (scaling by the
body's own mass is not enough: a light tip link has a far smaller Λ across its joint axis, a much
higher ω there, and the held force diverges).  A point force F at P is mapped to generalized forces
by the principle of virtual work, Q = J_Pᵀ F with J_P = ∂v_P/∂q̇ (v_P = v + ω × (P − r) is linear in
q̇: its columns are the formulation's own body frames at unit rates), so one rule serves every
formulation.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..compile import CompiledModel, compile_model
from ..errors import ModelError, Problem
from ..model.model import Model
from .dynamics import Run
from .recording import Recorder
from .timewarp import TimeWarp, warp_drivers
from .threads import single_threaded_blas

PULL_FREQUENCY = 2.0     # Hz: the natural frequency of a grabbed body on the pull's spring
PULL_INERTIA_CAP = 2.0   # Λ's eigenvalues at most this × the mechanism's total mass (near singular poses)
PULL_DAMPING = 1.0       # damping ratio ζ of the pull (critically damped)


class HeldLoads:
    """The force element of an interactive run's held loads, for what evaluates force elements (the
    generic path's Q, the post-processing's reactions and energies): point forces F (global axes)
    at points fixed in bodies, held over each chunk — the loads of the chunk that contains t (a
    chunk's end point belongs to it).  No potential: their work is external."""

    conserves_energy = False

    def __init__(self, name="interact"):
        self.name = name
        self.starts = []        # chunk start times, ascending
        self.loads = []         # per chunk: [(body index, point in body axes, force)]

    def hold(self, t, loads):
        self.starts.append(t)
        self.loads.append(loads)

    def apply(self, t, frames, out):
        k = bisect.bisect_left(self.starts, t) - 1
        if k < 0:
            return
        for b, local, force in self.loads[k]:
            r, A, _, _ = frames.get(b)
            out.at_point(b, force, r + A @ local, frames)

    def potential(self, frames):
        return 0.0


class _LastRow(Recorder):
    """A Recorder that also keeps its last row (t, q, q̇, q̈, λ): what the live plots post-process."""

    last = None

    def add(self, t, q, qd, qdd, lam, violation, conditioning, method, angles=None):
        self.last = (t, np.array(q), np.array(qd), np.array(qdd), np.array(lam))
        super().add(t, q, qd, qdd, lam, violation, conditioning, method, angles)


class _ChunkRun(Run):
    """A Run that keeps its held generalized forces Q_x across re-partitions and is never stopped
    by its step or wall-time limits (the user ends an interactive session)."""

    held = None          # (nq,) generalized forces of the compiled path held over the current chunk
    jacobian = None      # (partition, ∂f/∂y) last computed by _jacobian
    reuse = None         # the same, offered once to an integrator started afresh (not to a continued one)
    kept = None          # (partition, integrator) the last chunk ended with: the next one continues it
    python_loop = ("bdf", "adams")   # scipy's BDF and LSODA, continued across chunks (_integrator); bdf.c and
                                     # adams.c would start afresh (order 1) each chunk

    def __init__(self, system, settings):
        super().__init__(system, settings)
        self.rec = _LastRow(self.system, self.meta)

    def _partition(self, method, q, t, reason):
        part = super()._partition(method, q, t, reason)
        if self._compiled is not None and self.held is not None:
            self._compiled.arrays["Qx"][:] = self.held
        return part

    def _check_cancel(self, t):
        pass

    def _integrator(self, integrator, part, t, y0, t_end, max_step, first_step):
        """The scipy integrator of the last chunk, continued to t_end, when it ended at (t, y0) on the
        same partition: a chunk then goes on with the same integration (BDF keeps its order, step
        size, history and Jacobian) instead of starting one (a start re-chooses the step and climbs
        from order 1, the most of a 1/60 s frame's steps).  The held loads may have changed at t:
        a multistep history then interpolates a right-hand side that has a small jump there, which
        the integrator's error control treats as any other change (:meth:`InteractiveRun.step`
        drops the integrator — a fresh start — when the user's action is itself a jump).  The
        price, measured (bench/interact.py --accuracy: the car dragged 2 s at rtol 1e-4 against the
        same session at rtol 1e-7): 7.3e-4 m on the chassis' 0.54 m path continued, 1.4e-4 m
        restarted each frame (BDF's high-order history extrapolates across the per-frame jumps of
        the held pull; restarting at order 1 with the same step and Jacobian is as accurate as a
        fresh start and as slow).  An
        explicit Runge–Kutta's stored f(t, y) is re-evaluated with the new loads.  LSODA (Fortran:
        its end time is fixed at its start) always starts afresh."""
        kept, self.kept = self.kept, None
        if kept is not None and kept[0] is part and kept[1].t == t and not hasattr(kept[1], "_lsoda_solver") and np.allclose(
                kept[1].y, y0, rtol=1e-12, atol=1e-14):
            ode = kept[1]
            ode.t_bound, ode.status = t_end, "running"
            if hasattr(ode, "f"):
                ode.f = ode.fun(ode.t, ode.y)
            self.reuse = None         # it asks for a Jacobian when its own one stalls: a fresh one
        else:
            self.reuse = self.jacobian
            ode = super()._integrator(integrator, part, t, y0, t_end, max_step, first_step)
        self.kept = (part, ode)
        return ode

    def _jacobian(self, part, t, y):
        """The implicit integrators' Jacobian: an integrator started afresh first gets the last one
        of the same partition (forward differences cost 2·dof + 1 right-hand sides, more than a
        frame's steps); it asks again — and gets a fresh one — when its Newton iteration stalls."""
        if self.reuse is not None and self.reuse[0] is part:
            J, self.reuse = self.reuse[1], None
            return J
        J = super()._jacobian(part, t, y)
        self.jacobian = (part, J)
        self.reuse = None
        return J


class InteractiveRun:
    """A model run chunk by chunk with pulls and held loads that change between chunks.

    ``step(dt)`` advances dt seconds of simulated time; ``set_pull(body, point, target)`` grabs
    ``body`` at the global point ``point`` (at the current state; the anchor then moves with the
    body) and pulls it toward ``target``; ``release()`` lets go; ``set_load(name, body, force)`` holds
    a force (global axes, N) at a body's CM until changed (zero removes it); ``set_speed(s)`` runs the
    drivers at s × their motion rate from the next chunk on (:mod:`.timewarp`); ``results()`` is the
    session so far as ordinary :class:`~solver.results.Results` (one output point per chunk end)."""

    def __init__(self, model: Model | CompiledModel, **overrides):
        compiled = model if isinstance(model, CompiledModel) else compile_model(model, **overrides)
        settings = compiled.run_settings(**overrides) if isinstance(model, CompiledModel) else compiled.settings
        self.compiled = compiled
        self.run = run = _ChunkRun(compiled.system, settings)
        for message in compiled.notices:
            run.rec.event(0.0, "codegen", message)
        system = run.system
        self.held = HeldLoads()
        system.force_elements = [*system.force_elements, self.held]     # this run's workspace only
        self.body_names = list(system.body_names)
        with single_threaded_blas():
            self.part, q, qd, t = run.begin()
            if self.part.dof == 0:
                raise ModelError(Problem("interact", None, "model", "the model has no degrees of freedom: "
                                         "nothing to interact with (its motion is prescribed)"))
            run._record(self.part, t, q, qd, self.part.method)
        self.t, self.q, self.qd = t, q, qd
        self.pull = None         # (body index, anchor in body axes, target)
        self.loads = {}          # name -> (body index, force)
        self.pulled = False      # a pull or load acted at some time (the energy is not conserved)
        self._finished = None
        self.warp = None         # the drivers' time warp (set_speed), None: their own motion
        self._speed = None       # the speed scale asked for, applied at the next chunk's start
        self._jacobians = {}     # the last point Jacobian J_P and its (body, point, t)
        self._jump = False       # the user's last action was a jump of the loads: the next chunk starts afresh

    # ---- what the user changes ---------------------------------------------------------------------
    def set_pull(self, body, point, target):
        """Grab ``body`` (name) at the global point ``point`` of the current state and pull it toward
        the global point ``target`` (:meth:`move_target` moves it; a new grab replaces the pull)."""
        b = self._body(body)
        r, A = self.frame(b)
        anchor = A.T @ (np.asarray(point, dtype=float) - r)
        self.pull = (b, anchor, np.asarray(target, dtype=float))
        self.pulled = self._jump = True

    def move_target(self, target):
        """Move the current pull's target (a global point); no pull: nothing."""
        if self.pull is not None:
            self.pull = (self.pull[0], self.pull[1], np.asarray(target, dtype=float))

    def release(self):
        self._jump = self._jump or self.pull is not None
        self.pull = None

    def set_load(self, name, body, force):
        """Hold ``force`` (global axes, N) at the CM of ``body`` from now on (zero: none)."""
        force = np.asarray(force, dtype=float)
        self._jump = True
        if np.any(force):
            self.loads[name] = (self._body(body), force)
            self.pulled = True
        else:
            self.loads.pop(name, None)

    def set_speed(self, scale):
        """Run the model's drivers at ``scale`` × their motion rate from now on (the time warp of
        :mod:`solver.analysis.timewarp`: θ = f(τ), θ̇ = s f'(τ), θ̈ = s² f''(τ), dτ/dt = s ≥ 0); the
        first scale ≠ 1 moves the run from the compiled step loop to the Python one."""
        scale = float(scale)
        if not (np.isfinite(scale) and scale >= 0.0):
            raise ModelError(Problem("interact", None, "speed", f"must be a finite number ≥ 0; got {scale!r}"))
        if not self.run.system.drivers:
            raise ModelError(Problem("interact", None, "speed", "the model has no drivers to speed up"))
        if self.warp is None:
            if scale == 1.0:
                return
            warp = TimeWarp()
            if not warp_drivers(self.run.system, warp):
                raise ModelError(Problem("interact", None, "speed", "a driver speed scale needs generated kernels "
                                         "or the relative formulation (the generic Cartesian one keeps its "
                                         "driver functions in its constraint sets)"))
            self.warp = warp
        self._speed = scale

    # ---- running -------------------------------------------------------------------------------------
    def step(self, dt):
        """Advance ``dt`` seconds (> 0) of simulated time; one output point at the end.  Returns t."""
        if self._finished is not None:
            raise ModelError("interact: the session's results were taken; start a new InteractiveRun")
        if not dt > 0:
            raise ModelError(Problem("interact", None, "dt", f"must be > 0 s; got {dt!r}"))
        run = self.run
        loads = self.held_loads()
        self.held.hold(self.t, loads)
        run.held = self._generalized(loads) if loads else None
        if self._speed is not None and self._speed != self.warp.scale:
            self._rescale()
        if self._jump:
            run.kept, self._jump = None, False
        if run._compiled is not None:
            run._compiled.arrays["Qx"][:] = 0.0 if run.held is None else run.held
        with single_threaded_blas():
            self.part, t, q, qd = run._dynamic(self.part, self.q, self.qd, np.array([self.t, self.t + dt]),
                                               record_start=False)
        self.t, self.q, self.qd = float(t), q, qd
        return self.t

    def _rescale(self):
        """A new driver speed from the current time: the driven rates jump (θ̇ = s f'(τ)), so the
        velocities are resolved anew — the free ones kept (V ż), the dependent ones from the
        constraints' ν — and the next chunk starts its integrator afresh."""
        system, part = self.run.system, self.part
        self.warp.set_scale(self.t, self._speed)
        if hasattr(system, "_drive"):
            system._drive.reset()
        ev = system.constraints(self.q, self.t, level=1)
        self.qd = part.velocities(ev.jac, ev.nu, part.zd_of(self.qd))
        self._jump = True

    def held_loads(self):
        """[(body index, point in body axes, force)] of the pull and the loads at the current state."""
        loads = []
        if self.pull is not None:
            b, anchor, _ = self.pull
            loads.append((b, anchor, self.pull_force()[1]))
        loads += [(b, np.zeros(3), force) for b, force in self.loads.values()]
        return loads

    def pull_force(self):
        """(global anchor point P, force F on it) of the current pull: F = Λ(ω²(X − P) − 2ζω v_P)."""
        b, anchor, target = self.pull
        J = self._point_jacobian(b, anchor)
        r, A = self.frame(b)
        point = r + A @ anchor
        omega = 2.0 * np.pi * PULL_FREQUENCY
        return point, self.pull_inertia(J) @ (omega**2 * (target - point) - 2.0 * PULL_DAMPING * omega * (J @ self.qd))

    def pull_inertia(self, J):
        """Λ = (J N (NᵀMN)⁻¹ Nᵀ Jᵀ)⁺ of a point with velocity Jacobian J (3 × nq): its effective
        inertia in the mechanism (Khatib (1987)), N a basis of the motions the constraints allow
        (N = V − U (Φ_q,r U)⁻¹ Φ_q,r V of the active partition); directions the point cannot move
        in get no force (pseudo-inverse).  Near a singular pose (a stretched arm: the point barely
        moves along it) Λ grows without bound, and a force held over a frame while the pose leaves
        the singularity kicked the straight double pendulum to 10⁵ J; so Λ's eigenvalues are capped
        at PULL_INERTIA_CAP × the mechanism's total mass.  A cap only softens the pull along those
        directions (ω_eff = ω √(Λ_cap/Λ) < ω: the hold stays stable); a free body at its CM
        (Λ = m ≤ total mass) and a pendulum's bob (Λ = I_pivot/L²) are below it."""
        system, part = self.run.system, self.part
        N = part.V
        if len(part.rows):
            Jr = system.constraints(self.q, self.t).jac[part.rows]
            N = part.V - part.U @ np.linalg.lstsq(Jr @ part.U, Jr @ part.V, rcond=None)[0]
        JN = J @ N
        mobility = JN @ np.linalg.solve(N.T @ system.mass(self.q) @ N, JN.T)
        mu, axes = np.linalg.eigh(mobility)
        cap = PULL_INERTIA_CAP * float(np.sum(system.mass_values))
        inertia = np.where(mu > 1e-9 * max(mu.max(), 0.0), 1.0 / np.maximum(mu, 1.0 / cap), 0.0)
        return (axes * inertia) @ axes.T

    def _generalized(self, loads):
        """Q = Σ J_Pᵀ F of point forces (body, point in body axes, force) at the current state."""
        Q = np.zeros(len(self.q))
        for b, local, force in loads:
            Q += self._point_jacobian(b, local).T @ force
        return Q

    def _point_jacobian(self, b, local):
        """J_P = ∂v_P/∂q̇ (3 × nq) of the point ``local`` (body axes) of body b: column k is the point's
        velocity v + ω × A·local at the unit rate q̇ = e_k (the formulation's own frames)."""
        key = (b, local.tobytes(), self.t)
        if self._jacobians.get("key") == key:          # the pull's force and its Q at one state: once
            return self._jacobians["J"]
        system, q = self.run.system, self.q
        V, W, unit = np.zeros((3, len(q))), np.zeros((3, len(q))), np.zeros(len(q))
        for k in range(len(q)):
            unit[k] = 1.0
            _, A, V[:, k], W[:, k] = system.frames(q, unit).get(b)
            unit[k] = 0.0
        J = V + np.cross(W, A @ local, axis=0)
        self._jacobians = {"key": key, "J": J}
        return J

    # ---- reading -------------------------------------------------------------------------------------
    def frame(self, b):
        """(CM position, rotation matrix) of body index b at the current state."""
        r, A, _, _ = self.run.system.frames(self.q, self.qd).get(b)
        return r.copy(), A.copy()

    def live(self):
        """What the live plots show at the last output point: {"t", "energy": (kinetic, gravity,
        spring, strain), "reaction_force": {joint: (3,) force on body_j}} (post-processed like the
        recorded rows, held loads included)."""
        t, q, qd, qdd, lam = self.run.rec.last
        system = self.run.system
        post = system.postprocess(q, qd, qdd, lam, t)
        names = getattr(system, "joint_names", [])
        return {"t": t, "energy": tuple(float(e) for e in post["energy"]),
                "reaction_force": {n: np.array(post["reaction_force"][k]) for k, n in enumerate(names)}}

    def poses(self):
        """{body name: (CM position, rotation matrix)} at the current state."""
        frames = self.run.system.frames(self.q, self.qd)
        return {name: (frames.r[k].copy(), frames.A[k].copy()) for k, name in enumerate(self.body_names)}

    def results(self):
        """The session as Results (each chunk's end an output point); ends the session."""
        if self._finished is None:
            run = self.run
            run.meta["t_end"] = self.t
            run.meta["output_step"] = None
            if self.pulled:
                run.meta["interactive"] = "pulled by the user: external work, the energy is not conserved"
                run.rec.external_work()
            run._finish(run.wall0)
            self._finished = run.rec.build()
        return self._finished

    def _body(self, name):
        if name not in self.body_names:
            raise ModelError(Problem("interact", name, "body", f"no rigid body named '{name}'"))
        return self.body_names.index(name)

