"""Contact elements (solver/contact, docs/contact.md) against closed forms and MuJoCo.

Closed forms checked (all through ``solver.simulate(model)``):

* Hunt–Crossley impact without gravity: a ball striking a fixed plane at v_in leaves at v_out,
  the root of a (v_in + v_out) = ln[(1 + a v_in)/(1 − a v_out)], a = λ/k (solver/contact/laws.py
  derives it; e_r ≈ 1 − (2/3) a v_in for small a v_in): 1e-6 relative (the integrator's rtol
  1e-8 over the contact).  The kinetic energy lost equals the damping's work ∫ λ δ^e δ̇² dt
  (Simpson over 5e-5 s samples of a ≈ 10 ms contact): 1e-5 relative.
* Bouncing ball under gravity: the apex after each bounce, h' = h e_r(√(2gh))², up to the
  gravity impulse during the contact, which the closed form leaves out: |Δh'/h'| ≤ 2 g T_c / v_in
  with T_c the contact time (≈ 1e-2 here).
* Block on an incline: tan θ < μ_s holds it, creeping at the slip speed s* where μ(s*) = tan θ
  (the law's regularization, ``ContactLaw.creep_speed``): 1e-3 relative, and its drift over the
  second half ≤ s* t (1 + 1e-2, the transient's decay; measured 1.2e-3 above); tan θ > μ_s slides with
  a = g (sin θ − μ_d cos θ): 1e-5 relative after the transient.
* Sphere and cylinder rolling down an incline without slipping: a = g sin θ/(1 + I/(m ρ²)) with
  ρ = R − δ/2 the radius to the contact point (δ the static penetration, (m g cos θ/(n k))^(1/e)
  for n points): 1e-5 relative; that is (5/7) g sin θ and (2/3) g sin θ within 2.5e-3 and
  1.9e-3 (δ/R).
* The sample sample_models/box_on_ramp.mbs.json (its cube starts at its static penetration):
  a = g (sin θ − μ_d cos θ) from 0.5 s on, 1e-6 relative (measured 7.5e-11; the corners' normal
  forces settle after the start: 2e-5 at 0.2 s).
* MuJoCo, in the same process, slides the same box down the same ramp: its acceleration is
  within 1e-3 of ours (measured 1.4e-4; MuJoCo's soft contact lets the box's corners chatter,
  its speed ripples by ~1 %, so its slope is a least-squares fit over the second half).
"""
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import cumulative_trapezoid, simpson

import solver
from solver.contact.laws import ContactLaw, hunt_crossley_exit_speed

G = 9.81
R, M = 0.05, 0.5
PLANE = {"shape": "plane", "point": (0, 0, 0), "normal": (0, 1, 0)}


def ball(v0=0.0, g=G, y0=0.06, lam=1e5, k=1e6):
    m = solver.Model(name="ball", gravity=(0, -g, 0))
    m.add_body("ball", mass=M, inertia=(0.4 * M * R * R,) * 3, position=(0, y0, 0), velocity=(0, -v0, 0),
               geometry={"shape": "sphere", "radius": R})
    m.add_contact("c1", "ground", "ball", stiffness=k, damping=lam, exponent=1.5, damping_law="hunt_crossley",
                  geometry_i=PLANE)
    return m


@pytest.mark.parametrize("v_in", [0.5, 2.0])
def test_hunt_crossley_exit_speed_and_dissipated_energy(v_in):
    res = solver.simulate(ball(v_in, g=0.0, y0=R + 0.2 * v_in * 0.01), t_end=0.035, output_step=5e-5)
    vy = res.body_velocity("ball")[:, 1]
    v_out = hunt_crossley_exit_speed(v_in, 1e6, 1e5)
    assert abs(vy[-1] / v_out - 1) < 1e-6
    assert np.all(res.contact_force("c1")[-1] == 0.0)
    delta = np.maximum(R - res.body_position("ball")[:, 1], 0.0)
    assert np.allclose(res.contact_dissipation("c1"), 1e5 * delta ** 1.5 * vy ** 2, rtol=1e-12, atol=0)
    dissipated = simpson(res.contact_dissipation("c1"), x=res.t)
    assert abs(dissipated / (0.5 * M * (v_in ** 2 - vy[-1] ** 2)) - 1) < 1e-5


def test_bouncing_ball_apex_heights_follow_the_restitution():
    res = solver.simulate(ball(y0=R + 0.2), t_end=0.9, output_step=5e-4)
    y, vy = res.body_position("ball")[:, 1], res.body_velocity("ball")[:, 1]
    apart = np.all(res.contact_force("c1") == 0.0, axis=1)
    height = y - R + vy ** 2 / (2 * G)            # apex height of the flight each apart sample is in
    flights = np.split(np.flatnonzero(apart), np.flatnonzero(np.diff(np.flatnonzero(apart)) > 1) + 1)
    apexes = [height[f].mean() for f in flights]
    contact_time = res.t[flights[1][0]] - res.t[flights[0][-1]]
    assert len(apexes) >= 3 and all(np.ptp(height[f]) < 1e-6 for f in flights[:3])   # ballistic flights
    for h, h_next in zip(apexes[:2], apexes[1:3]):
        v_in = np.sqrt(2 * G * h)
        e = hunt_crossley_exit_speed(v_in, 1e6, 1e5) / v_in
        assert abs(h_next / (h * e * e) - 1) < 2 * G * contact_time / v_in
    # energy lost = energy the contact dissipated (trapezoid over 0.5 ms samples of ≈ 10 ms contacts:
    # 2.1e-3 of it; 1e-3 samples: 9.3e-3, 2e-4: 2.7e-4, the trapezoid's h²)
    lost = res.energy["total"][0] - res.energy["total"]
    dissipated = cumulative_trapezoid(res.contact_dissipation("c1"), res.t, initial=0.0)
    assert np.max(np.abs(lost - dissipated)) < 1e-2 * lost[-1]


def rot_z(theta):
    c, s = np.cos(theta), np.sin(theta)
    return [[c, -s, 0], [s, c, 0], [0, 0, 1]]


def on_incline(theta, shape, inertia, mass=1.0, mu=(0.5, 0.4), orientation=None, height=0.05):
    """A body resting on a plane through the origin tilted by θ about z (downhill: −x)."""
    n = np.array([-np.sin(theta), np.cos(theta), 0.0])
    m = solver.Model(name="incline", gravity=(0, -G, 0))
    m.add_body("b", mass=mass, inertia=inertia, position=tuple(n * height), orientation=orientation, geometry=shape)
    m.add_contact("c", "ground", "b", stiffness=1e6, damping=1e3, exponent=1.5, friction=mu,
                  geometry_i={"shape": "plane", "point": (0, 0, 0), "normal": tuple(n)})
    return m


def downhill(res, theta, quantity="velocity"):
    e = np.array([np.cos(theta), np.sin(theta), 0.0])
    return -getattr(res, f"body_{quantity}")("b") @ e


def steady_acceleration(res, theta):
    v, t = downhill(res, theta), res.t
    k = len(t) // 2
    return (v[-1] - v[k]) / (t[-1] - t[k])


BOX = {"shape": "box", "size": (0.1, 0.1, 0.1)}
BOX_INERTIA = (1.0 * 0.02 / 12,) * 3


@pytest.mark.parametrize("codegen", ["off", "on"])
def test_box_slides_with_dynamic_friction(codegen):
    theta = np.radians(30)
    res = solver.simulate(on_incline(theta, BOX, BOX_INERTIA, orientation=rot_z(theta), height=0.0498),
                          t_end=0.6, output_step=0.02, codegen=codegen)
    a = steady_acceleration(res, theta)
    assert abs(a / (G * (np.sin(theta) - 0.4 * np.cos(theta))) - 1) < 1e-5
    F = res.contact_force("c")[-1]                      # on the box: friction uphill, normal out of the plane
    assert abs(np.linalg.norm(F) / (G * np.hypot(np.cos(theta), 0.4 * np.cos(theta))) - 1) < 1e-5


def test_box_sticks_and_creeps_at_the_laws_slip_speed():
    theta = np.radians(20)
    res = solver.simulate(on_incline(theta, BOX, BOX_INERTIA, orientation=rot_z(theta), height=0.0498),
                          t_end=0.6, output_step=0.02)
    law = ContactLaw(1e6, 1.5, 1e3, "impact", 1e-4, 0.5, 0.4, 1e-3, 1e-2)
    creep = law.creep_speed(np.tan(theta))
    v, x = downhill(res, theta), downhill(res, theta, "position")
    assert abs(v[-1] / creep - 1) < 1e-3
    k = len(v) // 2
    assert x[-1] - x[k] <= creep * (res.t[-1] - res.t[k]) * (1 + 1e-2)    # + the transient's decay


@pytest.mark.slow
def test_a_mesh_cube_slides_as_the_box(tmp_path):
    """A cube read from an STL file (trimesh) as its contact shape: its hull's 8 vertices are the box's
    corners, so it slides at a = g (sin θ − μ_d cos θ) too (1e-5); an unreadable file names the field."""
    trimesh = pytest.importorskip("trimesh")
    trimesh.creation.box(extents=(0.1, 0.1, 0.1)).export(tmp_path / "cube.stl")
    theta = np.radians(30)
    model = on_incline(theta, {"shape": "mesh", "file": "cube.stl"}, BOX_INERTIA, orientation=rot_z(theta),
                       height=0.0498)
    model.base_dir = tmp_path
    res = solver.simulate(model, t_end=0.6, output_step=0.02)
    assert abs(steady_acceleration(res, theta) / (G * (np.sin(theta) - 0.4 * np.cos(theta))) - 1) < 1e-5
    (tmp_path / "bad.stl").write_text("not a mesh")
    model.set_field("b", "geometry", {"shape": "mesh", "file": "bad.stl"})
    with pytest.raises(solver.ModelError, match=r"forces 'c'.geometry_j: mesh file .*bad.stl: cannot be read"):
        solver.simulate(model, t_end=0.01)


@pytest.mark.parametrize("shape, inertia, points, closed", [
    ({"shape": "sphere", "radius": R}, (0.4 * R * R,) * 3, 1, 5 / 7),
    ({"shape": "cylinder", "radius": R, "length": 0.1, "axis": "z"},
     ((3 * R * R + 0.01) / 12, (3 * R * R + 0.01) / 12, 0.5 * R * R), 2, 2 / 3)])
def test_rolling_without_slipping(shape, inertia, points, closed):
    theta = np.radians(20)
    res = solver.simulate(on_incline(theta, shape, inertia, height=R - 1e-4), t_end=0.4, output_step=0.02)
    delta = (G * np.cos(theta) / (points * 1e6)) ** (1 / 1.5)
    rho = R - delta / 2
    a = steady_acceleration(res, theta)
    assert abs(a / (G * np.sin(theta) / (1 + inertia[2] / rho ** 2)) - 1) < 1e-5
    assert abs(a / (closed * G * np.sin(theta)) - 1) < delta / R
    assert abs(res.contact_point("c")[-1] @ (-np.sin(theta), np.cos(theta), 0.0) + delta / 2) < 1e-7


def test_the_box_on_ramp_sample_slides_at_the_closed_form():
    model = solver.load_model(Path(__file__).resolve().parents[2] / "sample_models" / "box_on_ramp.mbs.json")
    res = solver.simulate(model)
    theta = np.radians(30.0)
    v = -res.body_velocity("box") @ (np.cos(theta), np.sin(theta), 0.0)
    a = (v[-1] - v[50]) / (res.t[-1] - res.t[50])
    assert abs(a / (G * (np.sin(theta) - 0.4 * np.cos(theta))) - 1) < 1e-6


def test_box_on_a_ramp_beside_mujoco():
    mujoco = pytest.importorskip("mujoco")
    theta, mu = np.radians(30), 0.4
    deg = np.degrees(theta)
    mj = mujoco.MjModel.from_xml_string(f"""<mujoco><option timestep="1e-4" cone="elliptic"/><worldbody>
        <geom type="plane" size="5 5 0.1" euler="0 {-deg} 0" friction="{mu} 0 0"/>
        <body pos="0 0 0.05" euler="0 {-deg} 0"><freejoint/>
        <geom type="box" size="0.05 0.05 0.05" mass="1" friction="{mu} 0 0"/></body></worldbody></mujoco>""")
    data = mujoco.MjData(mj)
    t, speed = [], []
    while data.time < 0.6 - 1e-9:
        mujoco.mj_step(mj, data)
        t.append(data.time)
        speed.append(np.linalg.norm(data.qvel[:3]))
    k = len(t) // 2                       # MuJoCo's speed ripples by ~1 %: a least-squares slope
    a_mj = np.polyfit(t[k:], speed[k:], 1)[0]
    res = solver.simulate(on_incline(theta, BOX, BOX_INERTIA, mu=(mu, mu), orientation=rot_z(theta),
                                     height=0.0498), t_end=0.6, output_step=0.02)
    a = steady_acceleration(res, theta)
    assert abs(a_mj / a - 1) < 1e-3


def test_contact_is_saved_validated_and_refused_by_the_fmu_export(tmp_path):
    m = ball()
    path = tmp_path / "ball.mbs.json"
    m.save(path)
    again = solver.load_model(path)
    assert again.forces["c1"] == m.forces["c1"]
    assert again.forces["c1"].geometry_i == {"shape": "plane", "point": [0.0, 0.0, 0.0], "normal": [0.0, 1.0, 0.0]}
    with pytest.raises(solver.ModelError, match=r"contact 'c2'.stiffness: must be > 0"):
        m.add_contact("c2", "ground", "ball", stiffness=0.0, geometry_i=PLANE)
    with pytest.raises(solver.ModelError, match=r"contact 'c2'.geometry_i: shape must be one of"):
        m.add_contact("c2", "ground", "ball", stiffness=1e6, geometry_i={"shape": "torus"})
    with pytest.raises(solver.ModelError, match=r"contact 'c2'.friction_velocity: must be > stiction_velocity"):
        m.add_contact("c2", "ground", "ball", stiffness=1e6, geometry_i=PLANE, stiction_velocity=0.1)
    with pytest.raises(solver.ModelError, match=r"contact 'c2'.geometry_i: 'ground' has no geometry"):
        m.add_contact("c2", "ground", "ball", stiffness=1e6)
    m.add_body("crate", mass=1.0, inertia=BOX_INERTIA, position=(1, 0.05, 0), geometry=BOX)
    m.add_contact("c3", "crate", "ball", stiffness=1e6, geometry_i=BOX)
    m.add_contact("c4", "crate", "ball", stiffness=1e6, geometry_j=BOX)
    with pytest.raises(solver.ModelError, match=r"forces 'c4'.geometry_j: no contact between a box and a box"):
        solver.simulate(m, t_end=0.01, codegen="off")


def test_contact_forces_come_back_from_a_results_file(tmp_path):
    res = solver.simulate(ball(2.0, g=0.0, y0=R + 0.004), t_end=0.01, output_step=1e-3)
    assert np.any(res.contact_force("c1"))
    res.save(tmp_path / "ball.h5")
    again = solver.load_results(tmp_path / "ball.h5", lazy=True)
    assert np.array_equal(again.contact_force("c1"), res.contact_force("c1"))
    assert np.array_equal(again.contact_dissipation("c1"), res.contact_dissipation("c1"))
    with pytest.raises(solver.ModelError, match=r"no contact named 'c9' in the results \(contacts: c1\)"):
        again.contact_force("c9")


def test_the_cli_exits_2_naming_the_field_of_a_bad_contact(tmp_path, capsys):
    import json

    from solver import cli
    path = tmp_path / "ball.mbs.json"
    ball().save(path)
    data = json.loads(path.read_text())
    data["model"]["forces"][0].update(stiffness=-1.0, damping_law="stiff")
    path.write_text(json.dumps(data))
    assert cli.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert "model.forces[0].stiffness: must be > 0" in err and "model.forces[0].damping_law: must be one of" in err


def test_fmu_export_refuses_contact_naming_the_element(tmp_path):
    from solver.fmu import export_fmu
    with pytest.raises(solver.ModelError, match=r"forces.c1: a contact is not generated as C, so it cannot be in an FMU"):
        export_fmu(ball(), tmp_path / "ball.fmu")
