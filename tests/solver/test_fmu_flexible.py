"""FMU export of models with flexible bodies (solver.fmu, docs/fmu.md), checked with FMPy: the
floating frames' origins, the modal coordinates, the rigid bodies, the joint reactions and driver
forces of the exported cantilever pendulum, driven beam and flexible four-bar sample (through its
singular passes) equal ``solver.simulate`` of the same model; a flexible model the kernels do not
cover is refused naming the element.  The reaction of a joint whose body_j is flexible acts at the
deformed node: with the undeformed node instead the reaction errors grow to 1.5e-5 (cantilever),
5.0e-4 (four-bar) and 3.1e-4 (driven beam), all above the bounds asserted here (measured)."""
import numpy as np
import pytest
from scipy.interpolate import CubicSpline

fmpy = pytest.importorskip("fmpy")
from fmpy.validation import validate_fmu  # noqa: E402

import solver  # noqa: E402
from solver.fmu import export_fmu  # noqa: E402
from test_codegen_flexible import cantilever_pendulum, driven_beam  # noqa: E402
from test_fmu import FMU_TOL, SAMPLES, outputs_of, worst_error  # noqa: E402

pytestmark = pytest.mark.usefixtures("module_codegen_cache")


def flexible_errors(res, fmu_result, name):
    """(frame origin error relative to its largest |component|, modal error relative to the largest
    |modal coordinate|) of flexible body ``name``: FMU against the run."""
    r, _ = res.flexible_frame(name)
    a = res.modal_coordinates(name)
    fr = np.column_stack([fmu_result[f"flexible_bodies.{name}.position.{x}"] for x in "xyz"])
    fa = np.column_stack([fmu_result[f"flexible_bodies.{name}.modal.{k}"] for k in range(a.shape[1])])
    return np.max(np.abs(fr - r)) / np.max(np.abs(r)), np.max(np.abs(fa - a)) / np.max(np.abs(a))


def frame_rates_from_positions(res, name, every):
    """(ṙ, ω) of a flexible body's floating frame at every ``every``-th output point of ``res``, the
    derivatives of cubic splines through the run's frame origins r and rotations A (ω̃ = Ȧ Aᵀ)."""
    r, A = res.flexible_frame(name)
    v = CubicSpline(res.t, r)(res.t, 1)[::every]
    W = np.einsum("nij,nkj->nik", CubicSpline(res.t, A)(res.t, 1)[::every], A[::every])
    return v, np.column_stack([W[:, 2, 1], W[:, 0, 2], W[:, 1, 0]])


def run(path, t_end):
    names = outputs_of(path, prefix=("bodies", "joints", "drivers", "flexible_bodies"),
                       quantities=("position", "velocity", "angular_velocity", "reaction_force", "reaction_torque",
                                   "force", "modal"))
    return fmpy.simulate_fmu(str(path), stop_time=t_end, output_interval=0.01, relative_tolerance=FMU_TOL,
                             output=names)


def rigid_and_reactions(path):
    return outputs_of(path, quantities=("position", "reaction_force", "reaction_torque"))


@pytest.mark.slow
def test_cantilever_pendulum_fmu_equals_the_solver(tmp_path):
    """A hub on a pin with an aluminium beam clamped to it (3 Craig–Bampton modes), 0.5 s of swinging:
    against the compiled DOP853 run at rtol 1e-12 (LSODA at that tolerance is the less accurate one
    here: 7.7e-6 of the modal amplitude 1.4e-5 from both the FMU and DOP853).  Measured at FMU tolerance
    1e-10: frame origin 1.6e-10, modal coordinates 9.2e-8 of their amplitude, reactions (the clamp's
    point on the beam is its deformed root node) 1.2e-8 of the largest reaction force.  The frame's
    velocity and angular velocity (the run records neither) against the derivatives of cubic splines
    through the run's frame origins and rotations at 5e-4 s: 4.7e-8 and 2.1e-8 of their largest
    (3.8e-7 and 3.4e-7 from 1e-3 s points: the splines' error, falling as h³–h⁴)."""
    model = cantilever_pendulum()
    path = export_fmu(model, tmp_path / "pendulum.fmu", step=0.01)
    assert validate_fmu(str(path)) == []
    md = fmpy.read_model_description(str(path))
    variables = {v.name: v for v in md.modelVariables}
    assert [n for n, v in variables.items() if v.causality == "parameter"] == ["bodies.hub.mass"]
    assert variables["flexible_bodies.beam.position.x"].unit == "m"
    assert variables["flexible_bodies.beam.modal.0"].unit is None
    res = solver.simulate(model, t_end=0.5, output_step=0.01, rtol=1e-12, atol=1e-14, integrator="auto",
                          codegen=True)
    r = run(path, 0.5)
    assert sorted(n for n in r.dtype.names if ".modal." in n) == [f"flexible_bodies.beam.modal.{k}"
                                                                   for k in range(res.modal_coordinates("beam").shape[1])]
    frame, modal = flexible_errors(res, r, "beam")
    assert frame < 2e-9 and modal < 1e-6, (frame, modal)
    assert np.max(np.abs(res.modal_coordinates("beam"))) > 1e-5          # the beam bends
    err, where = worst_error(model, res, r, rigid_and_reactions(path))
    assert err < 1e-7, where
    fine = solver.simulate(model, t_end=0.5, output_step=5e-4, rtol=1e-12, atol=1e-14, integrator="auto",
                           codegen=True)
    v, w = frame_rates_from_positions(fine, "beam", 20)
    rates = {q: np.column_stack([r[f"flexible_bodies.beam.{q}.{x}"] for x in "xyz"])
             for q in ("velocity", "angular_velocity")}
    inner = slice(1, -1)           # the splines' end points are less accurate
    assert np.max(np.abs(rates["velocity"] - v)[inner]) < 5e-7 * np.max(np.abs(v))
    assert np.max(np.abs(rates["angular_velocity"] - w)[inner]) < 5e-7 * np.max(np.abs(w))


@pytest.mark.slow
def test_flexible_fourbar_fmu_equals_the_solver_through_the_singular_passes(tmp_path):
    """The flexible four-bar sample over its 2 s, which pass the singular (folded) configuration:
    against the default compiled DOP853 with QR partitioning at rtol 1e-8, atol 1e-10 — a decade
    looser than where the runs through these passes start to fail (at rtol 1e-9 … 1e-10 the
    partitioned runs stop at a pass, or not, depending on the last digit of atol and on the CPU:
    docs/performance.md, tolerance grid), so the reference holds on any machine.  The FMU's
    partition, refreshed at every step, passes without help.  Measured at FMU tolerance 1e-10:
    bodies' positions 5.7e-9, the coupler's frame 3.2e-9 and modal coordinates 1.5e-6 of their
    amplitude 2.6e-3, reactions 8.6e-5 of the largest reaction force (the reference's own error near
    the passes, where the reactions are sensitive: 2.8e-5 against a run at rtol 1e-9)."""
    model = solver.load_model(SAMPLES / "fourbar_singular_flexible.mbs.json")
    path = export_fmu(model, tmp_path / "fourbar.fmu")
    assert validate_fmu(str(path)) == []
    res = solver.simulate(model, t_end=2.0, output_step=0.01, rtol=1e-8, atol=1e-10, integrator="auto",
                          partitioning="qr", codegen=True)
    r = run(path, 2.0)
    frame, modal = flexible_errors(res, r, "coupler")
    assert frame < 5e-8 and modal < 3e-5, (frame, modal)
    positions = outputs_of(path, quantities=("position",))
    err, where = worst_error(model, res, r, positions)
    assert err < 5e-8, where
    err, where = worst_error(model, res, r, rigid_and_reactions(path))
    assert err < 3e-4, where


def test_a_flexible_model_the_kernels_do_not_cover_is_refused_naming_the_element(tmp_path):
    """A rotational spring-damper on a joint at a flexible node is not generated: a ModelError names it."""
    model = driven_beam()
    model.add_rotational_spring_damper("twist", "hub", stiffness=5.0)
    with pytest.raises(solver.ModelError, match=r"forces\.twist: a RotationalSpringDamperForce on a flexible body "
                                                r"is not generated as C, so it cannot be in an FMU"):
        export_fmu(model, tmp_path / "x.fmu")
    assert not (tmp_path / "x.fmu").exists()


@pytest.mark.slow
@pytest.mark.sweep      # the cantilever pendulum and the singular four-bar FMUs keep the flexible FMU in make test
def test_driven_flexible_beam_fmu_equals_the_solver(tmp_path):
    """Drivers on joints at flexible nodes (the beam's driven hub to ground, a driven sleeve at its
    tip, a ball in a socket on it), 0.02 s: against the compiled DOP853 run at rtol 1e-10.  The beam's
    Craig–Bampton constraint modes are stiff (≈ 80 000 internal steps per simulated second for the
    explicit integrator), and the reactions and driver forces carry its elastic forces: a position
    difference of 1e-11 m against the axial stiffness EA/L = 5e7 N/m is 5e-4 N.  Measured at FMU
    tolerance 1e-10: positions 4.9e-11, the beam's frame 4.1e-11 and modal coordinates 1.3e-7 of their
    amplitude, reactions and driver forces 6.8e-6 of the largest (over 0.05 s: 7.7e-11, 4.2e-11, 7.9e-8
    and 6.8e-6; against the reference at rtol 1e-12 about the same)."""
    model = driven_beam()
    path = export_fmu(model, tmp_path / "driven.fmu", step=0.01)
    res = solver.simulate(model, t_end=0.02, output_step=0.01, rtol=1e-10, atol=1e-12, integrator="auto",
                          codegen=True)
    r = run(path, 0.02)
    frame, modal = flexible_errors(res, r, "beam")
    assert frame < 1e-9 and modal < 1e-6, (frame, modal)
    err, where = worst_error(model, res, r, outputs_of(path, quantities=("position",)))
    assert err < 1e-9, where
    err, where = worst_error(model, res, r, rigid_and_reactions(path) + outputs_of(path, quantities=("force",)))
    assert err < 5e-5, where
