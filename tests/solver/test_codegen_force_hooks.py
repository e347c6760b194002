"""The code generator's side of a force kind is one hook (solver.codegen.force_hooks, registered in
``solver.codegen.derive.HOOKS`` by evaluator class): every generated element has exactly one hook,
every other one is evaluated in Python, and registering a hook for a new evaluator class is all it
takes to generate it.

The test-only evaluator is a tether: a body point P pulled towards a fixed point P₀ by
F = −k (P − P₀) at P (potential ½ k |P − P₀|²); its generated Q must equal the generic path's."""
from __future__ import annotations

import numpy as np
import pytest

import solver
from solver import forces
from solver.codegen import derive
from solver.codegen.force_hooks import TIRE_FIELDS
from solver.formulations.cartesian import CartesianSystem
from test_codegen import check_kernels

GENERATED = {"spring_damper", "linear_actuator", "bushing", "force", "torque", "tire", "speed_control",
             "joint_actuator"}
INTERPRETED = {"rotational_spring_damper", "contact", "contact_group", "joint_friction"}   # and tires on table roads
NO_LOAD = {"road"}                                   # compiles to no evaluator


def every_force_kind():
    """A chassis on four wheels with every force kind: tires on a half-sine road and one on a table
    road, a speed controller, a spring-damper, a linear actuator, a rotational spring-damper, a
    joint actuator, a bushing, an applied force and torque."""
    m = solver.Model(name="every-force", gravity=(0.0, 0.0, -9.81))
    m.add_body("chassis", mass=500.0, inertia=(100.0, 300.0, 350.0), position=(0.0, 0.0, 0.6))
    m.add_road("bump", profile="half_sine", start=2.0, obstacle_height=0.05, obstacle_length=0.5)
    m.add_road("washboard", profile="table", table="0.01*sin(3*t)")
    for k, (x, y) in enumerate([(1.2, 0.8), (1.2, -0.8), (-1.2, 0.8), (-1.2, -0.8)]):
        wheel = f"wheel{k}"
        m.add_body(wheel, mass=15.0, inertia=(0.6, 1.0, 0.6), position=(x, y, 0.3))
        m.add_joint(f"hub{k}", "revolute", "chassis", wheel, origin=(x, y, 0.3), axis=(0.0, 1.0, 0.0))
        m.add_tire(f"tire{k}", wheel, "washboard" if k == 3 else "bump", radius=0.3, stiffness=2e5, damping=500.0)
    m.add_speed_control("cruise", "chassis", "wheel0", "chassis", "wheel1", "chassis", target_speed=10.0)
    m.add_spring_damper("spring", "ground", "chassis", point_i=(0.0, 0.0, 2.0), point_j=(0.0, 0.0, 0.6),
                        stiffness=100.0, damping=5.0)
    m.add(solver.FORCE_CLASSES["linear_actuator"](name="ram", body_i="ground", body_j="chassis",
                                                  point_i=(3.0, 0.0, 0.6), point_j=(1.0, 0.0, 0.6), force="10*t"))
    m.add_rotational_spring_damper("hub_spring", "hub2", stiffness=3.0)
    m.add_joint_actuator("motor", "hub1", force="2*t")
    m.add_bushing("mount", "chassis", "wheel3", origin=(-1.2, -0.8, 0.3), stiffness=(1e3,) * 6)
    m.add_force("push", "chassis", force=(1.0, "sin(t)", 0.0), point=(0.5, 0.0, 0.6))
    m.add_torque("twist", "chassis", torque=(0.0, 0.0, "cos(t)"))
    return m


def test_every_generated_kind_has_one_hook_and_the_others_are_interpreted():
    model = every_force_kind()
    assert set(solver.FORCE_CLASSES) == GENERATED | INTERPRETED | NO_LOAD
    system = CartesianSystem(model)
    interpreted = derive.interpreted_forces(system)
    assert [f.name for f in interpreted] == ["tire3", "hub_spring"]          # the table road, the rotational spring
    kinds = {f.name: model.forces[f.name].KIND for f in system.force_elements}
    assert {kinds[f.name] for f in system.force_elements if f not in interpreted} == GENERATED
    for f in system.force_elements:
        assert (derive.hook_of(f) is None) == (f in interpreted)
    desc = derive.describe(system)
    hooks = list(derive.HOOKS.values())
    assert [h.key for h in hooks] == ["springs", "bushings", "tires", "controls", "loads",
                                      "joint_actuators"]                          # the kernels' order
    assert {h.key: len(desc[h.key]) for h in hooks} == {"springs": 2, "bushings": 1, "tires": 3, "controls": 1,
                                                        "loads": 2, "joint_actuators": 1}   # the actuator is a spring without k, c
    # the layouts tile the parameter and input vectors after the bodies and gravity, in element order
    par = derive.parameters(system, desc)
    tire = desc["tires"][0]
    assert par[tire["par"] + TIRE_FIELDS.index("stiffness")] == 2e5
    assert desc["n_inputs"] == len(derive.input_functions(system)) == 2 + 2 + 3 + 3 + 1   # 2 springs, sin/cos φ,
    #                                                                                  2 loads, the joint actuator
    assert desc["n_parameters"] == (derive.BODY_PARAMETERS * system.nb + 3 + 2 * 4 + 12
                                    + 3 * (len(TIRE_FIELDS) + 4) + 5 + 1)


def test_a_subclass_of_a_generated_evaluator_is_interpreted():
    """Hooks are found by exact class: a subclass may evaluate differently, so it is not generated."""
    class Stiffer(forces.SpringDamperForce):
        pass
    model = every_force_kind()
    system = CartesianSystem(model)
    spring = next(f for f in system.force_elements if f.name == "spring")
    spring.__class__ = Stiffer
    assert derive.hook_of(spring) is None and spring in derive.interpreted_forces(system)


class Tether:
    """F = −k (P − P₀) at body point P (the test-only evaluator)."""

    stacked = False

    def __init__(self, e, index, init, stiffness, anchor):
        self.name, self.b, self.k, self.anchor = e.name, index[e.body], stiffness, np.asarray(anchor, dtype=float)
        r0, A0 = init[self.b]
        self.s = A0.T @ (np.asarray(e.point, dtype=float) - r0)

    def _point(self, frames):
        r, A, _, _ = frames.get(self.b)
        return r + A @ self.s

    def apply(self, t, frames, out):
        P = self._point(frames)
        out.at_point(self.b, -self.k * (P - self.anchor), P, frames)

    def potential(self, frames):
        d = self._point(frames) - self.anchor
        return 0.5 * self.k * d @ d

    def conserves_energy(self):
        return True


class TetherHook(derive.ForceHook):
    key = "tethers"

    def describe(self, f, layout):
        return {"body": f.b, "s": [float(x) for x in f.s], "anchor": f.anchor.tolist(), "par": layout.parameters(1)}

    def parameters(self, f):
        return (f.k,)

    def loads(self, entry, w):
        P, _ = w.point(entry["body"], entry["s"])
        w.at_point(entry["body"], -w.s.c[entry["par"]] * (P - np.array(entry["anchor"])), P)


@pytest.mark.slow
def test_a_hook_registered_for_a_new_evaluator_generates_it(monkeypatch, runtime_cache):
    """The applied force "pull" evaluates as a tether (k = 40 N/m): without a hook it is evaluated
    in Python, with TetherHook registered it is in the kernels (Q equal to the generic path's to
    1e-10 at random states) and k is a parameter."""
    monkeypatch.setenv("MBS_CODEGEN_CACHE", str(runtime_cache))
    monkeypatch.setitem(forces.EVALUATORS, "force",
                        lambda e, model, index, init: [Tether(e, index, init, 40.0, (0.3, -0.2, 0.5))])
    model = solver.Model(name="tether", gravity=(0.0, -9.81, 0.0))
    model.add_body("bob", mass=2.0, inertia=(0.02, 0.03, 0.04, 0.001, 0.0, 0.002), position=(0.5, -0.4, 0.1),
                   orientation=(0.9, 0.1, -0.3, 0.2))
    model.add_joint("ball", "spherical", "ground", "bob", origin=(0.0, 0.0, 0.0))
    model.add_force("pull", "bob", point=(0.7, -0.5, 0.2))
    model.add_spring_damper("spring", "ground", "bob", point_i=(0.0, -1.0, 0.0), point_j=(0.5, -0.4, 0.1),
                            stiffness=30.0, damping=0.5)
    assert [f.name for f in check_kernels(model, seed=5).interpreted] == ["pull"]
    monkeypatch.setitem(derive.HOOKS, Tether, TetherHook())
    system = check_kernels(model, seed=5)
    assert system.interpreted == []
    desc = derive.describe(system)
    assert [e["anchor"] for e in desc["tethers"]] == [[0.3, -0.2, 0.5]]
    assert system.kernels["par"][desc["tethers"][0]["par"]] == 40.0
