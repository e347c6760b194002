"""A simulation run as a plain function (no Qt): :func:`run_simulation` wraps ``solver.simulate`` with
progress and cancel hooks and turns every way a run can end into one :class:`RunOutcome` — finished,
stopped by the user, failed in the solver (partial results kept), refused as bad input, or crashed.

The Qt worker in :mod:`app.run_control` only moves this function to a thread.  Also here: the
suggestion shown with a failure, where a project's results file lives, whether a results file still
fits the model, the unit of a driver's force, the per-frame body poses of a :class:`solver.Results` (what the animation shows),
and the model's measures between two markers as plottable quantities (:class:`Measure`).
"""
from __future__ import annotations

import os
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

import solver

# A conditioning value (σ_min of the dependent block relative to its value when the partition was
# chosen) below this is logged as "near-singular": the mechanism approaches a locked position.
NEAR_SINGULAR = 0.05


@dataclass
class RunOutcome:
    """How a run ended.  ``status``: 'ok', 'cancelled', 'failed' (solver error, partial results),
    'invalid' (model refused: ``problems``) or 'error' (unexpected exception: ``message`` + traceback)."""

    status: str
    results: object = None
    message: str = ""
    time: float | None = None
    elements: tuple = ()
    kind: str = ""               # failed runs: solver.SolverError.kind (what the run ran into)
    problems: list = field(default_factory=list)
    wall_time: float = 0.0
    t_end: float = 0.0
    details: str = ""

    @property
    def has_results(self) -> bool:
        return self.results is not None and len(self.results.t) > 0

    @property
    def suggestion(self) -> str:
        return suggestion(self)


def run_simulation(model: solver.Model, progress=None, cancel=None, **overrides) -> RunOutcome:
    """Simulate a *copy* of ``model`` with its saved settings (``overrides`` replace some of them).

    ``progress(t, t_end)`` and ``cancel() -> bool`` are passed to ``solver.simulate`` (called from the
    thread that runs this function, at every output point).  Never raises for solver problems.
    """
    model = model.copy()
    t_end = float(overrides.get("t_end") or model.settings.values["t_end"])
    start = time.perf_counter()

    def outcome(status, results=None, **kw):
        return RunOutcome(status, results, wall_time=time.perf_counter() - start, t_end=t_end, **kw)

    try:
        results = solver.simulate(model, progress=progress, cancel=cancel, **overrides)
    except solver.Cancelled as exc:
        return outcome("cancelled", exc.results, message="stopped by the user",
                       time=_last_time(exc.results))
    except solver.SolverError as exc:
        return outcome("failed", exc.results, message=exc.message, time=exc.time,
                       elements=tuple(exc.elements or ()), kind=exc.kind)
    except solver.ModelError as exc:
        return outcome("invalid", message=str(exc), problems=list(exc.problems))
    except Exception as exc:  # noqa: BLE001  (a bug must not kill the GUI's worker thread)
        return outcome("error", message=f"{type(exc).__name__}: {exc}", details=traceback.format_exc())
    return outcome("ok", results)


def suggestion(outcome: RunOutcome) -> str:
    """What the user can try after a failed run, by what it ran into (``outcome.kind``)."""
    who = ", ".join(outcome.elements) or "the joints and drivers"
    if outcome.kind in ("assembly", "locked"):
        return (f"The mechanism cannot reach the position asked for near t = {outcome.time:g} s: it has "
                f"probably locked or reached a singular position. Check the range of motion of {who} "
                "(a driver asking for more than the linkage allows, e.g. a rocker driven through a full "
                "turn), the joint axes and the initial positions.") if outcome.time is not None else (
                f"Check {who}: joint axes, initial positions and driver expressions.")
    stiff = ("The integrator could not keep the error within tolerance. Try a stiff integrator "
             "(bdf, radau or galpha), looser tolerances, or check for very stiff springs.")
    advice = {
        "step_collapse": stiff,
        "integration": stiff,
        "singular": (f"The constraint Jacobian became singular near {who}. Try the 'hybrid' or 'svd' "
                     "partitioning, or check for redundant joints."),
        "diverged": "The solution diverged. Try a smaller maximum step or tighter tolerances.",
        "mass": f"A free motion of the mechanism has (almost) no mass or inertia: check the bodies {who}.",
        "limit": ("The run reached its step or wall-time limit: raise max_steps or max_wall_time in the "
                  "solver settings (advanced), or look for why it needs so many steps."),
        "crawl": ("The run advanced too slowly to reach its end time within its step or wall-time limit: the "
                  "steps are held small by tight tolerances or by stiffness. Loosen rtol/atol, try a stiff "
                  "integrator (bdf), or raise max_steps or max_wall_time in the solver settings (advanced)."),
    }
    if outcome.message.startswith("MemoryError"):
        return ("The run needs more memory than this computer has: shorten the end time or raise the "
                "output step (fewer output points), or save the results to a file as they are computed.")
    return advice.get(outcome.kind, f"Check {who} and the solver settings (integrator, tolerances, maximum step).")


def results_path(project_path: str) -> str:
    """``<project>.h5`` next to a project file ``<project>.mbs.json``."""
    base = project_path
    for suffix in (".mbs.json", ".json"):
        if base.endswith(suffix):
            base = base[: -len(suffix)]
            break
    return base + ".h5"


def results_match(results, model: solver.Model) -> bool:
    """True when ``results`` were computed for a model with the same bodies."""
    return results is not None and set(results.body_names) == set(model.bodies)


def driver_coordinate_unit(model: solver.Model, name: str) -> str:
    """Unit of the coordinate a driver prescribes: rad for a rotation, m for a translation ("" unknown)."""
    if name not in model.drivers:
        return ""
    driver = model.drivers[name]
    joint = model.joints.get(driver.joint)
    coordinate = driver.coordinate
    if coordinate == "default" and joint is not None:
        coordinate = (joint.coordinates() or ("",))[0]
    return {"rotation": "rad", "translation": "m", "x": "m", "y": "m"}.get(coordinate, "")


def driver_unit(model: solver.Model, name: str) -> str:
    """Unit of a driver's generalized force: N·m for a rotation, N for a translation ("" unknown)."""
    return {"rad": "N·m", "m": "N"}.get(driver_coordinate_unit(model, name), "")


def load_project_results(project_path: str, model: solver.Model):
    """The results saved next to ``project_path`` if they exist and fit ``model`` (else None, and the
    reason as second item)."""
    path = results_path(project_path)
    if not os.path.exists(path):
        return None, ""
    try:
        results = solver.load_results(path)
    except (OSError, solver.MBSError, ValueError, KeyError) as exc:
        return None, f"cannot read {os.path.basename(path)}: {exc}"
    if not results_match(results, model):
        return None, f"{os.path.basename(path)} does not match the model's bodies; not loaded"
    return results, ""


class Trajectory:
    """Body poses of a ``Results`` per output frame, extracted once (fast animation frames);
    for flexible bodies also the floating frames and the nodes' elastic displacements."""

    def __init__(self, results):
        self.results = results
        self.t = np.asarray(results.t, float)
        self.positions = {b: np.asarray(results.body_position(b), float) for b in results.body_names}
        self.rotations = {b: np.asarray(results.body_rotation(b), float) for b in results.body_names}
        self.frames = {b: tuple(np.asarray(x, float) for x in results.flexible_frame(b))
                       for b in results.flexible_body_names}
        self.displacements = {b: node_values(results, b, "displacement") for b in results.flexible_body_names}
        self.stresses = {b: node_values(results, b, "stress") for b in results.flexible_body_names}

    def __len__(self):
        return len(self.t)

    def index(self, t: float) -> int:
        """The frame at or just before time ``t`` (clamped)."""
        if len(self.t) == 0:
            return 0
        i = int(np.searchsorted(self.t, t + 1e-12 * max(1.0, abs(t)), side="right")) - 1
        return min(max(i, 0), len(self.t) - 1)

    def poses(self, i: int) -> dict:
        """{body: (position, rotation)} at frame ``i``, flexible bodies' floating frames included."""
        poses = {b: (self.positions[b][i], self.rotations[b][i]) for b in self.positions}
        poses.update({b: (r[i], A[i]) for b, (r, A) in self.frames.items()})
        return poses

    def beams(self, i: int) -> dict:
        """{flexible body: (r (3,), A (3, 3), u (nodes, 3))} at frame ``i``: floating frame and the
        nodes' elastic displacements in it (what :meth:`app.viewport.scene.Scene.set_beams` draws)."""
        return {b: (r[i], A[i], self.displacements[b][i]) for b, (r, A) in self.frames.items()}

    def stress(self, i: int, kind: str) -> dict:
        """{flexible body: (nodes,) stress measure ``kind`` (:func:`stress_measure`, MPa)} at frame ``i``."""
        return {b: stress_measure(s[i], kind) for b, s in self.stresses.items()}

    def stress_range(self, kind: str) -> tuple[float, float]:
        """(min, max) of the stress measure ``kind`` (MPa) over all frames, nodes and flexible bodies:
        one fixed colour scale for the whole run."""
        values = [stress_measure(s, kind) for s in self.stresses.values()]
        if not values:
            return 0.0, 0.0
        return (float(min(v.min() for v in values)), float(max(v.max() for v in values)))

    def point_path(self, body: str, local=(0.0, 0.0, 0.0)) -> np.ndarray:
        """(N, 3) global path of a point given in body coordinates."""
        return self.positions[body] + self.rotations[body] @ np.asarray(local, float)


def node_values(results, body: str, quantity: str) -> np.ndarray:
    """(N, nodes, …) of one per-node result of flexible ``body`` for all its nodes: ``quantity``
    "displacement" (elastic, floating frame; ``Results.node_displacement``, (N, nodes, 3)) or
    "stress" (Pa: axial, bending_y, bending_z, torsion; ``Results.node_stress``, (N, nodes, 4))."""
    read = {"displacement": results.node_displacement, "stress": results.node_stress}[quantity]
    count = next(f["nodes"] for f in results.meta["flexible_bodies"] if f["name"] == body)
    return np.stack([np.asarray(read(body, k), float) for k in range(count)], axis=1)


def stress_measure(stress, kind: str) -> np.ndarray:
    """One scalar per node (MPa) from nodal stresses ``stress`` (..., 4) = (σ_axial, σ_bend,y,
    σ_bend,z, τ_torsion) in Pa (solver/flexible/modal.py):

    - ``axial``: σ_axial (signed: tension > 0);
    - ``bending``: |σ_bend,y| + |σ_bend,z|, the largest bending stress over the section's fibres
      (exact where the extreme fibres of both axes meet, e.g. a rectangle's corner; a bound otherwise);
    - ``torsion``: τ_torsion (signed);
    - ``combined``: |σ_axial| + |σ_bend,y| + |σ_bend,z| = max over fibres of |σ_axial ± bending|,
      the peak normal stress (same caveat)."""
    s = np.asarray(stress, float) * 1e-6
    if kind == "axial":
        return s[..., 0]
    if kind == "bending":
        return np.abs(s[..., 1]) + np.abs(s[..., 2])
    if kind == "torsion":
        return s[..., 3]
    if kind == "combined":
        return np.abs(s[..., :3]).sum(axis=-1)
    raise ValueError(f"unknown stress measure {kind!r}")


def quaternion_matrix(p) -> np.ndarray:
    """Rotation matrix of the Euler parameters p = (w, x, y, z) (normalised first)."""
    w, x, y, z = np.asarray(p, float) / np.linalg.norm(p)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def real_mode_shape(shape) -> np.ndarray:
    """A (complex) eigenvector turned real: rotated in the complex plane so that its largest
    component is real and positive, then the real part (exact for undamped modes)."""
    v = np.asarray(shape)
    if not np.iscomplexobj(v) or not v.size:
        return np.asarray(v, float)
    k = int(np.argmax(np.abs(v)))
    if abs(v[k]) == 0:
        return np.zeros(v.shape)
    return np.real(v * np.conj(v[k]) / abs(v[k]))


def mode_poses(q0, shape, body_names, s: float) -> dict:
    """Body poses at q = q0 + s·shape in the Cartesian coordinates q = [r (3), p (4)] per body
    (``shape`` real, see :func:`real_mode_shape`)."""
    q = np.asarray(q0, float) + s * np.asarray(shape, float)
    return {b: (q[7 * k: 7 * k + 3], quaternion_matrix(q[7 * k + 3: 7 * k + 7]))
            for k, b in enumerate(body_names)}


def mode_amplitude(shape, extent: float, n_bodies: int) -> float:
    """A scale for ``shape`` so the largest translation is 10 % of ``extent`` (or a 0.3-rad rotation
    when the mode has no translation)."""
    v = np.asarray(shape, float).reshape(n_bodies, 7)
    translation = np.abs(v[:, :3]).max() if v.size else 0.0
    rotation = 2.0 * np.abs(v[:, 4:]).max() if v.size else 0.0
    if translation > 1e-12 * max(rotation, 1.0):
        return 0.1 * extent / translation
    return 0.3 / rotation if rotation > 0 else 0.0


def _last_time(results):
    return float(results.t[-1]) if results is not None and len(results.t) else None


MEASURE_UNITS, MEASURE_AXES = solver.MEASURE_UNITS, solver.MEASURE_AXES


@dataclass(frozen=True)
class Measure:
    """A measure of the model (:class:`solver.Measure`, declared in the Custom plots panel or the
    tree) as a plottable quantity: a scalar between marker ``marker_i`` (the reference) and marker
    ``marker_j`` (either may be "ground") — distance, angle about an axis of marker_i, or relative
    velocity — computed by :func:`solver.measure` (its docstring has the equations).  Has the
    interface of :class:`solver.Output` (``path``, ``unit``, ``evaluate``)."""
    name: str
    kind: str
    marker_i: str
    marker_j: str
    axis: str = ""

    @classmethod
    def of(cls, element: solver.Measure) -> "Measure":
        return cls(element.name, element.kind, element.marker_i, element.marker_j, element.axis)

    @property
    def path(self) -> str:
        return f"measures.{self.name}"

    @property
    def unit(self) -> str:
        return MEASURE_UNITS[self.kind]

    def evaluate(self, results, model: solver.Model) -> np.ndarray:
        """The measure's time history (N,) in ``results`` of a run of ``model`` (:func:`solver.measure`)."""
        try:
            return solver.measure(results, model, self.kind, self.marker_i, self.marker_j, self.axis)
        except solver.ModelError as exc:
            raise ValueError(str(exc)) from None


def model_measures(model: solver.Model) -> dict[str, Measure]:
    """{path: quantity} of the model's measures (``measures.NAME``)."""
    return {m.path: m for m in map(Measure.of, model.measures.values())}
