"""Generated large models for scale tests, benchmarks and the GUI (issue 11, "Scale").

``chain(n)`` is an n-link pendulum chain (n bodies, n revolute joints, n degrees of freedom);
``planar_loops(n)`` a row of n parallelogram four-bars hanging from the ground, neighbouring
loops sharing a rocker (2n + 1 bodies, 3n + 1 revolute joints, n independent closed loops,
1 degree of freedom); ``fourbar_row(n)`` the same row as the singular-configuration benchmark
(unit links turning full revolutions, see :func:`fourbar_row`; its exact motion is in
``tools/fourbar_row.py``).  All return a :class:`solver.Model`; all joints turn about global z and
gravity is −9.81 m/s² along y, so the motion stays in the xy plane.

Command line (writes a project file that ``mbs run`` and the GUI open)::

    python tools/scale_models.py chain 500 chain_500.mbs.json
    python tools/scale_models.py loops 100 loops_100.mbs.json
    python tools/scale_models.py fourbar_row 40 fourbar_row_40.mbs.json
"""
from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402

ROD_SECTION = 0.01          # m, side of the square cross-section drawn for every link (display only)


def chain(n, tilt=0.5, length=0.1, mass=0.1):
    """n identical links L1..Ln (slender rods along their body x, ``length`` m, ``mass`` kg,
    inertia about the CM (1e-6, m ℓ²/12, m ℓ²/12)), joined end to end by revolute joints J1..Jn
    about global z (J1 to ground at the origin); the straight chain starts at rest, tilted ``tilt``
    rad from hanging straight down."""
    m = solver.Model(name=f"chain-{n}", gravity=(0.0, -9.81, 0.0))
    u = _direction(tilt)
    it = mass * length**2 / 12
    prev = "ground"
    for k in range(n):
        p = length * k * u
        m.add_body(f"L{k + 1}", mass=mass, inertia=(1e-6, it, it), position=tuple(p + 0.5 * length * u),
                   orientation=_along(tilt), geometry=_rod(length))
        m.add_joint(f"J{k + 1}", "revolute", prev, f"L{k + 1}", origin=tuple(p), axis=(0, 0, 1))
        prev = f"L{k + 1}"
    return m


def planar_loops(n, tilt=0.5, spacing=0.2, length=0.3, mass=0.1, omega=0.0):
    """n parallelogram four-bars in a row: rockers R0..Rn (``length`` m, ``mass`` kg) hang from
    ground pivots G_k at (k·spacing, 0, 0), tilted ``tilt`` rad from straight down and turning at
    ``omega`` rad/s about +z (the couplers translate with their tips); coupler Ck
    (``spacing`` m, ``mass`` kg) joins the tips of R(k−1) and Rk (joints P_k on R(k−1), Q_k on
    Rk).  Loop k is ground–R(k−1)–Ck–Rk; all joints revolute about z (in 3D each loop has 3
    redundant equations, handled by minimum-norm multipliers).

    Closed form: every rocker turns by the same angle θ from straight down and the couplers
    translate, so the mechanism is a physical pendulum J θ̈ = −G sin θ with
    J = (n+1)(I_r + m ℓ²/4) + n m ℓ² and G = g m ℓ ((n+1)/2 + n) (rods: I_r = m ℓ²/12 about the CM)."""
    m = solver.Model(name=f"loops-{n}", gravity=(0.0, -9.81, 0.0))
    u = _direction(tilt)
    spin = np.array([0.0, 0.0, omega])
    tip_velocity = np.cross(spin, length * u) + 0.0      # + 0.0: no -0.0 in the saved file
    it_r, it_c = mass * length**2 / 12, mass * spacing**2 / 12
    tips = []
    for k in range(n + 1):
        pivot = np.array([k * spacing, 0.0, 0.0])
        m.add_body(f"R{k}", mass=mass, inertia=(1e-6, it_r, it_r), position=tuple(pivot + 0.5 * length * u),
                   orientation=_along(tilt), geometry=_rod(length), velocity=tuple(0.5 * tip_velocity),
                   angular_velocity=tuple(spin))
        m.add_joint(f"G{k}", "revolute", "ground", f"R{k}", origin=tuple(pivot), axis=(0, 0, 1))
        tips.append(pivot + length * u)
    for k in range(1, n + 1):
        m.add_body(f"C{k}", mass=mass, inertia=(1e-6, it_c, it_c), position=tuple(0.5 * (tips[k - 1] + tips[k])),
                   geometry=_rod(spacing, color=(0.8, 0.4, 0.3)), velocity=tuple(tip_velocity))
        m.add_joint(f"P{k}", "revolute", f"R{k - 1}", f"C{k}", origin=tuple(tips[k - 1]), axis=(0, 0, 1))
        m.add_joint(f"Q{k}", "revolute", f"C{k}", f"R{k}", origin=tuple(tips[k]), axis=(0, 0, 1))
    return m


# The four-bar row benchmark: unit links of unit mass, cranks started straight up at 1 rad/s.
FOURBAR_ROW = {"length": 1.0, "spacing": 1.0, "mass": 1.0, "tilt": np.pi, "omega": 1.0}


def fourbar_row(n):
    """The four-bar row benchmark: :func:`planar_loops` with ``FOURBAR_ROW`` — N+1 cranks R0..Rn
    and N couplers C1..Cn (2N+1 links of 1 m and 1 kg, 3N+1 revolute joints), cranks started
    pointing straight up and turning at 1 rad/s.  Gravity then drives them round full revolutions;
    at every horizontal pass all links are collinear with the ground line, a singular
    configuration where each loop may fold (the DOF jumps from 1 to N+1).  Exact motion:
    ``tools/fourbar_row.py`` (all cranks turn by the same angle θ(t))."""
    m = planar_loops(n, **FOURBAR_ROW)
    m.name = f"fourbar-row-{n}"
    return m


GENERATORS = {"chain": chain, "loops": planar_loops, "fourbar_row": fourbar_row}


def main(argv=None):
    parser = argparse.ArgumentParser(description="Write a generated large model as a project file.")
    parser.add_argument("kind", choices=sorted(GENERATORS))
    parser.add_argument("n", type=int, help="links of the chain / loops of the mechanism (≥ 1)")
    parser.add_argument("out", metavar="OUT.mbs.json")
    args = parser.parse_args(argv)
    if args.n < 1:
        parser.error("n must be ≥ 1")
    GENERATORS[args.kind](args.n).save(args.out)
    print("wrote", args.out)


# ---- helpers --------------------------------------------------------------------------------------
def _direction(tilt):
    """Unit vector tilted ``tilt`` rad (about +z) from straight down."""
    return np.array([np.sin(tilt), -np.cos(tilt), 0.0])


def _along(tilt):
    """Quaternion (w, x, y, z) turning body x onto :func:`_direction` (a turn of tilt − π/2 about z)."""
    a = tilt - np.pi / 2
    return (np.cos(a / 2), 0.0, 0.0, np.sin(a / 2))


def _rod(length, color=(0.3, 0.5, 0.8)):
    return {"shape": "box", "size": (length, ROD_SECTION, ROD_SECTION), "color": list(color)}


if __name__ == "__main__":
    main()
