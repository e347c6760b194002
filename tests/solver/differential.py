"""Differential testing: run one model through every path and compare each against a reference.

A *path* is (formulation, codegen, integrator) with the default tolerances (rtol 1e-8, atol 1e-10).
The *reference* is the Cartesian formulation on the generic path (codegen "off", scipy's DOP853) at
rtol 1e-10, atol 1e-12: the most independent evaluation, 100× tighter than the paths.  A path agrees
when every quantity is within ``K`` × the path's rtol × the quantity's scale (``bound``; ``K_RATE``
for the velocities, reactions and driver forces, which the integrator controls only through q̇, q̈, λ):

* body positions (scale: the largest distance of a body or joint origin from the first body's start
  position, and the largest displacement, + ``atol``), rotation matrices (1 + the largest angle
  turned, ∫|ω| dt over the run, or from the start, whichever is larger: the integrated rate's
  relative error accumulates into a phase error with the angle turned, where the angle from the
  start is at most π — seed 2026: a body turning 16 rad at 128 rad/s, BDF 3.4 × the bound of
  1 + 3.1 rad, falling with rtol as rtol^0.86), velocities and angular velocities (their largest
  magnitudes + scale / t_end; angular velocities plus |ω|max × the rotation bound: a phase error
  δφ turns ω's direction by δφ when it is not along a fixed axis; velocities plus |v|max × the
  rotation bound: a body's velocity turns with it about the point the motion turns about, as ω × ρ
  (seed 3015: three bodies locked into one assembly tumbling at up to 1000 rad/s, 215 rad turned;
  BDF's velocity error at the end 10.7 × the plain bound on both formulations, b0's velocity of
  4.74 m/s turned by 1.4e-4 rad by its rotation error of 1.8e-4 rad, its magnitude 4.2e-4 m/s off:
  0.16 of |v|max × the rotation bound);
* joint reactions in the joint frame, component by component except the components the reference
  or the path flags as not unique (redundant constraints; ``Results.nonunique_components``), forces
  scaled by the largest reaction force of the model + the total mass × (|g| + the velocity scale /
  t_end) (a model at rest has round-off reactions: seed 1036), moments by the largest moment + that
  force × the length scale; driver forces by the largest driver force of their kind (N or N·m) + the reaction
  scale times the coordinate's unit lever; both bounds × max(1, ``CONDITIONING`` / the reference's
  smallest ``Results.conditioning``): the multipliers come from a solve with Φ_q, whose error
  grows as Φ_q nears a singular configuration (seed 1006: a reaction error 4× the plain bound at
  conditioning 1.3e-4 that falls with rtol, 0.13 → 0.0017 → 0.00025 N at rtol 1e-8, 1e-10, 1e-12);
  and the reaction bounds add the largest reaction |F|max (|M|max) × the rotation bound: a reaction
  turns with the bodies (the joint frame with body_i; the load with body_j, as a pendulum's pull
  along its arm), so a phase error δφ turns its components by up to |F| δφ (the angular velocity's
  phase term).  Seed 3013: a mm pendulum swinging at up to 125 rad/s beside a body spun to 281 rad/s
  (44.5 rad turned), reaction force error 3.2 × the plain bound on every Cartesian path; at the
  worst row the path's reaction is turned 1.06e-4 rad from the reference's, the pendulum's rotation
  error 1.19e-4 rad, and the error falls with rtol (1.0e-3, 3.8e-5, 4.1e-6 N at 1e-8, 1e-9, 1e-10);
* near a singular configuration, positions, rotations, velocities and angular velocities too ×
  max(1, ``CONDITIONING`` / the reference's smallest conditioning c): the integrator controls the
  independent coordinates z to its tolerance, δz ≈ rtol × scale, and the positions follow from the
  constraints, Φ(q) = 0, as q(z) with δq = (∂q/∂z) δz (velocities likewise, q̇ = (∂q/∂z) ż); with
  Φ_q = [Φ_u Φ_z] in the partition's dependent and independent directions, ∂q/∂z = (−Φ_u⁻¹ Φ_z, I),
  ‖∂q/∂z‖ ≤ 1 + ‖Φ_u⁻¹‖ ‖Φ_z‖ ≤ 1 + σ_max / σ_min(Φ_u) ≈ 1 / c (Wehage & Haug (1982), the
  coordinate partitioning's dependent solve).  So the bound is K × rtol × scale / c, the plain one
  covering c ≥ ``CONDITIONING`` (the same threshold as the multipliers': K's margin absorbs the
  ‖∂q/∂z‖ of well-conditioned models).  Seed 3041 (a screw and a revolute closed by a distance
  joint, conditioning 1.0e-5 … 6e-5 all along): relative/on/auto's position error 3.9 × the plain
  bound, falling with rtol (1.4e-5, 8.4e-7, 2.5e-7, 9.2e-9 m at rtol 1e-7 … 1e-10): a tolerance
  error amplified near the singular configuration, now 0.004 of the bound;
* reactions and driver forces carry the velocity error through their velocity-quadratic part:
  λ = λ₀(q, t) + λ_v(q, q̇) with λ_v = B(q̇, q̇) quadratic (the γ terms −(Φ_q q̇)_q q̇ and the
  centripetal and gyroscopic forces of the bodies: a link's tension m v² / ℓ), so
  δλ_v = 2 B(q̇, δq̇) and |δλ_v| ≤ 2 |λ_v| |δq̇| / |q̇|: a relative velocity error gives twice that
  relative error in λ_v.  With |λ_v| bounded by the reaction's scale and |δq̇| / |q̇| by the velocity
  bound's magnitude part over the velocity scale, K_RATE (rtol + atol / scale) × the amplification
  ‖∂q/∂z‖ above, the reaction and driver bounds add twice that × their scale (the velocity bound's phase
  part turns q̇ and λ_v together: the reactions' phase term; a driver force, along its joint's own
  coordinate, does not change).  Seed 2054 (a 68 mm distance link to a body at 2.3 m/s, 492 N tension): BDF's
  reaction error 1238 N·s/m × its velocity error at rtol 1e-8, 1e-9, 1e-10 (exact reactions of the
  state the integrator reached: 2.2e-10 N from a fresh KKT solve), 1.02 × the bound without this
  term, 0.54 with it.  A scale estimate, not a strict bound: that sensitivity is 2.9 × 2 |F| / |v|
  of the body (the tension's relative velocity is below the body's speed); the velocity error
  itself was 0.25 of its bound;
* modal coordinates η of flexible bodies (the same bound as positions, with the largest |η| of the
  body as scale); and, since a joint's reaction balances the body's modal forces, the reaction
  bound adds the elastic force of that modal error, √m ω_max² × K (rtol |η|max + atol) per flexible
  body (moments: × the length scale): the modes are mass-normalised (modal mass I, stiffness ω²),
  so an error δη is the force field ρ φ ω² δη, of magnitude ∫ρ|φ| ω² δη ≤ √m ω² δη (Cauchy–Schwarz,
  ∫ρ|φ|² = 1).  Seed 1127: BDF's reaction error at a beam's hinge 5.7e-3 N, 1.14 × the rigid bound
  5.0e-3 N (ω = 618 rad/s), with its modal coordinates at 0.83 of their bound; the error falls
  with rtol (9.3e-4, 1.5e-4 N at 1e-9, 1e-10);
* the invariants of each run, reference included: constraint residual ``max|Φ|`` ≤ ``PHI_BOUND``
  (100× the position Newton tolerance 1e-10); total energy constant within ``K`` × rtol × the energy
  scale (the largest sum of |terms| + ½ total mass × the velocity scale²: a model at rest) when the solver's rule says the model conserves it
  (``hybrid.energy_conserved``: no drivers, dampers, modal damping, time functions, applied loads
  or anisotropic rotational bushing stiffness — seed 1171); linear and angular momentum constant within ``K`` ×
  rtol × their scale for a free system (no joint, spring, bushing or actuator to ground, no gravity,
  no applied loads, no flexible body).

A path that raises SolverError where the reference does not (or the other way round) disagrees
("failure"); any other exception is a "crash"; a run cancelled after ``RUN_SECONDS`` of CPU time
(``time.process_time``: the same runs time out at any load of the machine) a "timeout"; a model on
which every path fails is reported as "all fail" (a singular configuration every path meets, or a
bug common to all); codegen "on" refused for a model (no generated kernels for it) is
"unsupported", not compared.  An "all fail" case is *explained* as a limit point of the driven
motion when :func:`limit_point` proves it from the runs (``CaseOutcome.explained``): the right
answer there is to stop.

Runs are not repeated where a path is the same computation as one already run: ``"auto"`` that
stepped in the Python loop throughout (no "step loop in C" event: the generic path, or generated
kernels with force elements evaluated in Python) is LSODA, ``"adams"`` (``segments.step_loop``:
``codegen.segment.FALLBACK``), with the same settings, so the ``"adams"`` path takes its results
(test_random_mechanisms.py checks that the two runs are identical).  Each model's kernels are built
once per formulation and its systems compiled once per (formulation, codegen) for every run
(``solver.recent_compiles``).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

import solver
from solver.analysis.hybrid import energy_conserved
from solver.codegen.segment import FALLBACK
from solver.compile import compile_model

FORMULATIONS = ("cartesian", "relative")
CODEGEN = ("off", "on")
INTEGRATORS = ("auto", "adams", "bdf")          # auto: DOP853 in C with generated kernels, else adams (LSODA)
PATHS = tuple((f, c, i) for f in FORMULATIONS for c in CODEGEN for i in INTEGRATORS)
REFERENCE = dict(formulation="cartesian", codegen="off", integrator="dop853", rtol=1e-10, atol=1e-12)
RTOL, ATOL = 1e-8, 1e-10                        # the paths' tolerances (the defaults)
K = 300.0                                       # bound = K × rtol × scale (positions, rotations, invariants)
K_RATE = 1000.0                                 # velocities, reactions, driver forces: from q̇, q̈, λ
RUN_SECONDS = 60.0                              # a run taking more CPU time is cancelled: "timeout"
PHI_BOUND = 1e-8
TIMEOUT = "timeout"
CONDITIONING = 1e-2                             # below it, reaction bounds grow as 1 / conditioning
UNSUPPORTED = "unsupported"                     # codegen "on" refused: no generated kernels for the model
QUANTITIES = ("position", "rotation", "velocity", "angular_velocity", "modal", "reaction_force", "reaction_moment",
              "driver_force", "constraint", "energy", "momentum", "failure", "crash", "timeout")


def path_name(path) -> str:
    return "/".join(path)


@dataclass
class PathOutcome:
    """One path's run compared with the reference: ``ratios`` {quantity: worst error / bound}
    (> 1: disagreement), ``error`` the SolverError text of a failed run, ``seconds`` its CPU time (0 for
    results taken from the identical run of another path)."""
    path: tuple
    ratios: dict = field(default_factory=dict)
    error: str = ""
    seconds: float = 0.0
    failed_at: float | None = None                     # the simulated time of a SolverError
    where: dict = field(default_factory=dict)          # quantity -> (item, time) of the worst error

    @property
    def disagreements(self) -> list:
        failed = [] if not self.error or self.error.startswith(UNSUPPORTED) else [_failure_kind(self.error)]
        return [q for q, r in self.ratios.items() if r > 1.0] + failed


@dataclass
class CaseOutcome:
    """Every path of one model: the reference's own failure text or invariant ratios, and the paths."""
    seed: int
    reference_error: str = ""
    reference_seconds: float = 0.0                    # the reference run's CPU time
    reference_ratios: dict = field(default_factory=dict)
    paths: list = field(default_factory=list)
    notes: list = field(default_factory=list)
    explained: str = ""                               # why every path fails, when proven (limit_point)

    @property
    def all_fail(self) -> bool:
        failures = [self.reference_error] + [p.error for p in self.paths]
        return all(e and not e.startswith("crash") for e in failures)


    @property
    def disagreements(self) -> dict:
        """{path name: [quantities]} of the paths that disagree (the reference's invariants under
        "reference"); empty when all agree, or when every path fails."""
        if self.all_fail:
            return {}
        out = {path_name(p.path): p.disagreements for p in self.paths if p.disagreements}
        ref = [q for q, r in self.reference_ratios.items() if r > 1.0]
        if ref:
            out["reference"] = ref
        if self.reference_error:
            out["reference"] = out.get("reference", []) + [_failure_kind(self.reference_error)]
        return out


def _failure_kind(error):
    return "timeout" if error == TIMEOUT else "crash" if error.startswith("crash") else "failure"


def supported_paths(model, paths=PATHS):
    """The paths that can run ``model``: flexible bodies need the Cartesian formulation."""
    return [p for p in paths if not (model.flexible_bodies and p[0] == "relative")]


def run(model, t_end, output_step, seconds=RUN_SECONDS, **options):
    """simulate(); (results, "") or (None, error text) for a SolverError, or (None, "timeout") for a
    run cancelled after ``seconds`` of CPU time."""
    results, error, _ = run_and_events(model, t_end, output_step, seconds, **options)
    return results, error


def run_and_events(model, t_end, output_step, seconds=RUN_SECONDS, **options):
    """:func:`run` and the run's events (also those of a failed or cancelled run; None when it
    never started: a crash or a refused model)."""
    return attempt(model, t_end, output_step, seconds, **options)[:3]


def attempt(model, t_end, output_step, seconds=RUN_SECONDS, **options):
    """:func:`run_and_events` and, for a SolverError, the failure: (time, partial results), else None."""
    deadline = time.process_time() + seconds
    try:
        res = solver.simulate(model, t_end=t_end, output_step=output_step,
                              cancel=lambda: time.process_time() > deadline, **options)
        return res, "", res.events, None
    except solver.Cancelled as exc:
        return None, TIMEOUT, _events(exc), None
    except solver.ModelError as exc:
        if options.get("codegen") == "on" and "unavailable" in str(exc):
            return None, UNSUPPORTED + f": {exc}", None, None
        return None, f"crash: ModelError: {exc}", None, None
    except solver.SolverError as exc:
        return None, f"{type(exc).__name__}: {exc}", _events(exc), (exc.time, exc.results)
    except Exception as exc:                    # noqa: BLE001 — any other exception is a crash to report
        return None, f"crash: {type(exc).__name__}: {exc}", None, None


def _events(exc):
    partial = getattr(exc, "results", None)
    return None if partial is None else partial.events


def stepped_in_python(events) -> bool:
    """True when a run's events show no step loop in C (the run stepped in the Python loop
    throughout, with the integrator's Python form: segments.step_loop)."""
    return events is not None and not any(
        e["kind"] == "integrator" and e["message"].startswith("step loop in C") for e in events)


def compare_case(seed, model, t_end=0.3, output_step=0.01, paths=None, k=K, k_rate=K_RATE,
                 seconds=RUN_SECONDS) -> CaseOutcome:
    """Run ``model`` through the reference and ``paths`` (default: every supported path); compare."""
    case = CaseOutcome(seed)
    t0 = time.process_time()
    ref, case.reference_error, _, ref_failure = attempt(model, t_end, output_step, seconds, **REFERENCE)
    case.reference_seconds = time.process_time() - t0
    traits = Traits(model)
    if ref is not None:
        scales = Scales(model, ref, traits)
        case.reference_ratios = invariants(model, ref, scales, traits, REFERENCE["rtol"], k)
    same = {}                   # path -> (results, error) of the identical run already done (docstring)
    for path in (supported_paths(model) if paths is None else paths):
        t0 = time.process_time()
        if path in same:
            res, error, failure = same.pop(path)
        else:
            res, error, events, failure = attempt(model, t_end, output_step, seconds, formulation=path[0],
                                                  codegen=path[1], integrator=path[2])
            if path[2] in FALLBACK and FALLBACK[path[2]] != path[2] and stepped_in_python(events):
                same[(path[0], path[1], FALLBACK[path[2]])] = (res, error, failure)
        out = PathOutcome(path, error=error or "", seconds=time.process_time() - t0,
                          failed_at=failure[0] if failure else None)
        if res is not None and ref is not None:
            out.ratios, out.where = differences(res, ref, scales, RTOL, k, k_rate)
            out.ratios.update(invariants(model, res, scales, traits, RTOL, k))
        case.paths.append(out)
    if case.all_fail:
        case.explained = limit_point(model, ref_failure, [p.failed_at for p in case.paths])
    return case


FOLD_EXPONENT = (0.35, 0.7)         # σ_min ∝ (t* − t)^p: p = ½ at a fold, 1 at a crossing (limit_point)


def fold_exponent(t, c, t_star) -> float:
    """p of c ∝ (t* − t)^p from the last two of the times ``t`` (before t*) and conditionings ``c``."""
    return float(np.log(c[-2] / c[-1]) / np.log((t_star - t[-2]) / (t_star - t[-1])))


def limit_point(model, failure, path_times) -> str:
    """Why every path fails, when it is a limit point (fold) of the driven motion, else "".

    Drivers prescribe coordinates as functions of t, so the remaining coordinates solve
    Φ(q, t) = 0 on a solution branch q(t) that may end at a turning point t*: beyond it the
    constraints have no real solution near the branch (a driven cylindrical joint closed by a
    distance joint: the distance to its axis exceeds the link's length), and the right answer is to
    stop there.  At a turning point the equations along the null direction x of Φ_q have the normal
    form x² ∝ (t* − t) (Keller (1977), limit points of nonlinear equations), so the branch
    approaches q* as √(t* − t) and σ_min(Φ_q(q(t))) ∝ |x| ∝ (t* − t)^½; a mechanism that moves
    *through* a singular configuration (a four-bar's folded passage) has σ_min ∝ |t* − t|, exponent
    1, and goes on.  The proof read from the runs:

    * the model has drivers (undriven motion does not end at a turning point: the reactions turn it);
    * the reference failed (SolverError) at t_f, and every path failed with a SolverError within
      ¼ of the reference's last output interval before t_f (the same place, not a path's trouble);
    * the conditioning σ_min / σ_max of the reference's last two output rows, t₁ < t₂ < t_f, gives
      the exponent p = ln(c₁ / c₂) / ln((t_f − t₁) / (t_f − t₂)) with t* = t_f, within
      ``FOLD_EXPONENT``: ½ (measured 0.53 for seed 3080, whose fold time 0.205621 s is the closed
      form's to 1e-6 s; 0.39–0.54 for the limit points 2014, 2055, 3000, 3061 analysed before).
    """
    if not model.drivers or failure is None or failure[0] is None or failure[1] is None:
        return ""
    t_f, partial = failure
    t, c = np.asarray(partial.t, float), np.asarray(partial.conditioning, float)
    keep = t < t_f
    t, c = t[keep], c[keep]
    if len(t) < 2 or not (c[-2] > c[-1] > 0.0):
        return ""
    margin = 0.25 * (t_f - t[-1])
    if any(p is None or abs(p - t_f) > margin for p in path_times):
        return ""
    p = fold_exponent(t, c, t_f)
    if not FOLD_EXPONENT[0] <= p <= FOLD_EXPONENT[1]:
        return ""
    return (f"limit point of the driven motion at t = {t_f:.6g} s: conditioning {c[-2]:.2g} → {c[-1]:.2g}, "
            f"∝ (t* − t)^{p:.2f}, every path stops within {margin:.2g} s of it")


def stacked(res, key):
    """One quantity of every body, joint or driver, (N, items, …): r, A, v, w of the bodies; force,
    moment of the joints (joint frame); driver (driver forces)."""
    n = len(res.t)
    if key in ("r", "A", "v", "w"):
        get = {"r": res.body_position, "A": res.body_rotation, "v": res.body_velocity,
               "w": res.body_angular_velocity}[key]
        shape = (n, 0, 3, 3) if key == "A" else (n, 0, 3)
        return np.stack([get(b) for b in res.body_names], axis=1) if res.body_names else np.zeros(shape)
    if key in ("force", "moment"):
        part = 0 if key == "force" else 1
        return (np.stack([res.joint_reaction(j, "joint")[part] for j in res.joint_names], axis=1)
                if res.joint_names else np.zeros((n, 0, 3)))
    return (np.stack([res.driver_force(d) for d in res.driver_names], axis=1) if res.driver_names
            else np.zeros((n, 0)))


class Traits:
    """What a model's elements allow to check: energy conservation (the solver's own rule,
    ``energy_conserved`` of the compiled system: no drivers, every force element's work in its
    potential, no modal damping), momentum conservation."""

    def __init__(self, model):
        forces = list(model.forces.values())
        system = compile_model(model, formulation="cartesian", codegen="off").system
        self.conservative = energy_conserved(system)
        # flexible body -> (mass, largest ω²) of its mass-normalised modes (the elastic reaction bound)
        self.flexible = {fb.name: (fb.body.mass, float(np.max(fb.body.omega, initial=0.0)) ** 2)
                         for fb in getattr(system, "flex", ())}
        grounded = any(solver.GROUND in (j.body_i, j.body_j) for j in model.joints.values()) or any(
            solver.GROUND in (getattr(f, "body_i", None), getattr(f, "body_j", None)) for f in forces)
        self.free = (not grounded and not model.flexible_bodies and not np.any(model.gravity)
                     and all(f.KIND not in ("force", "torque") for f in forces))


class Scales:
    """The scales errors are measured against (module docstring), from the reference run."""

    def __init__(self, model, ref, traits):
        r = stacked(ref, "r")
        start = r[0, 0] if r.shape[1] else np.zeros(3)
        points = [b.position for b in model.bodies.values()] + [j.origin for j in model.joints.values()]
        self.length = max(float(np.max(np.linalg.norm(np.subtract(points, start), axis=1))), 1e-12)
        moved = float(np.max(np.linalg.norm(r - r[:1], axis=-1))) if r.size else 0.0
        self.position = self.length + moved
        w = np.linalg.norm(stacked(ref, "w"), axis=-1)
        turned = float(np.max(np.sum(0.5 * (w[1:] + w[:-1]) * np.diff(ref.t)[:, None], axis=0), initial=0.0))
        self.rotation = 1.0 + max(float(np.max(np.abs(_angles(ref)), initial=0.0)), turned)
        self.spin = float(np.max(w, initial=0.0))
        t_end = float(ref.t[-1])
        self.velocity_peak = float(np.max(np.linalg.norm(stacked(ref, "v"), axis=-1), initial=0.0))
        self.velocity = self.velocity_peak + self.position / t_end
        self.angular_velocity = float(np.max(np.linalg.norm(stacked(ref, "w"), axis=-1), initial=0.0)) + 1.0 / t_end
        mass = sum(b.mass for b in model.bodies.values()) + sum(
            f.density * f.area * float(np.linalg.norm(np.subtract(f.end, f.start))) for f in model.flexible_bodies.values())
        inertial = mass * (float(np.linalg.norm(model.gravity)) + self.velocity / t_end)   # m × acceleration scale
        self.force = float(np.max(np.abs(stacked(ref, "force")), initial=0.0)) + inertial
        self.moment = float(np.max(np.abs(stacked(ref, "moment")), initial=0.0)) + self.force * self.length
        # the largest reaction force and moment (magnitudes): what a phase error turns
        self.force_peak = float(np.max(np.linalg.norm(stacked(ref, "force"), axis=-1), initial=0.0))
        self.moment_peak = float(np.max(np.linalg.norm(stacked(ref, "moment"), axis=-1), initial=0.0))
        self.driver = {}
        d = stacked(ref, "driver")
        units = {name: _driver_is_rotation(model, name) for name in ref.driver_names}
        for rotation in (True, False):
            cols = [k for k, n in enumerate(ref.driver_names) if units[n] == rotation]
            peak = float(np.max(np.abs(d[:, cols]), initial=0.0)) if cols else 0.0
            self.driver[rotation] = peak + (self.moment if rotation else self.force)
        self.driver_rotation = [units[n] for n in ref.driver_names]
        self.modal = {name: float(np.max(np.abs(ref.modal_coordinates(name)), initial=0.0)) for name in traits.flexible}
        self.flexible = traits.flexible
        cond = np.asarray(ref.conditioning)
        worst = float(np.min(cond[cond > 0.0])) if np.any(cond > 0.0) else 1.0
        self.multipliers = max(1.0, CONDITIONING / worst)
        self.amplification = self.multipliers       # ‖∂q/∂z‖ of the kinematic bounds (module docstring)
        e = ref.energy
        # + the kinetic energy of the total mass at the velocity scale: a model at rest has round-off
        # energies (seed 2024: a flexible body at rest, BDF's 1e-22 J against a scale of 0)
        self.energy = float(np.max(np.abs(e["kinetic"]) + np.abs(e["gravity"]) + np.abs(e["spring"])
                                   + np.abs(e["strain"]), initial=0.0)) + 0.5 * mass * self.velocity ** 2
        if traits.free:
            self.momentum = momentum_scales(model, ref, self)


def _driver_is_rotation(model, name):
    d = model.drivers[name]
    joint = model.joints[d.joint]
    coordinate = joint.coordinates()[0] if d.coordinate == "default" else d.coordinate
    return coordinate == "rotation"


def _angles(res):
    """Rotation angle of every body relative to its start, (N, nb)."""
    A = stacked(res, "A")
    if not A.size:
        return np.zeros((len(res.t), 0))
    rel = np.einsum("nbji,bjk->nbik", A, A[0])
    c = np.clip((np.trace(rel, axis1=-2, axis2=-1) - 1.0) / 2.0, -1.0, 1.0)
    return np.arccos(c)


def momentum(model, res):
    """Linear momentum (N, 3) and angular momentum about the global origin (N, 3) of the rigid bodies."""
    P = np.zeros((len(res.t), 3))
    H = np.zeros((len(res.t), 3))
    for name, body in model.bodies.items():
        m = body.mass
        J = solver.inertia_matrix(body.inertia)
        r, v = res.body_position(name), res.body_velocity(name)
        A, w = res.body_rotation(name), res.body_angular_velocity(name)
        P += m * v
        H += m * np.cross(r, v) + np.einsum("nij,jk,nlk,nl->ni", A, J, A, w)
    return P, H


def momentum_scales(model, res, s):
    """Scales of the linear and angular momentum: the largest sums over the bodies of the
    magnitudes of their terms (m|v|; m|r × v| + |A J Aᵀ ω|) — the momenta exchanged inside the
    system — plus those of the velocity scales ``s.velocity``, ``s.angular_velocity`` (a system at
    rest has only round-off momenta)."""
    sp = np.zeros(len(res.t))
    sh = np.zeros(len(res.t))
    for name, body in model.bodies.items():
        J = solver.inertia_matrix(body.inertia)
        r, v = res.body_position(name), res.body_velocity(name)
        A, w = res.body_rotation(name), res.body_angular_velocity(name)
        sp += body.mass * np.linalg.norm(v, axis=-1)
        sh += (body.mass * np.linalg.norm(np.cross(r, v), axis=-1)
               + np.linalg.norm(np.einsum("nij,jk,nlk,nl->ni", A, J, A, w), axis=-1))
        sp += body.mass * s.velocity
        sh += body.mass * s.position * s.velocity + np.linalg.norm(J, 2) * s.angular_velocity
    return float(np.max(sp)), float(np.max(sh))


def _worst(err, bound, names):
    """(worst err/bound, (item name, time index)) over an (N, items, …) error array."""
    if err.size == 0:
        return 0.0, None
    ratio = err / bound
    idx = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    item = names[idx[1]] if len(idx) > 1 and names else None
    return float(ratio[idx]), (item, int(idx[0]))


def differences(res, ref, s: Scales, rtol, k, k_rate):
    """{quantity: worst error / bound} of a path's results against the reference's."""
    if len(res.t) != len(ref.t) or np.max(np.abs(np.asarray(res.t) - np.asarray(ref.t))) > 1e-9:
        return {"failure": np.inf}, {"failure": ("output times differ", 0)}
    ratios, where = {}, {}
    bodies = ref.body_names
    pairs = (("position", "r", s.position, k), ("velocity", "v", s.velocity, k_rate),
             ("angular_velocity", "w", s.angular_velocity, k_rate))
    phase = k * rtol * s.rotation                   # the rotation bound (a phase error, rad)
    for q, key, scale, kq in pairs:              # the kinematic bounds, × ‖∂q/∂z‖ ≲ 1 / conditioning
        err = np.linalg.norm(stacked(res, key) - stacked(ref, key), axis=-1)
        extra = {"angular_velocity": s.spin * phase, "velocity": s.velocity_peak * phase}.get(q, 0.0)
        ratios[q], where[q] = _worst(err, (kq * (rtol * scale + ATOL) + extra) * s.amplification, bodies)
    err = np.max(np.abs(stacked(res, "A") - stacked(ref, "A")), axis=(-1, -2))
    ratios["rotation"], where["rotation"] = _worst(err, phase * s.amplification, bodies)
    # the velocity-quadratic part of a multiplier carries the velocity's relative error twice (docstring)
    quadratic = 2.0 * k_rate * (rtol + ATOL / s.velocity) * s.amplification
    elastic = 0.0                   # the elastic force of the modal coordinates' allowed error (docstring)
    for name, eta_scale in s.modal.items():
        bound = k * (rtol * eta_scale + ATOL)
        err = np.abs(np.asarray(res.modal_coordinates(name)) - np.asarray(ref.modal_coordinates(name)))
        ratio, at = _worst(err[:, None], bound, [name])
        if ratio >= ratios.get("modal", 0.0):
            ratios["modal"], where["modal"] = ratio, at
        mass, omega2 = s.flexible[name]
        elastic += np.sqrt(mass) * omega2 * bound
    mask = _unique_mask(res, ref)
    for q, key, scale, extra in (("reaction_force", "force", s.force, elastic + s.force_peak * phase),
                                 ("reaction_moment", "moment", s.moment, elastic * s.length + s.moment_peak * phase)):
        m = mask[:, :3] if q == "reaction_force" else mask[:, 3:]
        err = np.abs(stacked(res, key) - stacked(ref, key)) * m[None]
        bound = (k_rate * rtol * s.multipliers + quadratic) * scale + extra
        ratios[q], where[q] = _worst(err, bound, ref.joint_names)
    if ref.driver_names:
        bound = np.array([s.driver[rot] for rot in s.driver_rotation]) * (k_rate * rtol * s.multipliers + quadratic)
        unique = np.array([not (n in ref.nonunique_components or n in res.nonunique_components)
                           for n in ref.driver_names])
        err = np.abs(stacked(res, "driver") - stacked(ref, "driver")) * unique
        ratios["driver_force"], where["driver_force"] = _worst(err, bound, ref.driver_names)
    return ratios, where


COMPONENTS = ("force x", "force y", "force z", "moment x", "moment y", "moment z")


def _unique_mask(res, ref):
    """(joints, 6) 1 where a reaction component is unique in both runs, else 0."""
    mask = np.ones((len(ref.joint_names), 6))
    for flags in (ref.nonunique_components, res.nonunique_components):
        for name, comps in flags.items():
            if name in ref.joint_names:
                k = ref.joint_names.index(name)
                for c in comps:
                    if c in COMPONENTS:
                        mask[k, COMPONENTS.index(c)] = 0.0
    return mask


def invariants(model, res, s: Scales, traits: Traits, rtol, k):
    """{constraint, energy, momentum: worst deviation / bound} of one run."""
    out = {"constraint": float(np.max(np.abs(res.constraint_violation), initial=0.0)) / PHI_BOUND}
    if traits.conservative:
        total = np.asarray(res.energy["total"])
        out["energy"] = float(np.max(np.abs(total - total[0]))) / (k * rtol * s.energy)
    if traits.free and hasattr(s, "momentum"):
        p, h = momentum(model, res)
        out["momentum"] = max(float(np.max(np.linalg.norm(p - p[0], axis=-1))) / (k * rtol * s.momentum[0]),
                              float(np.max(np.linalg.norm(h - h[0], axis=-1))) / (k * rtol * s.momentum[1]))
    return out


