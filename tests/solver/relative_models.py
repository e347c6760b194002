"""Test mechanisms shared by tests/solver/test_relative.py (built fresh for every test)."""
import numpy as np

import solver

G = (0.0, -9.81, 0.0)


def box_inertia(m, a, b, c):
    return (m * (b * b + c * c) / 12, m * (a * a + c * c) / 12, m * (a * a + b * b) / 12)


def double_pendulum_3d():
    """Two links, revolute axes z and (1, 1, 0)/√2, started horizontal with a spin."""
    m = solver.Model(name="double-3d", gravity=G)
    m.add_body("l1", mass=2.0, inertia=box_inertia(2.0, 0.6, 0.05, 0.05), position=(0.3, 0.0, 0.0),
               angular_velocity=(0.0, 0.0, 1.5), velocity=(0.0, 0.45, 0.0))
    m.add_body("l2", mass=1.0, inertia=(0.01, 0.02, 0.03), position=(0.6, 0.0, 0.25),
               angular_velocity=(0.0, 0.0, 1.5), velocity=(0.0, 0.9, 0.0))
    m.add_joint("J1", "revolute", "ground", "l1", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("J2", "revolute", "l1", "l2", origin=(0.6, 0.0, 0.0), axis=(1, 1, 0))
    return m


def spherical_pendulum():
    """A body on a ball joint, spinning about a tilted axis (Euler parameters)."""
    m = solver.Model(name="spherical", gravity=G)
    r = np.array([0.3, -0.8, 0.2])
    w = np.array([0.5, 2.0, -1.0])
    m.add_body("bob", mass=1.5, inertia=(0.02, 0.05, 0.04), position=r, velocity=np.cross(w, r),
               angular_velocity=w)
    m.add_joint("ball", "spherical", "ground", "bob", origin=(0, 0, 0))
    return m


def prismatic_cylindrical_chain():
    """Revolute → prismatic → cylindrical chain (the cylindrical one inverted: body_i is the child)."""
    m = solver.Model(name="pc-chain", gravity=G)
    m.add_body("arm", mass=2.0, inertia=box_inertia(2.0, 0.8, 0.05, 0.05), position=(0.4, 0.0, 0.0))
    m.add_body("slider", mass=1.0, inertia=(0.002, 0.003, 0.004), position=(0.6, 0.0, 0.1))
    m.add_body("sleeve", mass=0.5, inertia=(0.003, 0.001, 0.002), position=(0.6, -0.2, 0.3))
    m.add_joint("R", "revolute", "ground", "arm", origin=(0, 0, 0), axis=(0, 1, 1))
    m.add_joint("P", "prismatic", "arm", "slider", origin=(0.5, 0.0, 0.0), axis=(1, 0, 0))
    m.add_joint("C", "cylindrical", "sleeve", "slider", origin=(0.6, 0.0, 0.2), axis=(0, 1, 0))
    m.add_spring_damper("S", "ground", "slider", point_i=(1.0, 0.0, 0.0), point_j=(0.6, 0.0, 0.1),
                        stiffness=50.0, damping=1.0, free_length=0.2)
    return m


def free_body():
    """A free-floating body (6-DOF free joint) with an applied force and torque."""
    m = solver.Model(name="free", gravity=G)
    m.add_body("box", mass=3.0, inertia=(0.05, 0.08, 0.11), position=(0.1, 0.2, 0.3),
               orientation=(np.cos(0.4), 0.0, np.sin(0.4) * 0.6, np.sin(0.4) * 0.8),
               velocity=(1.0, 2.0, 0.0), angular_velocity=(1.0, 3.0, 0.5))
    m.add_force("F", "box", force=("5*sin(3*t)", 2.0, -1.0), point=(0.2, 0.2, 0.3))
    m.add_torque("T", "box", torque=(0.0, 0.1, "0.2*cos(t)"))
    return m


def driven_pendulum():
    m = solver.Model(name="driven", gravity=G)
    m.add_body("link", mass=1.2, inertia=(0.001, 0.04, 0.04), position=(0.0, -0.4, 0.05))
    m.add_joint("J", "revolute", "ground", "link", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_driver("D", joint="J", expression="0.8*sin(2*t)")
    return m


def slider_crank(driven):
    """In-line slider–crank in the xy plane: revolute ×3 + prismatic (3 redundant equations)."""
    m = solver.Model(name="slider-crank", gravity=G)
    a = np.radians(60.0)
    A = 0.1 * np.array([np.cos(a), np.sin(a), 0.0])                   # crank pin
    P = np.array([A[0] + np.sqrt(0.3**2 - A[1]**2), 0.0, 0.0])         # piston pin
    w = 0.0 if driven else 15.0
    rot = np.array([[np.cos(a), -np.sin(a), 0], [np.sin(a), np.cos(a), 0], [0, 0, 1]])
    m.add_body("crank", mass=1.0, inertia=box_inertia(1.0, 0.1, 0.02, 0.02), position=A / 2, orientation=rot,
               angular_velocity=(0.0, 0.0, w), velocity=np.cross([0, 0, w], A / 2))
    m.add_body("rod", mass=2.0, inertia=box_inertia(2.0, 0.3, 0.02, 0.02), position=(A + P) / 2)
    m.add_body("piston", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=P)
    m.add_joint("J1", "revolute", "ground", "crank", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("J2", "revolute", "crank", "rod", origin=A, axis=(0, 0, 1))
    m.add_joint("J3", "revolute", "rod", "piston", origin=P, axis=(0, 0, 1))
    m.add_joint("J4", "prismatic", "ground", "piston", origin=P, axis=(1, 0, 0))
    if driven:
        m.add_driver("D", joint="J1", expression="2*pi*t")
    return m


def four_bar(redundant, driven=False, driven_joint="J1"):
    """Four-bar in the xy plane: ground pivots (0,0) and (0.4,0); crank 0.15, coupler ≈0.42,
    rocker 0.3.  Non-redundant version: revolute, revolute, spherical, universal (body_i is the
    rocker, so the tree joint is inverted); redundant version: four revolutes."""
    m = solver.Model(name="four-bar", gravity=G)
    A, B = np.array([0.0, 0.15, 0.0]), np.array([0.4, 0.3, 0.0])
    m.add_body("crank", mass=1.0, inertia=box_inertia(1.0, 0.02, 0.15, 0.02), position=A / 2,
               angular_velocity=(0, 0, 0 if driven else 3.0), velocity=(0 if driven else -0.225, 0, 0))
    m.add_body("coupler", mass=2.0, inertia=box_inertia(2.0, 0.42, 0.02, 0.02), position=(A + B) / 2)
    m.add_body("rocker", mass=1.5, inertia=box_inertia(1.5, 0.02, 0.3, 0.02), position=(0.4, 0.15, 0.0))
    m.add_joint("J1", "revolute", "ground", "crank", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("J2", "revolute", "crank", "coupler", origin=A, axis=(0, 0, 1))
    if redundant:
        m.add_joint("J3", "revolute", "coupler", "rocker", origin=B, axis=(0, 0, 1))
        m.add_joint("J4", "revolute", "ground", "rocker", origin=(0.4, 0, 0), axis=(0, 0, 1))
    else:
        m.add_joint("J3", "spherical", "coupler", "rocker", origin=B)
        m.add_joint("J4", "universal", "rocker", "ground", origin=(0.4, 0, 0), axis=(0, 0, 1), axis2=(1, 0, 0))
    if driven:
        m.add_driver("D", joint=driven_joint, expression="2*t" if driven_joint == "J1" else "-0.8*t")
    return m


def chain(n, gravity=G, pitch_angle=0.3):
    """n links of 0.4 m, alternating roll (about the link) and pitch (across it) revolutes."""
    m = solver.Model(name=f"chain-{n}", gravity=gravity)
    prev = "ground"
    for k in range(n):
        x0 = 0.4 * k
        m.add_body(f"L{k + 1}", mass=2.0 - 0.1 * k, inertia=(0.01 + 0.001 * k, 0.03, 0.035),
                   position=(x0 + 0.2, 0.0, 0.01 * k))
        axis = (1, 0, 0) if k % 2 == 0 else (0, np.cos(pitch_angle), np.sin(pitch_angle))
        m.add_joint(f"J{k + 1}", "revolute", prev, f"L{k + 1}", origin=(x0, 0, 0), axis=axis)
        prev = f"L{k + 1}"
    return m


def floating_chain(n=4):
    """A chain with no joint to ground (its first body gets a free joint), zero gravity, internal
    revolutes driven (inverse dynamics), started with a common rigid-body spin and drift."""
    m = solver.Model(name="floating", gravity=(0.0, 0.0, 0.0))
    w0, v0 = np.array([0.3, -0.5, 0.8]), np.array([0.2, 0.1, -0.3])
    for k in range(n):
        r = np.array([0.4 * k + 0.2, 0.0, 0.0])
        m.add_body(f"L{k + 1}", mass=1.0 + 0.2 * k, inertia=(0.01, 0.02 + 0.002 * k, 0.025), position=r,
                   velocity=v0 + np.cross(w0, r - [0.2, 0, 0]), angular_velocity=w0)
    for k in range(1, n):
        axis = (0, 0, 1) if k % 2 else (0, 1, 0)
        m.add_joint(f"J{k + 1}", "revolute", f"L{k}", f"L{k + 1}", origin=(0.4 * k, 0, 0), axis=axis)
        m.add_driver(f"D{k + 1}", joint=f"J{k + 1}", expression=f"0.4*sin({k + 1}*t)")
    return m


def planar_screw_fixed(driven=False):
    """Planar joint (inverted), screw joint and a fixed joint in one tree, with a spring; driven:
    the planar x and the screw rotation prescribed."""
    m = solver.Model(name="planar-screw", gravity=G)
    m.add_body("plate", mass=2.0, inertia=(0.02, 0.03, 0.04), position=(0.1, 0.0, 0.0),
               velocity=(0.3, 0.5, 0.0), angular_velocity=(0.0, 0.0, 2.0))
    m.add_body("nut", mass=0.5, inertia=(0.002, 0.001, 0.002), position=(0.3, 0.1, 0.0))
    m.add_body("weight", mass=0.3, inertia=(0.001, 0.001, 0.001), position=(0.3, 0.25, 0.05))
    m.add_joint("Pl", "planar", "plate", "ground", origin=(0.0, 0.0, 0.0), axis=(0, 0, 1))
    m.add_joint("Sc", "screw", "plate", "nut", origin=(0.3, 0.0, 0.0), axis=(0, 1, 0), pitch=0.05)
    m.add_joint("Fx", "fixed", "nut", "weight", origin=(0.3, 0.2, 0.0))
    m.add_spring_damper("S", "ground", "weight", point_i=(0.5, 0.5, 0.0), point_j=(0.3, 0.25, 0.05),
                        stiffness=200.0, damping=2.0)
    if driven:
        m.add_driver("Dx", joint="Pl", coordinate="x", expression="0.1*sin(3*t)")
        m.add_driver("Ds", joint="Sc", expression="2*t*t")
    return m


def spherical_with_distance_link():
    """A body on a ball joint held by a massless distance link (a cut joint that is never a tree
    joint) and a revolute–spherical link."""
    m = solver.Model(name="ball-link", gravity=G)
    m.add_body("body", mass=2.0, inertia=(0.03, 0.02, 0.04), position=(0.3, -0.2, 0.1),
               angular_velocity=(0.0, 0.0, 0.0))
    m.add_body("arm", mass=0.4, inertia=(0.002, 0.003, 0.001), position=(-0.2, -0.3, 0.0))
    m.add_joint("ball", "spherical", "ground", "body", origin=(0.0, 0.0, 0.0))
    m.add_joint("link", "distance", "ground", "body", origin=(0.5, 0.3, 0.0), origin2=(0.5, -0.2, 0.1))
    m.add_joint("pin", "revolute", "ground", "arm", origin=(-0.2, 0.0, 0.0), axis=(1, 0, 0))
    m.add_joint("rs", "revolute_spherical", "arm", "body", origin=(-0.2, -0.4, 0.0), axis=(1, 0, 0),
                origin2=(0.2, -0.4, 0.1))
    return m
