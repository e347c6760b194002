"""Build the sample projects in sample_models/ from code (the single source of their data).

Run ``python tools/make_samples.py`` after changing a builder; tests check that the files in
sample_models/ equal what these builders produce (golden files).  Each builder documents its data.
"""
from __future__ import annotations

import functools
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


# What the samples run with when their builder does not say: the set-ups of the papers they
# reproduce (Cartesian formulation, an Adams integrator (LSODA), rtol 1e-6, atol 1e-8), not the
# defaults of new models (Settings: formulation "auto", integrator "auto", rtol 1e-8, atol 1e-10,
# chosen by bench/work_precision.py and bench/peers.py).
PUBLISHED = {"formulation": "cartesian", "integrator": "adams", "rtol": 1e-6, "atol": 1e-8}


def as_published(build):
    """The builder with PUBLISHED for the settings it leaves at the new models' defaults."""
    @functools.wraps(build)
    def built(*args, **kwargs):
        m = build(*args, **kwargs)
        for key, value in PUBLISHED.items():
            if m.settings.values[key] == solver.Settings.field(key).default:
                m.settings.set(key, value)
        return m
    return built


@as_published
def pendulum():
    """Simple pendulum: a 1 m steel rod (radius 1 cm) pivoting about z at the origin, released
    horizontally under gravity −9.81 m/s² along y."""
    m = solver.Model(name="pendulum", gravity=(0.0, -9.81, 0.0))
    link(m, "rod", (0, 0, 0), (1, 0, 0))
    m.add_joint("pivot", "revolute", "ground", "rod", origin=(0, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 2.0)
    return m


@as_published
def double_pendulum():
    """Double pendulum: two 0.5 m steel rods, revolute joints about z, released horizontally."""
    m = solver.Model(name="double-pendulum", gravity=(0.0, -9.81, 0.0))
    link(m, "upper", (0, 0, 0), (0.5, 0, 0))
    link(m, "lower", (0.5, 0, 0), (1.0, 0, 0), color=(0.8, 0.4, 0.3))
    m.add_joint("shoulder", "revolute", "ground", "upper", origin=(0, 0, 0), axis=(0, 0, 1))
    m.add_joint("elbow", "revolute", "upper", "lower", origin=(0.5, 0, 0), axis=(0, 0, 1))
    m.settings.set("t_end", 5.0)
    return m


@as_published
def slider_crank():
    """In-line slider–crank of Lee, Lee & Bae (2013) (Fig. 3): crank 0.1 m, connecting rod 0.3 m, piston
    2 kg sliding along x; revolute, revolute, revolute, prismatic (3 redundant equations in 3D,
    handled by minimum-norm multipliers).  The crank starts at 15 rad/s (Lee, Lee & Bae (2013)'s example; the
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


@as_published
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


# ---- RRC 7-DOF robot arm (Kim & You (1997), Kim & You 1997, §4) -----------------------------------
SLUG = 14.5939                 # kg per slug
LB_IN_S2 = 0.112985            # kg·m² per lb·in·s²
LB_PER_IN = 175.1268           # N/m per lb/in
INCH = 0.0254                  # m
# Table 2 of Kim & You (1997): mass (slug), Ixx, Iyy, Izz (lb·in·s², about the CM, x = link axis)
RRC_TABLE2 = ((229.5, 6.907, 10.0, 10.0), (122.0, 3.056, 7.0, 7.0), (63.5, 1.773, 4.868, 4.868),
              (45.0, 1.559, 1.7823, 1.7823), (24.5, 0.374, 1.197, 1.197), (12.5, 0.299, 0.37, 0.37),
              (8.0, 0.2, 0.2, 0.2))
RRC_LENGTHS = (0.55, 0.50, 0.45, 0.40, 0.35, 0.30, 0.25)      # m, ours (the paper's figure is lost)
RRC_RADII = (0.09, 0.08, 0.07, 0.06, 0.05, 0.045, 0.04)        # display only
RRC_SPRING = 1.7513e7 * LB_PER_IN                              # N/m (1.7513e7 lb/in)


def rrc_arm(name="rrc-arm", pitch=(0.0, 0.0, 0.0), rates=(0.0,) * 7):
    """The 7-DOF RRC arm of Kim & You (1997) §4 (Fig. 4, Table 2), no drivers: 7 links in a serial
    chain, joints 1, 3, 5, 7 roll (revolute about the link axis), joints 2, 4, 6 pitch (revolute
    about global z, across the links).  Joint k sits at the upper end of link k.

    Data (SI, converted from Table 2): mass [slug] × 14.5939 = kg; Ixx, Iyy, Izz [lb·in·s²] ×
    0.112985 = kg·m² about the CM, body x along the link (Ixx is the small roll inertia, Iyy = Izz:
    the links are axisymmetric), products of inertia zero.  Link lengths are ours (the paper gives
    them only in a figure that was not transcribed): 0.55, 0.50, 0.45, 0.40, 0.35, 0.30, 0.25 m
    (2.80 m reach), CM at mid-link.  Note: Table 2's masses in slug (3349 kg for link 1) are far
    heavier than its inertias suggest (radius of gyration ≈ 2 cm); read as pound-mass they would
    be 32.174 times lighter.  We keep the table's stated unit.

    The arm hangs straight down (ceiling mount) along −y at zero joint angles, gravity −9.81 m/s²
    along y, so the pitch joints move it in the vertical xy plane.  ``pitch`` = (θ2, θ4, θ6) bends
    the initial configuration at the pitch joints (rad, positive about +z); joint coordinates are
    zero at the initial configuration whatever the bend."""
    m = solver.Model(name=name, gravity=(0.0, -9.81, 0.0))
    p = np.zeros(3)
    phi = 0.0
    prev = "ground"
    w = np.zeros(3)                                              # angular velocity of link k
    vp = np.zeros(3)                                             # velocity of joint point p
    for k in range(7):
        if k % 2 == 1:
            phi += pitch[k // 2]
        u = np.array([np.sin(phi), -np.cos(phi), 0.0])          # link axis (body x), hanging down at phi=0
        a = phi - np.pi / 2
        mass_slug, ixx, iyy, izz = RRC_TABLE2[k]
        L = RRC_LENGTHS[k]
        body = f"link{k + 1}"
        axis = tuple(u) if k % 2 == 0 else (0.0, 0.0, 1.0)
        w = w + rates[k] * np.array(axis)
        m.add_body(body, mass=mass_slug * SLUG, inertia=(ixx * LB_IN_S2, iyy * LB_IN_S2, izz * LB_IN_S2),
                   position=tuple(p + 0.5 * L * u), orientation=(np.cos(a / 2), 0.0, 0.0, np.sin(a / 2)),
                   velocity=tuple(vp + np.cross(w, 0.5 * L * u) + 0.0), angular_velocity=tuple(w + 0.0),
                   geometry={"shape": "cylinder", "radius": RRC_RADII[k], "length": L, "axis": "x",
                             "color": [0.3, 0.5, 0.8] if k % 2 == 0 else [0.85, 0.55, 0.25]})
        m.add_joint(f"J{k + 1}", "revolute", prev, body, origin=tuple(p), axis=axis)
        prev = body
        vp = vp + np.cross(w, L * u)
        p = p + L * u
    return m


@as_published
def rrc_arm_case1():
    """Kim & You (1997) §4, case 1: the RRC arm (:func:`rrc_arm`, hanging straight down) with the roll
    joints 1, 3, 5, 7 locked by drivers ``0`` (the joints stay in the model and report the locking
    torque) and joint 2 driven ``q2 = (π/3) sin(π t / 5)`` (eq. 37) for 5 s; joints 4 and 6 are
    free and start at 0 with zero joint rates (the bodies below joint 2 start turning rigidly at
    q̇2(0) = π²/15 rad/s): DOF = 7 − 5 = 2.  Outputs of interest: driver torque of joint 2
    (paper Fig. 5) and the x-reaction of joint 2 (Fig. 6)."""
    m = rrc_arm("rrc-arm-case1", rates=(0.0, np.pi**2 / 15, 0.0, 0.0, 0.0, 0.0, 0.0))
    for k in (1, 3, 5, 7):
        m.add_driver(f"lock{k}", joint=f"J{k}", expression="0")
    m.add_driver("drive2", joint="J2", expression="(pi/3)*sin(pi*t/5)")
    m.settings.set("t_end", 5.0)
    m.settings.set("output_step", 0.01)
    m.settings.set("formulation", "relative")
    return m


@as_published
def rrc_arm_case2():
    """Kim & You (1997) §4, case 2: the gripper holds an object fixed to ground — a closed loop the
    paper approximates by a 1-inch spring of stiffness 1.7513e7 lb/in = 3.067e9 N/m (× 175.1268)
    between the arm tip and ground.  The spring (free length 0.0254 m, so unloaded at t = 0) runs
    from the tip of link 7 to a ground point 1 inch beside the tip, in −x (across the arm, in the
    plane of the pitch motion, on the side the forearm swings to; placed across rather than along
    the arm so that arm + spring form a well-conditioned four-bar: joint 4 crank, links 6–7
    coupler, spring rocker).  Roll joints and joint 2 locked (drivers ``0``), joint 4 driven
    ``q4 = (π/30) sin(π t − π)`` (eq. 38) for 1 s: DOF = 7 − 6 = 1 (joint 6), and that one is held
    by the spring — a stiff mode near 1 kHz — so the run uses the implicit generalized-α
    integrator (fixed 1 ms step) in the relative formulation.  Outputs of interest: driver torque
    of joint 4 (paper Fig. 7) and the x-reaction of joint 4 (Fig. 8).

    Initial velocities: q̇4(0) = −π²/30 rad/s (the driver's rate) and q̇6(0) such that the tip
    moves along the spring's normal (tip x-velocity 0), so the loop starts closed at the velocity
    level too; otherwise the start would excite the undamped ≈ 1 kHz spring mode (±2e4 N·m at
    joint 4), which the paper's smooth curves do not show."""
    q4d = -np.pi**2 / 30
    d46, d6t = RRC_LENGTHS[3] + RRC_LENGTHS[4], RRC_LENGTHS[5] + RRC_LENGTHS[6]
    q6d = -q4d * d46 / d6t - q4d                   # tip x-velocity q̇4 d46 + (q̇4 + q̇6) d6t = 0
    m = rrc_arm("rrc-arm-case2", rates=(0.0, 0.0, 0.0, q4d, 0.0, q6d, 0.0))
    for k in (1, 3, 5, 7):
        m.add_driver(f"lock{k}", joint=f"J{k}", expression="0")
    m.add_driver("lock2", joint="J2", expression="0")
    m.add_driver("drive4", joint="J4", expression="(pi/30)*sin(pi*t - pi)")
    tip = np.array([0.0, -sum(RRC_LENGTHS), 0.0])
    anchor = tip + np.array([-INCH, 0.0, 0.0])
    m.add_spring_damper("gripper_spring", "ground", "link7", point_i=tuple(anchor), point_j=tuple(tip),
                        stiffness=RRC_SPRING, free_length=INCH)
    m.settings.set("t_end", 1.0)
    m.settings.set("output_step", 0.005)
    m.settings.set("formulation", "relative")
    m.settings.set("integrator", "galpha")
    m.settings.set("max_step", 0.001)
    return m


# ---- four-bar with a spring (Bae, Yang & Seo (2003), Bae, Yang & Seo 2003, §5.1) ------------------------
FOURBAR_CRANK = 0.5            # m, links A and C (ground pivots to coupler pins)
FOURBAR_COUPLER = 0.4          # m, link B and the ground link
FOURBAR_SPRING_HEIGHT = 0.47   # m below the pivot of link C where the spring attaches (ours)
FOURBAR_SPRING_LENGTH = 0.3    # m, spring length at θ = 0 (its free length: unloaded there)
FOURBAR_KICK = 1.0             # rad/s, initial angular velocity of link A (the perturbation)


@as_published
def fourbar_spring():
    """The four-bar with a spring of Bae, Yang & Seo (2003) (§5.1, Fig. 3, Table 1): links A and C 7.707 kg,
    161 760.83 kg·mm² = 0.16176083 kg·m²; link B 3.946 kg, 53 005.79 kg·mm² = 0.05300579 kg·m²
    (about the CM, across the link); spring 10 N/mm = 1e4 N/m, no damping.  The masses and
    inertias are those of steel rods of radius 25 mm × 500 mm (A, C) and 20 mm × 400 mm (B); the
    small axial inertia ½ m r² (not in the table) is taken from that reading.

    Geometry (ours; the paper gives it only in its Fig. 3): a parallelogram hanging in the vertical
    xy plane, gravity −9.81 m/s² along y — ground pivots O_A = (0, 0, 0) and O_C = (0.4, 0, 0),
    links A and C 0.5 m pointing down, coupler B 0.4 m horizontal at y = −0.5 m; four revolute
    joints about z (θ1 at O_A, θ2 at A–B, θ3 at B–C; the relative formulation cuts one joint, as
    the paper does).  The spring is horizontal, from a ground point 0.3 m to the right of link C
    to the point of link C 0.47 m below its pivot, unloaded at θ1 = θ2 = θ3 = 0, which is therefore
    the static equilibrium the paper linearizes at.  Energy method for the one mode (links A and C
    turn by θ, B translates): J = 2 (I_A + m_A (L/2)²) + m_B L² = 2.27337 kg·m²,
    K = k h² + g (2 m_A L/2 + m_B L) = 2209 + 57.16 N·m/rad, f = √(K/J)/2π = 5.0249 Hz — the
    attachment height h = 0.47 m was chosen to come near the paper's 5.04 Hz.

    The run starts from rest at θ = 0 except link A, given ω = 1 rad/s (a small perturbation:
    amplitude ≈ 1.8°), for 3 s; the FFT of link C's rotation (``solver.dominant_frequency``) then
    matches the linearized frequency (tests/solver/test_linearize.py)."""
    m = solver.Model(name="fourbar-spring", gravity=(0.0, -9.81, 0.0))
    L, d, h = FOURBAR_CRANK, FOURBAR_COUPLER, FOURBAR_SPRING_HEIGHT
    mass_ac, inertia_ac, r_ac = 7.707, 161760.83e-6, 0.025
    mass_b, inertia_b, r_b = 3.946, 53005.79e-6, 0.02
    down = (np.cos(-np.pi / 4), 0.0, 0.0, np.sin(-np.pi / 4))       # body x along −y
    for name, x in (("link_A", 0.0), ("link_C", d)):
        kick = FOURBAR_KICK if name == "link_A" else 0.0
        m.add_body(name, mass=mass_ac, inertia=(0.5 * mass_ac * r_ac**2, inertia_ac, inertia_ac),
                   position=(x, -L / 2, 0.0), orientation=down, velocity=(kick * L / 2, 0.0, 0.0),
                   angular_velocity=(0.0, 0.0, kick),
                   geometry={"shape": "cylinder", "radius": r_ac, "length": L, "axis": "x",
                             "color": [0.3, 0.5, 0.8]})
    m.add_body("link_B", mass=mass_b, inertia=(0.5 * mass_b * r_b**2, inertia_b, inertia_b),
               position=(d / 2, -L, 0.0),
               geometry={"shape": "cylinder", "radius": r_b, "length": d, "axis": "x", "color": [0.8, 0.4, 0.3]})
    z = (0.0, 0.0, 1.0)
    m.add_joint("J1", "revolute", "ground", "link_A", origin=(0.0, 0.0, 0.0), axis=z)
    m.add_joint("J2", "revolute", "link_A", "link_B", origin=(0.0, -L, 0.0), axis=z)
    m.add_joint("J3", "revolute", "link_B", "link_C", origin=(d, -L, 0.0), axis=z)
    m.add_joint("J4", "revolute", "ground", "link_C", origin=(d, 0.0, 0.0), axis=z)
    m.add_spring_damper("spring", "ground", "link_C", point_i=(d + FOURBAR_SPRING_LENGTH, -h, 0.0),
                        point_j=(d, -h, 0.0), stiffness=1e4, damping=0.0)
    m.settings.set("t_end", 3.0)
    m.settings.set("output_step", 0.01)
    return m



# ---- four-bar through singular positions (Kim & Yoo (1997), Kim & Yoo 1997, §4) ------------------
SINGULAR_LINK = 1.0            # m, crank, rocker, coupler and ground link (a parallelogram; ours)
SINGULAR_TILT = np.radians(10.0)   # released at rest 10° above the flattened position
COPPER = {"density": 8.91e3, "youngs": 117e9, "poisson": 0.35}
SINGULAR_COUPLER_SECTION = {"height": 0.01, "width": 0.04}   # m: in-plane 10 mm, out-of-plane 40 mm


def fourbar_singular(flexible):
    """Parallelogram four-bar falling through its flattened (singular) positions (Kim & Yoo (1997),
    Fig. 1; the paper gives the link dimensions only in a figure — ours): ground pivots at (0,0,0)
    and (1,0,0), crank and rocker 1 m steel rods (radius 1 cm, 2.47 kg), coupler 1 m; four
    revolute joints about z (3 redundant equations).  Released at rest with the cranks 10° above
    the horizontal, the links are collinear (singular) whenever the cranks pass 0° or ±180°.
    One-DOF energy estimate (θ the crank angle): J θ̈ = −g ℓ m_tot cos θ with ℓ_eff = J/(m ℓ) =
    a (2 m₁/3 + m_c)/(m₁ + m_c) ≈ 0.83 m, so θ = 0 is reached after ≈ √(2·0.175·ℓ_eff/g) ≈ 0.17 s
    and θ = −180° half a swing (amplitude 100° about the bottom) later, at ≈ 0.95 s — the paper's
    0.18 s and 1.0 s.  The coupler is copper (ρ 8.91e3 kg/m³, E 117 GPa, ν 0.35), 10 mm in the
    plane × 40 mm, 3.56 kg: rigid, or (``flexible``) 10 beam elements / 11 nodes with 2 free–free
    modes (in-plane bending, 37 Hz and 103 Hz; the first out-of-plane one is 148 Hz).  Saved
    settings: hybrid LU↔QR partitioning, 2 s.  The coupler keeps free–free modes (``interface="free"``,
    the reduction docs/formulations.md's partitioning tables were measured with), not the
    Craig–Bampton default: attached, its bending modes at t = 0 are 24.32 and 67.21 Hz against the
    Craig–Bampton 24.15 and 65.05 Hz (0.7 % and 3.3 % too stiff), but Craig–Bampton adds the
    joints' axial and end-rotation modes (up to 428 Hz) and a run takes 5.7× longer."""
    name = "fourbar-singular-" + ("flexible" if flexible else "rigid")
    m = solver.Model(name=name, gravity=(0.0, -9.81, 0.0))
    a = SINGULAR_LINK
    c, s = np.cos(SINGULAR_TILT), np.sin(SINGULAR_TILT)
    A, D = np.zeros(3), np.array([a, 0.0, 0.0])
    B, C = A + a * np.array([c, s, 0.0]), D + a * np.array([c, s, 0.0])
    link(m, "crank", A, B)
    link(m, "rocker", D, C, color=(0.3, 0.7, 0.4))
    h, w = SINGULAR_COUPLER_SECTION["height"], SINGULAR_COUPLER_SECTION["width"]
    if flexible:
        m.add_flexible_beam("coupler", tuple(B), tuple(C), section=SINGULAR_COUPLER_SECTION, material=COPPER,
                            elements=10, modes=2, interface="free")
    else:
        mc = COPPER["density"] * h * w * a
        m.add_body("coupler", mass=mc, inertia=(mc * (h**2 + w**2) / 12, mc * (a**2 + w**2) / 12,
                                                 mc * (a**2 + h**2) / 12),
                   position=tuple((B + C) / 2),
                   geometry={"shape": "box", "size": (a, h, w), "color": [0.8, 0.5, 0.2]})
    z = (0.0, 0.0, 1.0)
    m.add_joint("A", "revolute", "ground", "crank", origin=tuple(A), axis=z)
    m.add_joint("B", "revolute", "crank", "coupler", origin=tuple(B), axis=z)
    m.add_joint("C", "revolute", "coupler", "rocker", origin=tuple(C), axis=z)
    m.add_joint("D", "revolute", "ground", "rocker", origin=tuple(D), axis=z)
    m.settings.set("t_end", 2.0)
    m.settings.set("output_step", 0.01)
    m.settings.set("partitioning", "hybrid")
    return m


@as_published
def fourbar_singular_rigid():
    return fourbar_singular(False)


@as_published
def fourbar_singular_flexible():
    return fourbar_singular(True)

@as_published
def vehicle(manoeuvre, link_bodies=False):
    """The CAE-TC compact car of Choi & Yoo (2000) (solver/vehicle/cae_tc.py, data in docs/vehicle.md):
    14 bodies with massless links (or 23 with the links and rear dampers as light bodies), z up,
    10 s of ``manoeuvre`` (straight, bump, j_turn, lane_change) under PI speed control."""
    from solver.vehicle.cae_tc import cae_tc
    return cae_tc(manoeuvre, link_bodies=link_bodies)


RAMP_ANGLE = np.radians(30.0)   # tan 30° = 0.577 > μ_s: the box slides
RAMP_FRICTION = (0.5, 0.4)      # (μ_s, μ_d)


def box_on_ramp():
    """A 0.1 m steel cube (7.85 kg, I = m a²/6) sliding down a ramp tilted 30° about z (ours): the
    ramp is a 2 m × 0.1 m × 0.6 m body welded to ground, its top face the contact plane
    (``geometry_i``); the cube's own box geometry is its contact shape, its 4 lower corners the
    contact points.  Contact: k = 1e6 N/m^1.5, e = 1.5, impact damping 1e3 N·s/m over 0.1 mm,
    μ_s = 0.5, μ_d = 0.4 (Adams friction, v_s = 1 mm/s, v_d = 10 mm/s; docs/contact.md).  The cube
    starts at rest at its static penetration and slides at a = g (sin θ − μ_d cos θ) = 1.5067 m/s²
    (tests/solver/test_contact.py); 1 s with 10 ms outputs."""
    m = solver.Model(name="box-on-ramp", gravity=(0.0, -9.81, 0.0))
    c, s = np.cos(RAMP_ANGLE / 2), np.sin(RAMP_ANGLE / 2)
    tilt = (c, 0.0, 0.0, s)                                   # body x along the ramp, y its normal
    down = np.array([-np.cos(RAMP_ANGLE), -np.sin(RAMP_ANGLE), 0.0])
    normal = np.array([-np.sin(RAMP_ANGLE), np.cos(RAMP_ANGLE), 0.0])
    m.add_body("ramp", mass=100.0, inertia=(10.0, 40.0, 40.0), position=tuple(-0.05 * normal), orientation=tilt,
               geometry={"shape": "box", "size": [2.0, 0.1, 0.6], "color": [0.6, 0.6, 0.6]})
    m.add_joint("weld", "fixed", "ground", "ramp", origin=(0.0, 0.0, 0.0))
    a, mass = 0.1, STEEL * 0.1**3
    sink = (mass * 9.81 * np.cos(RAMP_ANGLE) / 4 / 1e6) ** (1 / 1.5)      # static penetration of each corner
    m.add_body("box", mass=mass, inertia=(mass * a * a / 6,) * 3,
               position=tuple(0.8 * -down + (a / 2 - sink) * normal), orientation=tilt,
               geometry={"shape": "box", "size": [a, a, a], "color": [0.8, 0.4, 0.3]})
    m.add_contact("slide", "ramp", "box", stiffness=1e6, damping=1e3, exponent=1.5, friction=RAMP_FRICTION,
                  geometry_i={"shape": "plane", "point": [0.0, 0.05, 0.0], "normal": [0.0, 1.0, 0.0]})
    m.settings.set("t_end", 1.0)
    m.settings.set("output_step", 0.01)
    return m


# The valve train of cam_follower(): an eccentric (a sphere of radius CAM_RADIUS whose centre turns
# at CAM_ECCENTRICITY about the camshaft, starting below it) under a flat-faced follower pressed
# down by a spring: lift s = e (1 − cos θ).
CAM_RADIUS, CAM_ECCENTRICITY = 0.02, 0.005          # m
FOLLOWER_MASS, VALVE_SPRING, SPRING_PRELOAD = 0.1, 2000.0, 20.0    # kg, N/m, N (compression at zero lift)
CAM_CONTACT = {"stiffness": 1e9, "exponent": 1.5, "damping": 500.0, "penetration_depth": 1e-6}  # impact law


def cam_lift_off_speed():
    """The camshaft speed ω* (rad/s) from which the follower leaves the cam: the contact force on a
    follower that keeps to the profile s = e (1 − cos θ), s̈ = e ω² cos θ, is
    N(θ) = m (g + s̈) + P + k_s s = m g + P + k_s e − (k_s − m ω²) e cos θ (:func:`cam_contact_force`),
    least at the top of the lift (θ = π) once m ω² > k_s; N = 0 there at
    ω*² = (m g + P + 2 k_s e)/(m e)."""
    m, e = FOLLOWER_MASS, CAM_ECCENTRICITY
    return float(np.sqrt((m * 9.81 + SPRING_PRELOAD + 2 * VALVE_SPRING * e) / (m * e)))


def cam_contact_force(theta, omega):
    """N(θ) of :func:`cam_lift_off_speed`: the contact force on a follower that keeps to the profile."""
    m, e = FOLLOWER_MASS, CAM_ECCENTRICITY
    return m * 9.81 + SPRING_PRELOAD + VALVE_SPRING * e - (VALVE_SPRING - m * omega ** 2) * e * np.cos(theta)


def cam_follower(speed_ratio=0.9):
    """A valve train: a camshaft turning at ``speed_ratio`` × the lift-off speed
    (:func:`cam_lift_off_speed`, 286 rad/s) about z (a driver on its revolute joint), its cam an
    eccentric disc (a sphere of radius 20 mm whose centre starts 5 mm below the axis: lift
    s = e (1 − cos θ), the follower at rest at the start);
    a 0.1 kg follower on a vertical prismatic joint, its flat face (a plane, ``geometry_i``) on the
    cam, pressed down by a 2000 N/m valve spring with 20 N of preload at zero lift.  Contact
    k = 1e9 N/m^1.5, e = 1.5, impact damping 100 N·s/m, no friction.  Below ω* the follower's lift
    is the cam profile (within the contact's penetration, 7 µm at 20 N) and the contact force the
    closed form N(θ); above, the follower leaves the cam where N(θ) = 0, before the top
    (tests/solver/test_contact_samples.py).  Ten turns of the cam, 0.5 ms outputs, rtol 1e-6."""
    R, e, m = CAM_RADIUS, CAM_ECCENTRICITY, FOLLOWER_MASS
    omega = speed_ratio * cam_lift_off_speed()
    model = solver.Model(name="cam-follower", gravity=(0.0, -9.81, 0.0))
    model.add_body("camshaft", mass=1.0, inertia=(1e-3, 1e-3, 1e-3),
                   geometry={"shape": "sphere", "radius": R, "offset": [0.0, -e, 0.0], "color": [0.7, 0.7, 0.75]})
    model.add_joint("bearing", "revolute", "ground", "camshaft", axis=(0.0, 0.0, 1.0))
    model.add_driver("drive", "bearing", f"{omega!r}*t")
    sink = (SPRING_PRELOAD + m * 9.81) / CAM_CONTACT["stiffness"]          # static penetration^1.5
    face = R - e - sink ** (1 / 1.5)                                        # the face's height at rest
    height = 0.02                                                           # the follower's CM over its face
    model.add_body("follower", mass=m, inertia=(1e-5, 1e-5, 1e-5), position=(0.0, face + height, 0.0),
                   geometry={"shape": "cylinder", "radius": 0.012, "length": 2 * height, "axis": "y",
                             "color": [0.8, 0.4, 0.3]})
    model.add_joint("guide", "prismatic", "ground", "follower", origin=(0.0, face + height, 0.0),
                    axis=(0.0, 1.0, 0.0))
    top = face + height + 0.1
    model.add_spring_damper("valve_spring", "ground", "follower", point_i=(0.0, top, 0.0),
                            point_j=(0.0, face + height, 0.0), stiffness=VALVE_SPRING,
                            free_length=0.1 + SPRING_PRELOAD / VALVE_SPRING)
    model.add_contact("cam", "follower", "camshaft", **CAM_CONTACT,
                      geometry_i={"shape": "plane", "point": [0.0, -height, 0.0], "normal": [0.0, -1.0, 0.0]})
    model.settings.set("t_end", 10 * 2 * np.pi / omega)
    model.settings.set("output_step", 5e-4)
    model.settings.set("rtol", 1e-6)        # the checks' numbers are those of 1e-8 (the contact's compliance
    model.settings.set("atol", 1e-8)        # dominates), in half the steps
    return model


# The end stop of slider_end_stop(): a 2 kg carriage on a vertical rail dropped onto its lower stop.
SLIDER_DROP, SLIDER_MASS, SLIDER_STOP = 0.05, 2.0, {"stop_stiffness": 2e5, "stop_damping": 200.0,
                                                    "stop_depth": 1e-4}


def slider_end_stop():
    """A 2 kg carriage on a vertical prismatic rail released 50 mm above its lower end stop
    (``lower_limit`` −0.05 m; the Adams IMPACT stop, k = 2e5 N/m, c_max = 200 N·s/m from 0.1 mm
    of penetration): it falls freely for √(2h/g) = 0.101 s, strikes at √(2 g h) = 0.99 m/s,
    bounces and settles on the stop at the static penetration m g/k = 98 µm
    (tests/solver/test_contact_samples.py).  1 s, 5 ms outputs."""
    model = solver.Model(name="slider-end-stop", gravity=(0.0, -9.81, 0.0))
    model.add_body("rail", mass=5.0, inertia=(0.1, 0.1, 0.1), position=(0.0, 0.0, 0.0),
                   geometry={"shape": "box", "size": [0.02, 0.3, 0.02], "color": [0.6, 0.6, 0.6]})
    model.add_joint("base", "fixed", "ground", "rail")
    model.add_body("carriage", mass=SLIDER_MASS, inertia=(2e-3, 2e-3, 2e-3), position=(0.03, 0.05, 0.0),
                   geometry={"shape": "box", "size": [0.04, 0.04, 0.04], "color": [0.8, 0.4, 0.3]})
    model.add_joint("rail_slide", "prismatic", "rail", "carriage", origin=(0.03, 0.05, 0.0), axis=(0.0, 1.0, 0.0),
                    lower_limit=-SLIDER_DROP, upper_limit=0.05, **SLIDER_STOP)
    model.settings.set("t_end", 1.0)
    model.settings.set("output_step", 5e-3)
    return model


# The Geneva drive of geneva(): a 4-slot wheel indexed by a pin on a crank turning at GENEVA_SPEED.
GENEVA_CENTRES, GENEVA_PIN, GENEVA_CLEARANCE = 0.1, 0.006, 5e-4     # m: axis distance C, pin radius, slot play
GENEVA_SPEED = 4 * np.pi                                            # rad/s: two turns of the crank a second


def geneva():
    """A 4-slot Geneva drive in the xy-plane: a crank on a revolute joint at (C, 0) (C = 0.1 m)
    driven at 2 turns/s, its pin (a sphere of radius 6 mm at a = C sin 45° from the crank's axis) on
    the driven wheel's slots (each two wall boxes 0.5 mm wider than the pin, from 20 to 75 mm from
    the wheel's axis; the wheel's body axes along its slots, turned 45° at the start so that a slot
    points at the pin's entry point).  The pin enters a slot radially 45° before the line of
    centres and leaves it 45° after: each turn of the crank turns the wheel −90°, and the wheel
    dwells for the other 270° (the pin enters and leaves the slot radially, so the wheel stops with
    the crank's pin out of it; no locking disc: a friction brake (below) stops the wheel when the pin
    leaves, with the speed the slot's play let it keep).  Contact k = 1e8 N/m^1.5, e = 1.5, impact
    damping 200 N·s/m from 10 µm.  Three turns, 2 ms outputs; the indexed angles are checked in
    tests/solver/test_contact_samples.py."""
    C, r, play = GENEVA_CENTRES, GENEVA_PIN, GENEVA_CLEARANCE
    a = C * np.sin(np.pi / 4)
    model = solver.Model(name="geneva", gravity=(0.0, 0.0, -9.81))
    disc_mass = STEEL * np.pi * 0.08 ** 2 * 0.005
    c, s = np.cos(np.pi / 8), np.sin(np.pi / 8)
    model.add_body("wheel", mass=disc_mass, inertia=(disc_mass * 0.08 ** 2 / 4,) * 2 + (disc_mass * 0.08 ** 2 / 2,),
                   orientation=(c, 0.0, 0.0, s),
                   geometry={"shape": "cylinder", "radius": 0.08, "length": 0.005, "axis": "z",
                             "offset": [0.0, 0.0, -0.008], "color": [0.6, 0.6, 0.65]})
    model.add_joint("wheel_axis", "revolute", "ground", "wheel", axis=(0.0, 0.0, 1.0))
    model.add_body("crank", mass=0.5, inertia=(1e-3, 1e-3, 1e-3), position=(C, 0.0, 0.0),
                   geometry={"shape": "sphere", "radius": r, "offset": [0.0, a, 0.0], "color": [0.8, 0.4, 0.3]})
    model.add_joint("crank_axis", "revolute", "ground", "crank", origin=(C, 0.0, 0.0), axis=(0.0, 0.0, 1.0))
    model.add_driver("drive", "crank_axis", f"{GENEVA_SPEED!r}*t")
    wall, inner, outer = 0.006, 0.02, 0.075
    middle, length, side = (inner + outer) / 2, outer - inner, r + play + wall / 2
    for k, (u, v) in enumerate(((1, 0), (0, 1), (-1, 0), (0, -1))):        # the slots, along the body axes
        for w, sign in enumerate((1, -1)):
            centre = (u * middle - v * sign * side, v * middle + u * sign * side, 0.0)
            size = (length if u else wall, length if v else wall, 0.01)
            model.add_contact(f"slot{k}_wall{w}", "wheel", "crank", stiffness=1e8, damping=200.0,
                              penetration_depth=1e-5,
                              geometry_i={"shape": "box", "size": list(size), "offset": list(centre)})
    # the brake: a pad (a sphere 50 mm off the wheel's axis) pressed on a ground plane with 50 N (the
    # revolute joint carries it), its friction (μ = 0.5: 1.25 N·m) holds the wheel while it dwells (no
    # torque on it then: it does not creep; v_s = 10 mm/s keeps the stiction's slope moderate)
    pad, force = 0.005, 50.0
    press = (force / 1e8) ** (1 / 1.5)
    model.add_body("pad", mass=0.01, inertia=(1e-7,) * 3, position=(0.05 * np.cos(np.pi / 4), 0.05 * np.sin(np.pi / 4),
                                                                     -0.015), geometry={"shape": "sphere", "radius": pad})
    model.add_joint("pad_mount", "fixed", "wheel", "pad", origin=(0.0, 0.0, 0.0))
    model.add_contact("brake", "ground", "pad", stiffness=1e8, damping=200.0, penetration_depth=1e-5,
                      friction=(0.5, 0.5), stiction_velocity=1e-2, friction_velocity=0.1, geometry_i={"shape": "plane", "point": [0.0, 0.0, -0.015 - pad + press],
                                                       "normal": [0.0, 0.0, 1.0]})
    model.settings.set("t_end", 3 * 2 * np.pi / GENEVA_SPEED)
    model.settings.set("output_step", 2e-3)
    return model


KUKA_SWING = 1.0     # rad/s: joint 2's initial rate in kuka_on_limits()


def kuka_on_limits():
    """The KUKA LBR iiwa of pybullet_data's kuka_iiwa/model.urdf (the pybullet package, ``test``
    extra), imported without its meshes: its ``<limit>``s are stops (Adams IMPACT, the import's
    defaults k = 1e5 N·m/rad, c_max = 100 N·m·s/rad from 1e-3 rad), its ``<dynamics damping>`` rotational
    dampers.  Upright at the URDF's zero pose (an unstable equilibrium) with joint 2 turning at
    1 rad/s (the bodies beyond it turning rigidly about its axis), it falls under gravity until its
    joints rest on their limits (tests/solver/test_contact_samples.py); 3 s, 10 ms outputs."""
    import pybullet_data
    from solver.io.urdf import read_urdf
    model = read_urdf(os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf"), visuals=False).model
    model.name = "kuka-on-limits"
    joint = model.joints["lbr_iiwa_joint_2"]
    axis, origin = np.asarray(joint.axis, dtype=float), np.asarray(joint.origin, dtype=float)
    for k in range(2, 8):
        body = model.bodies[f"lbr_iiwa_link_{k}"]
        omega = KUKA_SWING * axis
        model.set_field(body.name, "angular_velocity", tuple(omega))
        model.set_field(body.name, "velocity", tuple(np.cross(omega, np.asarray(body.position) - origin)))
    model.settings.set("t_end", 3.0)
    model.settings.set("output_step", 0.01)
    return model


BUILDERS = {"pendulum": pendulum, "double_pendulum": double_pendulum, "slider_crank": slider_crank,
            "fourbar": fourbar, "rrc_arm_case1": rrc_arm_case1, "rrc_arm_case2": rrc_arm_case2,
            "fourbar_spring": fourbar_spring, "fourbar_singular_rigid": fourbar_singular_rigid,
            "fourbar_singular_flexible": fourbar_singular_flexible,
            "vehicle_cae_tc": lambda: vehicle("straight"), "vehicle_cae_tc_bump": lambda: vehicle("bump"),
            "vehicle_cae_tc_j_turn": lambda: vehicle("j_turn"),
            "vehicle_cae_tc_lane_change": lambda: vehicle("lane_change"),
            "vehicle_23body": lambda: vehicle("bump", link_bodies=True), "box_on_ramp": box_on_ramp,
            "cam_follower": cam_follower, "slider_end_stop": slider_end_stop, "geneva": geneva,
            "kuka_on_limits": kuka_on_limits}


# ---- generated large models (issue 11, Scale; tools/scale_models.py) ---------------------------
# In sample_models/scale/, out of the per-sample test sweeps; tests/solver/test_scale.py checks them.
SCALE_OUT = os.path.join(OUT, "scale")


@as_published
def chain_200():
    """The 200-link pendulum chain of :func:`tools.scale_models.chain` (0.1 m, 0.1 kg links, tilted
    0.5 rad); relative formulation, integrator rk (DOP853: LSODA turns to its stiff method here and
    spends 400 evaluations per finite-difference Jacobian), 2 s with 10 ms outputs: faster than real
    time with the generated kernels of the default run (bench/samples.py --scale)."""
    from tools.scale_models import chain
    m = chain(200)
    m.settings.set("formulation", "relative")
    m.settings.set("integrator", "rk")
    m.settings.set("t_end", 2.0)
    m.settings.set("output_step", 0.01)
    return m


@as_published
def loops_50():
    """The row of 50 parallelogram four-bars of :func:`tools.scale_models.planar_loops` (101 bodies,
    151 revolute joints, 1 DOF); relative formulation, 0.1 s with 2 ms outputs (docs/performance.md
    has its wall time: bench/samples.py --scale)."""
    from tools.scale_models import planar_loops
    m = planar_loops(50)
    m.settings.set("formulation", "relative")
    m.settings.set("t_end", 0.1)
    m.settings.set("output_step", 0.002)
    return m


SCALE_BUILDERS = {"chain_200": chain_200, "loops_50": loops_50}


def main():
    for folder, builders in ((OUT, BUILDERS), (SCALE_OUT, SCALE_BUILDERS)):
        for name, build in builders.items():
            path = os.path.join(folder, f"{name}.mbs.json")
            build().save(path)
            if os.path.exists(path + ".bak"):
                os.unlink(path + ".bak")
            print("wrote", os.path.relpath(path))


if __name__ == "__main__":
    main()
