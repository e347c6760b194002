"""Scale (issue 11): the generated 200-body pendulum chain and the 50-loop planar mechanism
(``tools/scale_models.py``) load, display and animate in the GUI at ≥ 30 frames/s (offscreen EGL,
llvmpipe software OpenGL).

The motion played is the mechanisms' exact kinematics, not a solver run (a run of these models
takes ~20 s; the animation path only reads body poses): the chain turns rigidly about its ground
pivot, θ(t) = θ₀ cos 2πt; in the loops mechanism every rocker turns by the same θ(t) about its pivot
and the couplers translate with the rocker tips (``planar_loops`` docstring).
"""
from __future__ import annotations

import importlib.util
import os
import time
from pathlib import Path

import numpy as np
import pytest

import solver
from app.viewport.transforms import quat_to_matrix

TOOLS = Path(__file__).resolve().parents[2] / "tools" / "scale_models.py"
FRAMES = 120
MIN_FPS = 30.0


def scale_models():
    spec = importlib.util.spec_from_file_location("scale_models", TOOLS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def kinematic_results(model, pivot_of, frames=FRAMES, amplitude=0.4):
    """Results with body poses of the exact motion: body b turns by θ(t) about ``pivot_of(b)`` when
    that is a point, or translates with the displacement of the rocker tip it names."""
    t = np.linspace(0.0, 1.0, frames)
    theta = amplitude * np.cos(2 * np.pi * t)
    names = list(model.bodies)
    r = np.zeros((frames, len(names), 3))
    A = np.zeros((frames, len(names), 3, 3))
    for k, b in enumerate(names):
        body = model.bodies[b]
        r0 = np.asarray(body.position, float)
        A0 = quat_to_matrix(body.orientation)
        pivot, translate = pivot_of(b)
        for i, th in enumerate(theta):
            R = rot_z(th - theta[0])
            if translate is not None:
                r[i, k] = r0 + R @ translate - translate
                A[i, k] = A0
            else:
                r[i, k] = pivot + R @ (r0 - pivot)
                A[i, k] = R @ A0
    arrays = {"t": t, "r": r, "A": A}
    meta = {"body_names": names, "joint_names": [], "driver_names": []}
    return solver.Results(arrays, meta)


def chain_case():
    model = scale_models().chain(200)
    return model, kinematic_results(model, lambda b: (np.zeros(3), None))


def loops_case(n=50):
    sm = scale_models()
    model = sm.planar_loops(n)
    spacing, length = 0.2, 0.3
    u = np.array([np.sin(0.5), -np.cos(0.5), 0.0])

    def pivot_of(b):
        if b.startswith("R"):
            return np.array([int(b[1:]) * spacing, 0.0, 0.0]), None
        return None, length * u           # couplers translate with a rocker tip (pivot-relative)
    return model, kinematic_results(model, pivot_of)


@pytest.mark.slow
@pytest.mark.parametrize("case", [chain_case, loops_case], ids=["chain-200", "loops-50"])
def test_large_model_animates_at_30_fps(window, qtbot, case, record_property):
    model, results = case()
    start = time.perf_counter()
    window.document.set_model(model)
    window.viewport.flush()
    window.viewport.render()
    load_s = time.perf_counter() - start
    assert len(window.viewport.scene.items) >= len(model.bodies) + len(model.joints)
    player = window.player
    player.set_results(results)            # only the animation reads these kinematic results
    qtbot.wait(50)
    # Stepping through every frame (pose + render each): the cost of one animation frame, as wall
    # time (Player.frame_times) and as CPU time of this process (all its threads, llvmpipe's
    # included: not inflated when other processes share the cores, as they do on a CI machine).
    player.frame_times.clear()
    player.viewport.set_animating(True)
    cpu = []
    for i in range(FRAMES):
        c0 = time.process_time()
        player.set_frame(i)
        cpu.append(time.process_time() - c0)
    player.viewport.set_animating(False)
    wall_fps = player.fps()
    cpu_fps = 1.0 / float(np.median(cpu))
    # Live playback (timer, wall-clock based) for one second: frames actually shown.
    shown = []
    player.frame_changed.connect(shown.append)
    player.set_loop(True)
    player.play()
    t0 = time.perf_counter()
    qtbot.wait(1000)
    player.pause()
    play_fps = len(shown) / (time.perf_counter() - t0)
    # The last frame shown puts every body where the results say.
    i = player.index
    current = window.viewport.scene.current
    for b in model.bodies:
        assert np.allclose(current[b][:3, 3], results.body_position(b)[i], atol=1e-12)
        assert np.allclose(current[b][:3, :3], results.body_rotation(b)[i], atol=1e-12)
    record_property("load_s", load_s)
    record_property("fps", (cpu_fps, wall_fps, play_fps))
    print(f"\n{model.name}: load+display {load_s:.2f} s; frame median {1000 / cpu_fps:.1f} ms CPU "
          f"({cpu_fps:.0f} frames/s), {1000 / wall_fps:.1f} ms wall ({wall_fps:.0f} frames/s); "
          f"live playback {play_fps:.0f} frames/s (os.getloadavg {os.getloadavg()[0]:.1f})")
    assert cpu_fps >= MIN_FPS


def test_merged_animation_mesh_follows_the_bodies(window, qtbot):
    """While playing, the one merged mesh puts every vertex where its element's own actor (moved by
    its user matrix) would be, with normals turned alike, and colours the selected element."""
    from vtkmodules.util.numpy_support import vtk_to_numpy
    model, results = loops_case(3)
    window.document.set_model(model)
    window.document.select("P2")
    window.player.set_results(results)
    window.viewport.set_animating(True)                # what Player.play does
    window.player.set_frame(37)
    scene = window.viewport.scene
    merged = scene.merged
    assert merged.actor.GetVisibility() and not any(i.actor.GetVisibility() for i in merged.items)
    for k, item in enumerate(merged.items):
        data = item.actor.GetMapper().GetInput()
        m = item.actor.GetUserMatrix()
        X = np.array([[m.GetElement(r, c) for c in range(4)] for r in range(4)])
        expected = vtk_to_numpy(data.GetPoints().GetData()) @ X[:3, :3].T + X[:3, 3]
        mine = merged.item_of_vertex == k
        assert np.allclose(merged.xyz[mine], expected, atol=1e-6)
        normals = vtk_to_numpy(data.GetPointData().GetNormals()) @ X[:3, :3].T
        assert np.allclose(merged.normals[mine], normals, atol=1e-5)
        color = (1.0, 0.84, 0.0) if item.name == "P2" else item.color
        assert np.array_equal(merged.colors[mine][0], np.round(255 * np.array(color)))
    window.viewport.set_animating(False)
    assert not merged.actor.GetVisibility() and all(i.actor.GetVisibility() for i in merged.items)


def test_merged_mesh_keeps_the_normals_of_tube_glyphs(window, pendulum):
    """A rotational spring's spiral is a tube whose normals VTK names ``TubeNormals``: merged with
    the solids (named ``Normals``) the normals were dropped and playback failed (an imported cart-pole)."""
    pendulum.add_rotational_spring_damper("coil", "pivot", stiffness=10.0)
    window.document.set_model(pendulum)
    window.viewport.set_animating(True)
    merged = window.viewport.scene.merged
    assert merged.normals.shape == merged.xyz.shape
    window.viewport.set_animating(False)
