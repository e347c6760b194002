"""Output rows post-processed in C by the compiled step loop (solver/codegen/output_tree.c,
output_cartesian.c) equal the Python post-processing (RelativeSystem / CartesianSystem
.postprocess_batch: numpy of their own) to round-off, obey Newton–Euler's balance (the whole arm about
its base joint; every body of a closed loop), and mix with rows post-processed in Python in one chunk
of the recorder.  Models the C does not cover say why and keep the Python rows."""
import ctypes
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools"))
import peers  # noqa: E402
import scale_models  # noqa: E402

import solver  # noqa: E402
from solver.analysis.recording import Recorder, output_columns  # noqa: E402
from solver.codegen.output import compiled_output, open_tree_solved, row_output  # noqa: E402
from solver.formulations.cartesian import CartesianSystem  # noqa: E402
from solver.formulations.relative import RelativeSystem  # noqa: E402
from solver.math.rotations import cross  # noqa: E402
from solver.model.fields import inertia_matrix  # noqa: E402

RATES = (0.4, -0.3, 0.8, 0.2, -0.6, 0.5, 1.1)    # a 3-D motion of the arm, every joint moving
POST = ("r", "A", "v", "w", "a", "alpha", "reaction_force", "reaction_torque", "reaction_force_joint",
        "reaction_torque_joint", "driver_force")
# the same formulas in another order of summation (numpy over the points against C per point): a few
# ulps per operation along a tree of depth ≤ 7, times the cancellation of −L_e + K_e Ẏ̂ (≤ 100 here)
ROUND_OFF = 1e-10


def branched():
    """A tree of every one-to-three-coordinate mobilizer: a cart on an inclined slide, a cylindrical
    and a universal joint, a planar joint, a fixed joint and an inverted revolute (its body_i the
    child), bodies turned and with products of inertia."""
    m = solver.Model(name="branched", gravity=(0.0, -9.81, 0.0))
    turned = (np.cos(0.2), np.sin(0.2) * 0.6, 0.0, np.sin(0.2) * 0.8)
    m.add_body("cart", mass=5.0, inertia=(0.2, 0.3, 0.25, 0.01, 0.02, -0.015), position=(0.0, 0.0, 0.0),
               orientation=turned, velocity=(0.1, 0.0, 0.0))
    m.add_body("left", mass=1.5, inertia=(0.05, 0.01, 0.05), position=(-0.3, -0.4, 0.0),
               angular_velocity=(0.0, 0.5, 1.0))
    m.add_body("right", mass=2.0, inertia=(0.04, 0.02, 0.03, 0.0, 0.005, 0.0), position=(0.3, -0.3, 0.1),
               orientation=turned)
    m.add_body("tip", mass=0.7, inertia=(0.01, 0.002, 0.01), position=(0.3, -0.8, 0.15))
    m.add_body("flat", mass=0.4, inertia=(0.003, 0.004, 0.005), position=(-0.3, -0.9, 0.0))
    m.add_body("weld", mass=0.2, inertia=(0.001, 0.001, 0.001), position=(0.35, -1.0, 0.15))
    m.add_joint("slide", "prismatic", solver.GROUND, "cart", origin=(0.0, 0.0, 0.0), axis=(0.8, 0.6, 0.0))
    m.add_joint("hinge_l", "universal", "cart", "left", origin=(-0.3, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("hinge_r", "cylindrical", "cart", "right", origin=(0.3, 0.0, 0.1), axis=(0.0, 0.6, 0.8))
    m.add_joint("elbow", "revolute", "tip", "right", origin=(0.3, -0.6, 0.1), axis=(1.0, 0.0, 0.0))
    m.add_joint("plane", "planar", "left", "flat", origin=(-0.3, -0.8, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("welded", "fixed", "tip", "weld", origin=(0.35, -0.95, 0.15))
    return m


def arm_with_spring(**kw):
    """The free-falling arm with a spring between links 2 and 6 (generated in the kernels' loads:
    in output_tree.c's Q̂; its potential in the energy table)."""
    model, _ = peers.free_falling_arm(**kw)
    at = {b: tuple(model.bodies[b].values["position"]) for b in ("link2", "link6")}
    model.add_spring_damper("sd", "link2", "link6", point_i=at["link2"], point_j=at["link6"], stiffness=500.0,
                            free_length=0.2)
    return model


@pytest.fixture(scope="module")
def arm_run():
    model = arm_with_spring(t_end=1.0, rates=RATES)
    compiled = solver.compile_model(model, formulation="relative", integrator="auto", rtol=1e-8, atol=1e-10)
    return compiled, solver.simulate(compiled)


def rows_of(res):
    return {name: np.asarray(res._full(name)) for name in (*POST, "t", "q", "qd", "qdd", "lam", "energy_table")}


def python_rows(system, rows):
    kind = RelativeSystem if isinstance(system, RelativeSystem) else CartesianSystem
    post = kind.postprocess_batch(system, *(rows[k] for k in ("t", "q", "qd", "qdd", "lam")))
    kinetic, gravity, spring, strain = post.pop("energy").T
    post["energy_table"] = np.column_stack([kinetic, gravity + spring, gravity, spring, strain,
                                            kinetic + gravity + spring + strain])
    return post


def assert_round_off(rows, post):
    for name in (*POST, "energy_table"):
        scale = max(1.0, float(np.max(np.abs(post[name]), initial=0.0)))
        assert np.max(np.abs(rows[name] - post[name]), initial=0.0) <= ROUND_OFF * scale, name


def test_the_arm_rows_from_c_equal_the_python_post_processing(arm_run):
    compiled, res = arm_run
    assert compiled_output(compiled.system) is None          # the C rows, not Python's
    assert res.status == "ok" and len(res) == 101
    rows = rows_of(res)
    assert_round_off(rows, python_rows(compiled.system, rows))


def test_rows_stored_one_at_a_time_come_from_c_too(arm_run, monkeypatch):
    """The Python step loop (LSODA: "adams" kept there as interactive runs keep it, Run.python_loop)
    stores its rows one at a time (Recorder.add): post-processed by cg_tree_output as well (Run sets
    Recorder.post_rows), equal to the Python post-processing."""
    from solver.analysis.dynamics import Run
    monkeypatch.setattr(Run, "python_loop", ("adams",))
    compiled, _ = arm_run
    res = solver.simulate(compiled, integrator="adams")
    assert res.status == "ok"
    rows = rows_of(res)
    assert_round_off(rows, python_rows(compiled.system, rows))


def test_the_arm_rows_balance_newton_euler_about_the_base_joint(arm_run):
    """The base joint's reaction (on link 1, from ground) carries the whole arm (the spring's forces
    are internal): force Σ m (a − g), moment about its origin P Σ (r − P) × m (a − g) + J α + ω × J ω
    — the rows' own a, α, ω, A.  The total energy (the spring's potential in it) is conserved."""
    compiled, res = arm_run
    system, rows = compiled.system, rows_of(res)
    model = arm_with_spring()
    base = model.joints["J1"].values
    assert (base["body_i"], base["body_j"]) == (solver.GROUND, "link1")
    P = np.asarray(base["origin"], dtype=float)
    m = system.mass_values[None, :, None]
    g = np.asarray(system.gravity, dtype=float)
    f = m * (rows["a"] - g)
    J = rows["A"] @ np.array([inertia_matrix(model.bodies[b].values["inertia"]) for b in system.body_names]) \
        @ np.swapaxes(rows["A"], -1, -2)
    Jw = np.einsum("nbij,nbj->nbi", J, rows["w"])
    moment = cross(rows["r"] - P, f) + np.einsum("nbij,nbj->nbi", J, rows["alpha"]) + cross(rows["w"], Jw)
    k = system.joint_names.index("J1")
    scale = np.max(np.abs(f.sum(axis=1)))
    assert np.max(np.abs(rows["reaction_force"][:, k] - f.sum(axis=1))) <= 1e-12 * scale
    assert np.max(np.abs(rows["reaction_torque"][:, k] - moment.sum(axis=1))) <= 1e-12 * scale
    total = rows["energy_table"][:, 5]
    assert np.ptp(rows["energy_table"][:, 3]) > 1.0                     # the spring works
    assert np.ptp(total) <= 1e-6 * np.max(np.abs(rows["energy_table"][:, :4]))     # rtol 1e-8 over 1 s


def test_a_branched_tree_of_every_tree_joint_kind_equals_python():
    compiled = solver.compile_model(branched(), formulation="relative", integrator="auto", t_end=0.5,
                                    output_step=0.01, rtol=1e-8, atol=1e-10)
    assert compiled_output(compiled.system) is None
    res = solver.simulate(compiled)
    assert res.status == "ok"
    rows = rows_of(res)
    assert np.max(np.abs(rows["reaction_force"])) > 1.0
    assert_round_off(rows, python_rows(compiled.system, rows))


def test_rows_from_c_and_from_python_mix_in_one_chunk(arm_run):
    """Rows handed over post-processed (add_rows(post=…)) and rows the recorder post-processes (add,
    add_rows without post) in chunks of 7 rows: every column as the Python post-processing gives it."""
    compiled, res = arm_run
    system, rows = compiled.system, rows_of(res)
    reference = python_rows(system, rows)
    row_bytes = sum(np.dtype(dtype).itemsize * int(np.prod(shape)) for shape, dtype in output_columns(system).values())
    rec = Recorder(system, {}, chunk_bytes=7 * row_bytes)
    assert rec.outputs.rows == 7
    n = len(rows["t"])
    method = "qr"
    state = lambda a, b: [rows[k][a:b] for k in ("t", "q", "qd", "qdd", "lam")]          # noqa: E731
    ones = np.ones(n)
    for k in range(3):                                         # one at a time, Python
        rec.add(*(x[0] for x in state(k, k + 1)), 0.0, 1.0, method)
    energy = reference["energy_table"][:, [0, 2, 3, 4]]              # kinetic, gravity, spring, strain
    post = {name: reference[name] for name in POST}
    post["energy"] = energy
    rec.add_rows(*state(3, 40), np.zeros(37), ones[3:40], method, post={k: v[3:40] for k, v in post.items()})
    rec.add_rows(*state(40, 60), np.zeros(20), ones[40:60], method)      # a block, Python
    rec.add_rows(*state(60, n), np.zeros(n - 60), ones[60:], method, post={k: v[60:] for k, v in post.items()})
    built = rows_of(rec.build())
    assert_round_off(built, reference)


def test_the_cartesian_rows_of_a_closed_loop_equal_python_and_balance_every_body():
    """Two parallelogram four-bars in a row (6 redundant equations, minimum-norm multipliers): the C
    rows equal Python's, and every body's reactions (+ on body_j, − on body_i) and weight give m a."""
    model = scale_models.planar_loops(2, omega=1.0)
    compiled = solver.compile_model(model, formulation="cartesian", integrator="auto", t_end=0.5)
    system = compiled.system
    assert compiled_output(system) is None
    res = solver.simulate(compiled)
    assert res.status == "ok"
    rows = rows_of(res)
    assert_round_off(rows, python_rows(system, rows))
    force = system.mass_values[None, :, None] * np.asarray(system.gravity, dtype=float)
    force = np.repeat(force, len(rows["t"]), axis=0)
    for k, joint in enumerate(system.joints):
        if joint.body_j >= 0:
            force[:, joint.body_j] += rows["reaction_force"][:, k]
        if joint.body_i >= 0:
            force[:, joint.body_i] -= rows["reaction_force"][:, k]
    ma = system.mass_values[None, :, None] * rows["a"]
    assert np.max(np.abs(force - ma)) <= 1e-9 * np.max(np.abs(rows["reaction_force"]))


def test_the_cartesian_rows_of_a_driven_chain_equal_python():
    """A 3-link chain (joint 1 driven, a spring-damper to ground): driver forces from λ, reactions of
    joints carrying a driver's rows, the spring's potential."""
    model = scale_models.chain(3)
    model.add_driver("spin", "J1", expression="0.4*sin(3*t)")
    model.add_spring_damper("pull", solver.GROUND, "L3", point_i=(0.3, 0.1, 0.0),
                            point_j=tuple(model.bodies["L3"].values["position"]), stiffness=20.0, damping=0.1)
    compiled = solver.compile_model(model, formulation="cartesian", integrator="auto", t_end=0.5)
    assert compiled_output(compiled.system) is None
    res = solver.simulate(compiled)
    assert res.status == "ok"
    rows = rows_of(res)
    assert np.max(np.abs(rows["driver_force"])) > 1e-3 and np.ptp(rows["energy_table"][:, 3]) > 1e-4
    assert_round_off(rows, python_rows(compiled.system, rows))


def test_a_kinematic_analysis_rows_come_from_c():
    """The driven four-bar sample has no degree of freedom: a kinematic analysis, its rows stored one
    at a time (Recorder.post_rows, Cartesian): driver torque and reactions as Python gives them."""
    compiled = solver.compile_model(solver.load_model(str(peers.ROOT / "sample_models" / "fourbar.mbs.json")),
                                    t_end=0.5)
    assert compiled_output(compiled.system) is None
    res = solver.simulate(compiled)
    assert res.status == "ok" and any(e["kind"] == "analysis" for e in res.events)
    rows = rows_of(res)
    assert np.max(np.abs(rows["driver_force"])) > 0.1
    assert_round_off(rows, python_rows(compiled.system, rows))


def test_an_interactive_pull_on_the_arm_keeps_its_reactions(arm_run):
    """Interact adds its held loads to the force elements after the run started: the tree's C rows
    (whose Q̂ has only the generated loads) give way to Python's, which carry the pull."""
    compiled, _ = arm_run
    session = solver.InteractiveRun(compiled)
    tip = session.frame(compiled.system.body_names.index("link7"))[0]
    session.set_pull("link7", tip, tip + np.array([0.0, 0.0, 0.3]))
    for _ in range(3):
        session.step(0.02)
    res = session.results()
    rows = rows_of(res)
    python = python_rows(session.run.system, rows)
    assert np.max(np.abs(python["reaction_force"][-1] - python_rows(compiled.system, rows)["reaction_force"][-1])) > 1.0
    assert_round_off(rows, python)


@pytest.mark.parametrize("case", ["spring", "newton-euler", "coupler"])
def test_what_output_c_does_not_cover_says_why(case):
    """A rotational spring-damper (its load on the joint column comes from contact.c, not from the
    kernels' loads), reactions by eq. 28 and a coupler on a cut joint (its load split between the
    joints in Python): Python rows."""
    model = arm_with_spring(t_end=1.0, rates=RATES)
    if case == "spring":
        model.add_rotational_spring_damper("s", "J2", stiffness=1.0)
    if case == "coupler":
        model = solver.load_model(str(peers.ROOT / "sample_models" / "fourbar.mbs.json"))
        for name in list(model.drivers):
            model.remove(name)
        model.add_coupler("c", "C", "D")                 # C: the relative formulation's cut joint
    compiled = solver.compile_model(model, formulation="relative", integrator="auto",
                                    reactions="newton-euler" if case == "newton-euler" else "nonrecursive")
    why = compiled_output(compiled.system)
    assert isinstance(why, str) and (case != "coupler" or why.startswith("a coupler on a cut joint"))


def test_a_driver_on_a_coupled_coordinate_equals_python():
    """The arm with joint 2 driven and joint 3 following it by a polynomial coupler (both tree
    coordinates): the driver's force by eq. 36 less the coupler's load p'(θ₂) λ on its coordinate."""
    model = arm_with_spring(t_end=0.5, rates=RATES)
    model.add_driver("d2", "J2", expression="0.3*sin(2*t)")
    model.add_coupler("c", "J2", "J3", coefficients=[0.05, 0.5, 0.2])
    system, rows = relative_rows(model)
    assert system.couplers[0].source.column == system.drivers[0].column
    assert_round_off(rows, python_rows(system, rows))


# ---- the relative formulation with constraint rows (cut joints, drivers, Euler parameters): output_tree.c
# after relative.c, the cut joints' wrenches from λ ----------------------------------------------------------

def spatial_fourbar():
    """A spatial RSSR four-bar: crank (revolute about z at the ground), coupler on a spherical joint at
    the crank's tip (Euler parameters in the tree), rocker (revolute about x), coupler–rocker spherical
    (the cut joint): 2 DOF (the crank and the coupler's spin), gravity, every body turned."""
    m = solver.Model(name="rssr", gravity=(0.0, -9.81, -2.0))
    m.add_body("crank", mass=1.0, inertia=(0.01, 0.02, 0.015, 0.001, 0.0, 0.002), position=(0.1, 0.0, 0.0),
               angular_velocity=(0.0, 0.0, 2.0))
    m.add_body("coupler", mass=2.0, inertia=(0.05, 0.01, 0.04), position=(0.3, 0.2, 0.1),
               orientation=(np.cos(0.3), 0.0, np.sin(0.3), 0.0))
    m.add_body("rocker", mass=1.5, inertia=(0.02, 0.03, 0.01), position=(0.4, 0.35, 0.1))
    m.add_joint("Rc", "revolute", solver.GROUND, "crank", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    m.add_joint("S1", "spherical", "crank", "coupler", origin=(0.2, 0.0, 0.0))
    m.add_joint("Rr", "revolute", solver.GROUND, "rocker", origin=(0.4, 0.35, -0.2), axis=(1.0, 0.0, 0.0))
    m.add_joint("S2", "spherical", "coupler", "rocker", origin=(0.4, 0.4, 0.2))
    return m


def driven_slider_crank():
    """The slider–crank sample with its rod–piston joint (the cut joint) driven: a kinematic analysis
    whose rows are stored one at a time (Recorder.post_rows), the driver's force −λ of a cut-joint row,
    its λ in the cut joint's reaction."""
    model = solver.load_model(str(peers.ROOT / "sample_models" / "slider_crank.mbs.json"))
    model.add_driver("swing", "rod_piston", expression="0.3*sin(2*t)")
    return model


def relative_rows(model, **settings):
    compiled = solver.compile_model(model, formulation="relative", integrator="auto", **settings)
    system = compiled.system
    assert system.m > len(system.norm_rows) and compiled_output(system) is None     # constraint rows, C rows
    res = solver.simulate(compiled)
    assert res.status == "ok"
    return system, rows_of(res)


def assert_body_balance(system, rows):
    """Newton–Euler on every body from the rows alone: the reactions of its joints (+ on body_j,
    − on body_i, moments about the joint origin P on body_j) and its weight give m a and
    J α + ω × J ω about the CM (J = A J' Aᵀ), to round-off (eq. 30 is eq. 28 rearranged, and the cut
    joints' wrenches enter both sides' bodies)."""
    g = np.asarray(system.gravity, dtype=float)
    force = system.mass_values[None, :, None] * (g - rows["a"])
    J = rows["A"] @ system.inertia @ np.swapaxes(rows["A"], -1, -2)
    Jw = np.einsum("nbij,nbj->nbi", J, rows["w"])
    moment = -(np.einsum("nbij,nbj->nbi", J, rows["alpha"]) + cross(rows["w"], Jw))
    for k, (bi, bj) in enumerate(system.joint_ends):
        s_j = system.cjoints[k].s_j
        P = s_j if bj < 0 else rows["r"][:, bj] + rows["A"][:, bj] @ s_j
        F, T = rows["reaction_force"][:, k], rows["reaction_torque"][:, k]
        for b, sign in ((bj, 1.0), (bi, -1.0)):
            if b >= 0:
                force[:, b] += sign * F
                moment[:, b] += sign * (T + cross(P - rows["r"][:, b], F))
    scale = max(np.max(np.abs(rows["reaction_force"])), np.max(np.abs(rows["reaction_torque"])))
    assert np.max(np.abs(force)) <= ROUND_OFF * scale
    assert np.max(np.abs(moment)) <= ROUND_OFF * scale


def test_a_driven_fourbar_rows_from_c_equal_python_and_balance_every_body():
    """The four-bar sample (crank driven on its tree joint, a kinematic analysis: rows one at a time,
    cg_tree_output through row_output): reactions of the cut joint from λ, the driver's torque by
    eq. 36 — as Python gives them, and each body's Newton–Euler balance closes on the C rows."""
    model = solver.load_model(str(peers.ROOT / "sample_models" / "fourbar.mbs.json"))
    system, rows = relative_rows(model, t_end=0.5)
    assert np.max(np.abs(rows["driver_force"])) > 0.1
    assert_round_off(rows, python_rows(system, rows))
    assert_body_balance(system, rows)


def test_a_slider_crank_driven_on_its_cut_joint_equals_python():
    system, rows = relative_rows(driven_slider_crank(), t_end=0.5)
    d = system.drivers[0]
    assert d.column is None and np.max(np.abs(rows["driver_force"])) > 0.1      # on the cut joint: −λ
    assert_round_off(rows, python_rows(system, rows))
    assert_body_balance(system, rows)


def test_a_spatial_fourbar_with_euler_parameters_equals_python_and_conserves_energy():
    """Dynamics stepped in C (rows from the compiled loop, k_output): a spherical joint in the tree
    (its normalization row), a spherical cut joint; energy conserved to the integration's accuracy."""
    system, rows = relative_rows(spatial_fourbar(), t_end=0.5, output_step=0.01, rtol=1e-9, atol=1e-11)
    assert system.norm_rows and system.cut
    assert np.max(np.abs(rows["reaction_force"][:, [k for k, _ in system.cut]])) > 1.0
    assert_round_off(rows, python_rows(system, rows))
    assert_body_balance(system, rows)
    total = rows["energy_table"][:, 5]
    assert np.ptp(total) <= 1e-6 * np.max(np.abs(rows["energy_table"][:, :4]))


def test_the_fourbar_row_rows_from_c_equal_python():
    """The IFToMM four-bar row with N = 10 (10 cut joints, redundant rows: minimum-norm λ; the band
    algebra), 0.5 s on the defaults."""
    system, rows = relative_rows(scale_models.fourbar_row(10), t_end=0.5)
    assert len(system.cut) == 10
    assert_round_off(rows, python_rows(system, rows))
    assert_body_balance(system, rows)



def spinning_slider():
    """A slider on a spinning arm (revolute then prismatic, both with armature; an open tree)."""
    m = solver.Model(name="slider", gravity=(0.0, -9.81, 0.0))
    m.add_body("a", mass=1.0, inertia=(0.01, 0.02, 0.03), position=(0.5, 0.0, 0.0), angular_velocity=(0, 0, 2.0))
    m.add_body("s", mass=0.5, inertia=(0.001, 0.002, 0.003), position=(0.8, 0.0, 0.0), velocity=(0.1, 1.6, 0.0),
               angular_velocity=(0, 0, 2.0))
    m.add_joint("r", "revolute", solver.GROUND, "a", origin=(0.0, 0.0, 0.0), axis=(0.0, 0.0, 1.0), armature=0.2)
    m.add_joint("p", "prismatic", "a", "s", origin=(0.5, 0.0, 0.0), axis=(1.0, 0.0, 0.0), armature=0.3)
    return m


def slider_crank_with_armature():
    """The slider–crank driven on its cut joint, armature on the crank's revolute and the piston's
    prismatic (tree joints): the rotors' loads in the reactions and the driver's force."""
    model = driven_slider_crank()
    model.joints["crank_pin"].values["armature"] = 0.1
    model.joints["cylinder"].values["armature"] = 0.4
    return model


@pytest.mark.parametrize("make", [spinning_slider, slider_crank_with_armature])
def test_joint_armature_rows_from_c_equal_python(make):
    """The rotors' loads ∓a θ̈ w on a tree joint's bodies (w along a revolute's axis, a prismatic's
    direction at its origin) and their energy Σ ½ a θ̇²: as RelativeSystem._add_rotor_loads."""
    compiled = solver.compile_model(make(), formulation="relative", integrator="auto", t_end=0.5)
    assert compiled.system.armatures and compiled_output(compiled.system) is None
    res = solver.simulate(compiled)
    assert res.status == "ok"
    rows = rows_of(res)
    assert_round_off(rows, python_rows(compiled.system, rows))
    if make is spinning_slider:           # conservative: the rotors' energy in the total
        total = rows["energy_table"][:, 5]
        assert np.ptp(total) <= 1e-6 * np.max(np.abs(rows["energy_table"][:, :4]))


def two_trees(offset):
    """Two trees hanging from ground at ``offset`` (a pendulum with an inverted second joint, a slider):
    the same motion wherever they are."""
    o = np.asarray(offset, dtype=float)
    m = solver.Model(name="two trees", gravity=(0.0, -9.81, 0.0))
    m.add_body("a1", mass=1.0, inertia=(0.01, 0.02, 0.03), position=tuple(o + (0.5, 0, 0)), angular_velocity=(0, 0, 1.0))
    m.add_body("a2", mass=0.5, inertia=(0.01, 0.01, 0.01, 0.001, 0, 0), position=tuple(o + (1.0, -0.2, 0.1)))
    m.add_body("b1", mass=2.0, inertia=(0.05, 0.02, 0.03), position=tuple(o + (-0.5, 0, 0.3)), velocity=(0, 0, 0.2))
    m.add_joint("ja1", "revolute", solver.GROUND, "a1", origin=tuple(o), axis=(0, 0, 1))
    m.add_joint("ja2", "revolute", "a2", "a1", origin=tuple(o + (1.0, 0, 0)), axis=(0, 0.6, 0.8))     # inverted
    m.add_joint("jb1", "prismatic", solver.GROUND, "b1", origin=tuple(o + (-0.5, 0, 0.3)), axis=(0.6, 0.0, 0.8))
    return m


def test_the_tree_rows_are_the_same_far_from_the_origin():
    """output_tree.c reads the recursion about each ground subtree's root CM (articulated.c's shift), so
    the accelerations and the reactions about the joint origins of two trees 300 m from the global
    origin equal those at the origin to the integration's round-off (observed ≤ 1e-12 of the column's
    scale; the Python post-processing, about the global origin, loses 1.8e-10 of the torques' scale
    there to cancellation between n_O and P × f)."""
    rows = []
    for offset in ((0.0, 0.0, 0.0), (300.0, -50.0, 20.0)):
        compiled = solver.compile_model(two_trees(offset), formulation="relative", integrator="auto", t_end=1.0,
                                        output_step=0.01, rtol=1e-8, atol=1e-10)
        assert compiled_output(compiled.system) is None
        rows.append(rows_of(solver.simulate(compiled)))
    near, far = rows
    for name in ("a", "alpha", "reaction_force", "reaction_torque", "reaction_force_joint", "reaction_torque_joint"):
        scale = np.max(np.abs(near[name]))
        assert np.max(np.abs(far[name] - near[name])) <= 1e-11 * scale, name


def test_the_open_tree_rows_of_the_recursion_equal_the_composite_form(arm_run):
    """The open tree's two C forms at the same states: cg_tree_output_open (the articulated-body
    recursion's R̂'_e = K_e Ẏ̂'_C − L_e about the root CM, what the loop's cg_tree_output_solved reads)
    and cg_tree_output (the composite form of eq. 30 about the global origin, the one systems with
    constraint rows or armature take) — two formulations of the same reactions, to round-off."""
    compiled, res = arm_run
    system, rows = compiled.system, rows_of(res)
    assert open_tree_solved(system) and not open_tree_solved(solver.compile_model(
        spinning_slider(), formulation="relative", integrator="auto").system)      # armature: composite
    output = row_output(system)
    states = [rows[k] for k in ("t", "q", "qd", "qdd", "lam")]
    solved = {k: np.array(v) for k, v in output.states(*states).items()}
    output._row = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 4, ctypes.c_int)(system.kernels.pointer("cg_tree_output"))
    composite = output.states(*states)
    for name in (*POST[:-1], "energy"):
        scale = max(1.0, float(np.max(np.abs(composite[name]))))
        assert np.max(np.abs(solved[name] - composite[name])) <= ROUND_OFF * scale, name
