"""Build the sample projects in sample_models/ from code (the single source of their data).

Run ``python tools/make_samples.py`` after changing a builder; tests check that the files in
sample_models/ equal what these builders produce (golden files).  Each builder documents its data.
"""
from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "sample_models")
STEEL = 7850.0


def rod(length, radius):
    """Mass and principal inertia (about the CM; long axis x) of a solid steel rod."""
    m = STEEL * np.pi * radius**2 * length
    ix = 0.5 * m * radius**2
    it = m * (3 * radius**2 + length**2) / 12.0
    return m, (ix, it, it)


def link(model, name, start, end, radius=0.01, color=(0.3, 0.5, 0.8)):
    """A rod body from ``start`` to ``end`` in the xy-plane, body x axis along the rod."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    d = end - start
    length = float(np.linalg.norm(d))
    m, inertia = rod(length, radius)
    angle = np.arctan2(d[1], d[0])
    quat = (np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2))
    return model.add_body(name, mass=m, inertia=inertia, position=tuple((start + end) / 2), orientation=quat,
                          geometry={"shape": "box", "size": (length, 2 * radius, 2 * radius), "color": list(color)})


def pendulum():
    """Simple pendulum: a 1 m steel rod (radius 1 cm) pivoting about z at the origin, released
    horizontally under gravity −9.81 m/s² along y."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    link(m, "rod", (0, 0, 0), (1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 2.0)
    return m


def double_pendulum():
    """Double pendulum: two 0.5 m steel rods, revolute joints about z, released horizontally."""
    m = solver.Model(name="double-pendulum", gravity=(0.0, -9.81, 0.0))
    link(m, "upper", (0, 0, 0), (0.5, 0, 0))
    link(m, "lower", (0.5, 0, 0), (1.0, 0, 0), color=(0.8, 0.4, 0.3))
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(0.5, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 5.0)
    return m


def slider_crank():
    """In-line slider–crank of seed paper 2 (Fig. 3): crank 0.1 m, connecting rod 0.3 m, piston
    2 kg sliding along x; revolute, revolute, revolute, prismatic (3 redundant equations in 3D,
    handled by minimum-norm multipliers).  The crank starts at 15 rad/s (paper 2's example; the
    paper's dimensions are only in a figure, these are ours)."""
    m = solver.Model(name="slider-crank", gravity=(0.0, -9.81, 0.0))
    crank = link(m, "crank", (0, 0, 0), (0.1, 0, 0), radius=0.015)
    crank.set("angular_velocity", (0.0, 0.0, 15.0))
    link(m, "rod", (0.1, 0, 0), (0.4, 0, 0), color=(0.8, 0.4, 0.3))
    m.add_body("piston", mass=2.0, inertia=(0.002, 0.0015, 0.0015), position=(0.4, 0, 0),
               geometry={"shape": "cylinder", "radius": 0.04, "length": 0.08, "axis": "x", "color": [0.6, 0.6, 0.6]})
    m.add_joint("crank_pin", "revolute", "ground", "crank", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("crank_rod", "revolute", "crank", "rod", origin=(0.1, 0, 0), axis=(0, 0, 1))
    m.add_joint("rod_piston", "revolute", "rod", "piston", origin=(0.4, 0, 0), axis=(0, 0, 1))
    m.add_joint("cylinder", "prismatic", "ground", "piston", origin=(0.4, 0, 0), axis=(1, 0, 0))
    m.settings.set("t_end", 2.0)
    m.settings.set("output_step", 0.005)
    return m


def fourbar():
    """Planar four-bar (crank–rocker): ground pivots 0.4 m apart, crank 0.1 m, coupler 0.4 m,
    rocker 0.3 m, four revolute joints about z (3 redundant equations in 3D); the crank is driven
    at 2π rad/s."""
    m = solver.Model(name="four-bar", gravity=(0.0, -9.81, 0.0))
    a, b, c, d = 0.1, 0.4, 0.3, 0.4          # crank, coupler, rocker, ground
    A = np.array([0.0, 0.0, 0.0])
    D = np.array([d, 0.0, 0.0])
    B = A + a * np.array([0.0, 1.0, 0.0])                 # crank vertical
    # rocker tip C: |C − B| = b, |C − D| = c, upper branch
    dist = np.linalg.norm(D - B)
    x = (b**2 - c**2 + dist**2) / (2 * dist)
    h = np.sqrt(b**2 - x**2)
    e = (D - B) / dist
    C = B + x * e + h * np.array([-e[1], e[0], 0.0])
    link(m, "crank", A, B, radius=0.01)
    link(m, "coupler", B, C, color=(0.8, 0.4, 0.3))
    link(m, "rocker", D, C, color=(0.3, 0.7, 0.4))
    z = (0, 0, 1)
    m.add_joint("A", "revolute", "ground", "crank", origin=tuple(A), axis=z)
    m.add_joint("B", "revolute", "crank", "coupler", origin=tuple(B), axis=z)
    m.add_joint("C", "revolute", "coupler", "rocker", origin=tuple(C), axis=z)
    m.add_joint("D", "revolute", "ground", "rocker", origin=tuple(D), axis=z)
    m.add_driver("crank_drive", joint="A", expression="2*pi*t")
    m.settings.set("t_end", 2.0)
    m.settings.set("output_step", 0.005)
    return m


BUILDERS = {"pendulum": pendulum, "double_pendulum": double_pendulum, "slider_crank": slider_crank,
            "fourbar": fourbar}


def main():
    for name, build in BUILDERS.items():
        path = os.path.join(OUT, f"{name}.mbs.json")
        build().save(path)
        if os.path.exists(path + ".bak"):
            os.unlink(path + ".bak")
        print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
