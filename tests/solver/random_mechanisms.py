"""Random, consistently assembled mechanisms for differential testing (issue #27, item 3).

``random_mechanism(seed)`` builds a :class:`solver.Model` from a seed alone (the same seed gives the
same model on any machine): a tree of 1–``max_bodies`` rigid bodies hanging from ground (or a free
floating one), 0–3 loop-closing joints, drivers, every force kind, optionally a flexible beam,
gravity on or off, one length scale (3 mm … 2 m) and one mass scale (1 g … 1 t) per model.

Consistent assembly: the bodies' poses are chosen first and every joint is placed at the drawn
configuration (its origin, axes and second point given globally there), so each joint's equations
hold exactly as drawn — loops included — and the run starts without an assembly correction.
Initial velocities are consistent too: each tree joint gets a random rate (a twist about its origin
along its free directions), except the tree joints on the path between the two ends of a loop
closure (zero rate: both ends then move as one rigid body, so the cut joint's velocity equations
hold) and driven joints (their drivers start at f(0) = 0 with the joint's rate f'(0) when the
joint's rate was free to choose, else f'(0) = 0).  A free-floating model's base gets a random twist.

Used by tests/solver/test_random_mechanisms.py and bench/fuzz.py; the comparison of the paths is
tests/solver/differential.py.
"""
from __future__ import annotations

import numpy as np

import solver

TREE_KINDS = ("revolute", "prismatic", "cylindrical", "screw", "universal", "planar", "spherical", "fixed")
CUT_KINDS = TREE_KINDS + ("distance", "revolute_spherical", "inplane")
# loop closures with few equations are drawn more often, so that most loops leave the mechanism mobile
CUT_WEIGHTS = np.array([1, 1, 1, 1, 1.5, 1, 2, 0.5, 3, 3, 2]) / 17.0
ROTATION_KINDS = ("revolute", "cylindrical", "screw")       # rotational spring-dampers attach here
G = 9.81


def random_mechanism(seed: int, max_bodies: int = 4, flexible: bool = True) -> solver.Model:
    """A random consistently assembled mechanism of seed ``seed`` (module docstring).  ``flexible``:
    allow a flexible beam (then only the Cartesian formulation runs the model)."""
    return _Builder(np.random.default_rng(seed), f"random_{seed}", max_bodies, flexible).build()


def _unit(rng):
    v = rng.normal(size=3)
    return v / np.linalg.norm(v)


def _perpendicular(rng, axis):
    v = _unit(rng)
    v = v - (v @ axis) * axis
    return v / np.linalg.norm(v)


def _number(x):
    """A float written with 12 significant digits: expressions stay short and exact to reproduce."""
    return f"{x:.12g}"


class _Builder:
    """One model being built: the scales, the tree, the loops, the loads (see the module docstring)."""

    def __init__(self, rng, name, max_bodies, flexible):
        self.rng = rng
        self.L = 10.0 ** rng.uniform(-2.5, 0.3)          # length scale, m
        self.M = 10.0 ** rng.uniform(-3.0, 3.0)          # mass scale, kg
        self.grounded = rng.random() < 0.85
        gravity = G * _unit(rng) if rng.random() < 0.5 else (0.0, -G, 0.0)
        self.model = solver.Model(name=name, gravity=gravity if rng.random() < 0.7 else (0.0, 0.0, 0.0))
        self.n = int(rng.integers(1, max_bodies + 1))
        self.flexible = flexible and rng.random() < 0.08
        self.pos = {"ground": np.zeros(3)}
        self.twist = {"ground": (np.zeros(3), np.zeros(3))}  # (ω, velocity of the point at the origin)
        self.parent = {}                 # body -> (tree joint, parent body)
        self.tree_joints = {}            # tree joint -> dict(kind, parent, child, origin, axes, rate)
        self.loops = {}                  # loop-closing joint -> (node a, node b)
        self.locked = set()              # tree joints whose rate must be zero (on a loop's path)
        self.driven = {}                 # joint -> (coordinate, rate at t = 0 or None)

    # ---- the whole model -------------------------------------------------------------------------
    def build(self):
        bodies = [f"b{k}" for k in range(self.n)]
        for k, b in enumerate(bodies):
            self._place_body(b, k, bodies[:k])
        n_loops = int(self.rng.choice([0, 1, 2, 3], p=[0.35, 0.35, 0.2, 0.1])) if self.n > 1 or self.grounded else 0
        for k in range(n_loops):
            self._close_loop(f"loop{k}", bodies)
            if solver.check_model(self.model).dof == 0 and self.rng.random() < 0.85:
                self.model.remove(f"loop{k}")           # it locked the mechanism: mostly mobile ones
                del self.loops[f"loop{k}"]
        for a, b in self.loops.values():
            self.locked |= self._path_joints(a, b)
        self._choose_drivers()
        self._set_velocities(bodies)
        self._add_forces(bodies)
        if self.flexible:
            self._add_beam(bodies)
        return self.model

    def _nodes(self, bodies):
        return (["ground"] if self.grounded else []) + list(bodies)

    # ---- bodies and tree joints ------------------------------------------------------------------
    def _place_body(self, b, k, earlier):
        rng, L = self.rng, self.L
        candidates = self._nodes(earlier)
        parent = candidates[int(rng.integers(len(candidates)))] if candidates else None
        base = self.pos[parent] if parent else np.zeros(3)
        origin = base + L * rng.uniform(0.3, 1.0) * _unit(rng)
        r = origin + L * rng.uniform(0.2, 0.8) * _unit(rng)
        dims = L * rng.uniform(0.1, 1.0, size=3)
        mass = self.M * rng.uniform(0.2, 2.0)
        a, bb, c = dims
        inertia = (mass * (bb * bb + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + bb * bb) / 12)
        q = rng.normal(size=4)
        self.model.add_body(b, mass=mass, inertia=inertia, position=r, orientation=tuple(q / np.linalg.norm(q)))
        self.pos[b] = r
        if parent is None:
            return                                  # the floating base of a free model
        kind = TREE_KINDS[int(rng.integers(len(TREE_KINDS)))]
        axis = _unit(rng) if rng.random() < 0.7 else np.eye(3)[int(rng.integers(3))]
        options = {}
        if kind == "universal":
            options["axis2"] = tuple(_perpendicular(rng, axis))
        if kind == "screw":
            options["pitch"] = float(L * rng.uniform(0.3, 3.0) * rng.choice([-1, 1]))
        name = f"j{k}"
        swap = rng.random() < 0.3                   # body_i the child: an inverted tree joint
        bi, bj = (b, parent) if swap else (parent, b)
        self.model.add_joint(name, kind, bi, bj, origin=tuple(origin), axis=tuple(axis), **options)
        self.parent[b] = (name, parent)
        self.tree_joints[name] = dict(kind=kind, parent=parent, child=b, origin=origin, axis=axis,
                                      axis2=options.get("axis2"), pitch=options.get("pitch"), swap=swap)

    # ---- loops -----------------------------------------------------------------------------------
    def _path_joints(self, a, b):
        """Tree joints on the path between nodes a and b."""
        def up(x):
            chain = [x]
            while x in self.parent:
                x = self.parent[x][1]
                chain.append(x)
            return chain
        ua, ub = up(a), up(b)
        common = next((x for x in ua if x in ub), None)
        joints = set()
        for chain in (ua, ub):
            for x in chain:
                if x == common:
                    break
                joints.add(self.parent[x][0])
        return joints

    def _close_loop(self, name, bodies):
        rng, L = self.rng, self.L
        nodes = self._nodes(bodies)
        a, b = rng.choice(len(nodes), size=2, replace=False)
        a, b = nodes[int(a)], nodes[int(b)]
        kind = CUT_KINDS[int(rng.choice(len(CUT_KINDS), p=CUT_WEIGHTS))]
        mid = 0.5 * (self.pos[a] + self.pos[b]) + 0.3 * L * _unit(rng)
        axis = _unit(rng)
        options = {}
        if kind == "universal":
            options["axis2"] = tuple(_perpendicular(rng, axis))
        if kind == "screw":
            options["pitch"] = float(L * rng.uniform(0.3, 3.0) * rng.choice([-1, 1]))
        if kind in ("distance", "revolute_spherical"):
            options["origin2"] = tuple(mid + L * rng.uniform(0.3, 1.0) * _unit(rng))
        self.model.add_joint(name, kind, a, b, origin=tuple(mid), axis=tuple(axis), **options)
        self.loops[name] = (a, b)

    # ---- drivers ---------------------------------------------------------------------------------
    def _choose_drivers(self):
        rng = self.rng
        joints = [j for j in self.model.joints.values() if j.coordinates()]
        count = int(rng.choice([0, 1, 2], p=[0.5, 0.35, 0.15]))
        for joint in rng.permutation(len(joints))[:count]:
            joint = joints[int(joint)]
            coordinate = joint.coordinates()[int(rng.integers(len(joint.coordinates())))]
            free = joint.name in self.tree_joints and joint.name not in self.locked
            angle = coordinate in ("rotation",)
            amp = (rng.uniform(0.1, 0.6) if angle else self.L * rng.uniform(0.05, 0.4)) * rng.choice([-1, 1])
            w = 2 * np.pi * rng.uniform(0.5, 3.0)
            rate = amp * w * rng.uniform(-1, 1) if free and rng.random() < 0.5 else 0.0
            # f(0) = 0, f'(0) = rate
            expression = (f"{_number(amp)}*(1-cos({_number(w)}*t))"
                          + (f"+{_number(rate / w)}*sin({_number(w)}*t)" if rate else ""))
            self.model.add_driver(f"d_{joint.name}", joint.name, expression=expression, coordinate=coordinate)
            self.driven[joint.name] = (coordinate, rate)
        for name in solver.check_model(self.model).overdriven:
            self.driven.pop(self.model.drivers[name].joint)
            self.model.remove(name)

    # ---- velocities ------------------------------------------------------------------------------
    def _joint_twist(self, name):
        """(ω, v at the joint origin) of the child relative to the parent, at the drawn configuration."""
        rng, j = self.rng, self.tree_joints[name]
        if name in self.locked:
            return np.zeros(3), np.zeros(3)
        kind, z = j["kind"], j["axis"]
        if kind == "fixed":
            return np.zeros(3), np.zeros(3)
        C = solver_frame(z, j["axis2"])
        sign = -1.0 if j["swap"] else 1.0           # coordinates measure body_j relative to body_i
        driven = self.driven.get(name)
        rate = {"rotation": rng.uniform(-2, 2), "translation": self.L * rng.uniform(-2, 2),
                "x": self.L * rng.uniform(-2, 2), "y": self.L * rng.uniform(-2, 2)}
        if driven is not None:
            rate[driven[0]] = driven[1]
        w, v = np.zeros(3), np.zeros(3)
        if kind in ("revolute", "cylindrical", "screw", "planar"):
            w = rate["rotation"] * z
        if kind in ("prismatic", "cylindrical"):
            v = rate["translation"] * z
        if kind == "screw":
            v = j["pitch"] / (2 * np.pi) * rate["rotation"] * z
        if kind == "planar":
            v = rate["x"] * C[:, 0] + rate["y"] * C[:, 1]
        if kind == "universal":
            w = rng.uniform(-2, 2) * z + rng.uniform(-2, 2) * np.asarray(j["axis2"])
        if kind == "spherical":
            w = rng.uniform(-2, 2, size=3)
        return sign * w, sign * v - np.cross(sign * w, j["origin"])

    def _set_velocities(self, bodies):
        rng = self.rng
        for b in bodies:
            if b in self.parent:
                name, parent = self.parent[b]
                w_rel, v0_rel = self._joint_twist(name)
                w_p, v0_p = self.twist[parent]
                self.twist[b] = (w_p + w_rel, v0_p + v0_rel)
            elif rng.random() < 0.7:                    # free base: a random rigid twist (or rest)
                w = rng.uniform(-2, 2, size=3)
                v = self.L * rng.uniform(-2, 2, size=3)
                self.twist[b] = (w, v - np.cross(w, self.pos[b]))
            else:
                self.twist[b] = (np.zeros(3), np.zeros(3))
            w, v0 = self.twist[b]
            self.model.set_field(b, "angular_velocity", tuple(w))
            self.model.set_field(b, "velocity", tuple(v0 + np.cross(w, self.pos[b])))

    # ---- force elements --------------------------------------------------------------------------
    def _add_forces(self, bodies):
        rng, L, M = self.rng, self.L, self.M
        nodes = self._nodes(bodies)
        omega2 = (2 * np.pi * rng.uniform(0.5, 4.0)) ** 2
        kinds = rng.choice(["spring_damper", "linear_actuator", "rotational_spring_damper", "bushing", "force",
                            "torque"], size=int(rng.integers(0, 5)))
        for k, kind in enumerate(kinds):
            name = f"f{k}_{kind}"
            damped = rng.random() < 0.4
            timed = rng.random() < 0.4
            wt = _number(2 * np.pi * rng.uniform(0.5, 3.0))
            if kind in ("spring_damper", "linear_actuator", "bushing") and len(nodes) >= 2:
                a, b = (nodes[int(x)] for x in rng.choice(len(nodes), size=2, replace=False))
                pa = self.pos[a] + 0.3 * L * _unit(rng) if a != "ground" else self.pos[b] + L * _unit(rng)
                pb = self.pos[b] + 0.3 * L * _unit(rng)
                if kind == "spring_damper":
                    k_ = M * omega2
                    self.model.add_spring_damper(
                        name, a, b, point_i=tuple(pa), point_j=tuple(pb), stiffness=k_,
                        damping=2 * 0.1 * np.sqrt(k_ * M) if damped else 0.0,
                        free_length=float(np.linalg.norm(pb - pa) * rng.uniform(0.8, 1.2)) if rng.random() < 0.5 else None,
                        preload=float(M * G * rng.uniform(-0.5, 0.5)) if rng.random() < 0.3 else 0.0,
                        force=f"{_number(M * G * rng.uniform(0.1, 1.0))}*sin({wt}*t)" if timed else 0.0)
                elif kind == "linear_actuator":
                    self.model.add(solver.LinearActuator(
                        name=name, body_i=a, body_j=b, point_i=tuple(pa), point_j=tuple(pb),
                        force=f"{_number(M * G * rng.uniform(0.1, 1.0))}*sin({wt}*t)"))
                else:
                    kt, kr = M * omega2, M * L * L * omega2
                    stiffness = tuple(rng.uniform(0.2, 1.0, size=3) * kt) + tuple(rng.uniform(0.2, 1.0, size=3) * kr)
                    damping = tuple(0.05 * np.sqrt(np.array(stiffness) * np.array([M] * 3 + [M * L * L] * 3))) \
                        if damped else (0.0,) * 6
                    self.model.add_bushing(name, a, b, origin=tuple(pb), stiffness=stiffness, damping=damping)
            elif kind == "rotational_spring_damper":
                joints = [j for j in self.model.joints.values() if j.type in ROTATION_KINDS]
                if not joints:
                    continue
                joint = joints[int(rng.integers(len(joints)))]
                k_ = M * L * L * omega2
                self.model.add_rotational_spring_damper(
                    name, joint.name, stiffness=k_, damping=2 * 0.1 * np.sqrt(k_ * M * L * L) if damped else 0.0,
                    free_angle=float(rng.uniform(-0.5, 0.5)),
                    preload=float(M * G * L * rng.uniform(-0.5, 0.5)) if rng.random() < 0.3 else 0.0)
            elif kind in ("force", "torque") and bodies:
                b = bodies[int(rng.integers(len(bodies)))]
                scale = M * G * (L if kind == "torque" else 1.0)
                comps = tuple(f"{_number(scale * rng.uniform(-1, 1))}*sin({wt}*t)" if timed and rng.random() < 0.7
                              else float(scale * rng.uniform(-1, 1)) for _ in range(3))
                point = tuple(self.pos[b] + 0.3 * L * _unit(rng)) if kind == "force" and rng.random() < 0.5 else None
                if kind == "force":
                    self.model.add_force(name, b, force=comps, point=point)
                else:
                    self.model.add_torque(name, b, torque=comps)

    # ---- flexible beam ---------------------------------------------------------------------------
    def _add_beam(self, bodies):
        """A steel beam of length ~L hinged to ground or a body by a revolute (at rest)."""
        rng, L = self.rng, self.L
        nodes = self._nodes(bodies)
        host = nodes[int(rng.integers(len(nodes)))]
        start = self.pos[host] + 0.5 * L * _unit(rng)
        end = start + 2 * L * _unit(rng)
        direction = (end - start) / np.linalg.norm(end - start)
        z_axis = _perpendicular(rng, direction)
        side = 0.03 * L
        self.model.add_flexible_beam("beam", tuple(start), tuple(end), {"height": side, "width": side},
                                     {"density": 7850.0, "youngs": 2.1e11}, elements=4, modes=2,
                                     z_axis=tuple(z_axis))
        axis = _perpendicular(rng, direction)
        self.model.add_joint("j_beam", "revolute", host, "beam", origin=tuple(start), axis=tuple(axis))


def solver_frame(axis, axis2):
    """The joint frame the solver builds at the drawn configuration (x along axis2 when given)."""
    from solver.math.rotations import frame_from_axis
    return frame_from_axis(np.asarray(axis, float), None if axis2 is None else np.asarray(axis2, float))
