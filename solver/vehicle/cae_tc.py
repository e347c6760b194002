"""The CAE-TC compact car of Choi & Yoo (2000) (Choi & Yoo 2000, Fig. 1 and Table 1) as a model
builder: 14 bodies with massless links, or the same car with its links and rear dampers as light
bodies; four manoeuvres.  Every number is listed and justified in docs/vehicle.md.

Axes: x forward, y left, z up, origin on the road under the front axle centre.  The car is built
at its static equilibrium: tire penetrations F_z/k_t and spring preloads follow in closed form
from the axle loads because at the design position the front struts are vertical, the lower arms
and tie rods horizontal (they carry no vertical load) and the rear springs act at the wheel
centres' x on trailing arms that pivot about the lateral axis (moments about that axis).
Simplifications (docs/vehicle.md): vertical kingpin through the top mount and the lower ball joint
(no caster or inclination), no Ackermann, rear twist beam as a rotational bushing between the
axle halves.  The lateral rod locates the right axle half, whose trailing-arm pivot is therefore a
cylindrical joint (free to slide along y); the left pivot is revolute.  With revolute pivots on
both sides a rod would lock the right arm's rotation (its end would have to stay on the sphere
around the chassis end, which touches the arm's circle at one point).
"""
from __future__ import annotations

import numpy as np

from ..model.model import Model

G = 9.81
R_WHEEL = 0.30            # m, tire free radius
K_TIRE, C_TIRE = 2.0e5, 300.0
WHEELBASE, HALF_TRACK = 2.5, 0.725
X_FRONT, X_REAR = 0.0, -WHEELBASE
# front suspension (left side; the right side mirrors y)
Y_STRUT = 0.62            # strut (and kingpin) axis y
Z_BALL, Z_CYL, Z_SEAT, Z_TOP = 0.15, 0.45, 0.40, 0.75
Y_ARM_PIVOT = 0.30        # lower arm pivot on the chassis (axis x)
X_TIE, Z_TIE, Y_RACK_END, Y_TIE_KNUCKLE = -0.15, 0.25, 0.30, 0.60
K_FRONT, C_FRONT = 25_000.0, 2_500.0
# rear twist axle
X_PIVOT, Z_PIVOT, Y_PIVOT = -2.05, 0.32, 0.60
Y_REAR_SPRING, Z_REAR_TOP = 0.50, 0.70
K_REAR, C_REAR = 20_000.0, 2_000.0
K_TWIST, C_TWIST = 5_000.0, 100.0          # N·m/rad, N·m·s/rad about y
X_ROD, Y_ROD = X_REAR, 0.45                 # lateral rod: chassis end at +Y_ROD, axle_rr end at −Y_ROD
# masses (kg) and principal inertias (kg·m², body axes = global at the design position)
CAR_MASS = 1200.0
PARTS = {
    "wheel": (15.0, (0.4, 0.7, 0.4)),
    "knuckle": (8.0, (0.15, 0.15, 0.05)),
    "strut": (2.0, (0.02, 0.02, 0.002)),
    "rack": (3.0, (0.03, 0.002, 0.03)),
    "arm": (8.0, (0.05, 0.15, 0.15)),
    "axle": (8.0, (0.25, 0.02, 0.25)),
    "lower_arm": (2.5, (0.02, 0.002, 0.02)),      # link bodies of the 23-body variant
    "tie_rod": (0.8, (0.006, 0.0005, 0.006)),
    "damper": (1.0, (0.01, 0.01, 0.001)),
    "lateral_rod": (1.2, (0.08, 0.0005, 0.08)),
}
LINK_PARTS = ("lower_arm", "tie_rod", "damper", "lateral_rod")
CHASSIS_INERTIA = (450.0, 1700.0, 1900.0)
CHASSIS_Z = 0.55
CHASSIS_X = -1.0          # sprung CM 1.0 m behind the front axle
MANOEUVRES = {            # speed (km/h), road, rack displacement (m) of t
    "straight": (50.0, "flat", "0"),
    "bump": (20.0, "half_sine", "0"),
    "j_turn": (50.0, "flat", "-0.006*(1-cos(pi*min(max(t-1,0),1)))/2"),
    "lane_change": (50.0, "flat", "0.004*sin(2*pi*min(max(t-1,0),3)/3)"),
}
BUMP_START, BUMP_HEIGHT, BUMP_LENGTH = 15.0, 0.1, 2.5
SIDES = (("l", 1.0), ("r", -1.0))


def cae_tc(manoeuvre="straight", link_bodies=False, t_end=10.0, link_mass=1.0):
    """The car driving ``manoeuvre`` (a key of MANOEUVRES); ``link_bodies`` builds the variant
    whose lower arms, tie rods, lateral rod and rear dampers are light bodies (23 bodies), their
    masses and inertias scaled by ``link_mass`` (the chassis takes the rest of the 1200 kg, so
    link_mass → 0 tends to the 14-body car's mass distribution)."""
    kmh, profile, rack = MANOEUVRES[manoeuvre]
    v = kmh / 3.6
    name = f"cae-tc-{'23' if link_bodies else '14'}body-{manoeuvre.replace('_', '-')}"
    m = Model(name=name, gravity=(0.0, 0.0, -G))
    parts = {part: (mass * link_mass, tuple(i * link_mass for i in inertia)) if part in LINK_PARTS
             else (mass, inertia) for part, (mass, inertia) in PARTS.items()}
    z_front, z_rear, preload_front, preload_rear, sprung = _static_design(parts, link_bodies)
    _bodies(m, parts, v, z_front, z_rear, sprung, link_bodies)
    _front(m, z_front, preload_front, link_bodies)
    _rear(m, z_rear, preload_rear, link_bodies)
    _tires_and_control(m, v, profile, link_bodies)
    m.add_joint("rack_slide", "prismatic", "chassis", "rack", origin=(X_TIE, 0.0, Z_TIE), axis=(0, 1, 0))
    m.add_driver("steer", "rack_slide", expression=rack)
    m.settings.set("t_end", t_end)
    m.settings.set("output_step", 0.01)
    m.settings.set("formulation", "relative")
    m.settings.set("partitioning", "qr")
    m.settings.set("integrator", "bdf")          # the tire slip dynamics are stiff (≈ 10³ /s)
    m.settings.set("rtol", 1e-4)
    m.settings.set("atol", 1e-6)
    return m


def front_axle_load(m: Model):
    """(front, rear) axle loads (N) of a model's bodies from their CM x positions (wheel contact
    points at X_FRONT and X_REAR): the statics of a beam on two supports."""
    masses = np.array([b.mass for b in m.bodies.values()])
    x = np.array([b.position[0] for b in m.bodies.values()])
    weight = masses.sum() * G
    x_cm = float(masses @ x / masses.sum())
    front = weight * (x_cm - X_REAR) / (X_FRONT - X_REAR)
    return front, weight - front


# ---- helpers ------------------------------------------------------------------------------------

def _body_x(parts, link_bodies):
    """(mass, CM x) of every body but the chassis (kg, m) to find the axle loads before the
    heights are known."""
    mass = {part: value[0] for part, value in parts.items()}
    xs = [(mass["wheel"], X_FRONT), (mass["wheel"], X_REAR), (mass["knuckle"], X_FRONT),
          (mass["strut"], X_FRONT), (mass["arm"], 0.5 * (X_PIVOT + X_REAR)), (mass["axle"], X_REAR)]
    out = [(m, x) for m, x in xs for _ in SIDES] + [(mass["rack"], X_TIE)]
    if link_bodies:
        out += [(mass["lower_arm"], X_FRONT), (mass["tie_rod"], X_TIE)] * 2
        out += [(mass["damper"], X_REAR)] * 4 + [(mass["lateral_rod"], X_ROD)]
    return out


def _static_design(parts, link_bodies):
    """Wheel-centre heights, spring preloads (compression, N; the rear as {side: preload}) that
    make the design position a static equilibrium (see module docstring), and the sprung (chassis)
    mass.  Half the lateral rod's weight rests on the right axle half (moment about the pivot
    axis); the rod's centre is on the centre line, so the tire loads stay symmetric."""
    body_x = _body_x(parts, link_bodies)
    sprung = CAR_MASS - sum(mass for mass, _ in body_x)
    body_x.append((sprung, CHASSIS_X))
    total = sum(mass for mass, _ in body_x)
    x_cm = sum(mass * x for mass, x in body_x) / total
    mass = {part: value[0] for part, value in parts.items()}
    front = total * G * (x_cm - X_REAR) / WHEELBASE / 2           # per wheel
    rear = total * G / 2 - front
    carried_f = mass["wheel"] + mass["knuckle"]             # hangs below the front spring
    carried_r = mass["wheel"] + mass["axle"] + mass["arm"] * 0.5 * (X_PIVOT + X_REAR - 2 * X_PIVOT) \
        / (X_REAR - X_PIVOT)
    if link_bodies:                 # half of each link's weight rests on the knuckle, the lower
        carried_f += 0.5 * (mass["lower_arm"] + mass["tie_rod"])   # damper on the axle
        carried_r += mass["damper"]
    rod_r = 0.5 * mass["lateral_rod"] * (X_ROD - X_PIVOT) / (X_REAR - X_PIVOT) if link_bodies else 0.0
    preload_r = {"l": rear - carried_r * G, "r": rear - (carried_r + rod_r) * G}
    return R_WHEEL - front / K_TIRE, R_WHEEL - rear / K_TIRE, front - carried_f * G, preload_r, sprung


def _bodies(m, parts, v, z_front, z_rear, chassis_mass, link_bodies):
    def add(name, part, position, spin=0.0, **geometry):
        mass, inertia = parts[part] if part != "chassis" else (chassis_mass, CHASSIS_INERTIA)
        m.add_body(name, mass=mass, inertia=inertia, position=position, velocity=(v, 0.0, 0.0),
                   angular_velocity=(0.0, spin, 0.0), geometry=geometry or None)

    add("chassis", "chassis", (CHASSIS_X, 0.0, CHASSIS_Z), shape="box", size=(3.4, 0.9, 0.12))
    add("rack", "rack", (X_TIE, 0.0, Z_TIE), shape="box", size=(0.04, 0.6, 0.04))
    for side, s in SIDES:
        add(f"strut_f{side}", "strut", (X_FRONT, s * Y_STRUT, 0.5 * (Z_CYL + Z_TOP)), shape="cylinder",
            radius=0.015, length=Z_TOP - Z_CYL, axis="z")
        add(f"knuckle_f{side}", "knuckle", (X_FRONT, s * Y_STRUT, 0.5 * (Z_BALL + Z_CYL)), shape="cylinder",
            radius=0.03, length=Z_CYL - Z_BALL, axis="z")
        add(f"arm_r{side}", "arm", (0.5 * (X_PIVOT + X_REAR), s * Y_PIVOT, 0.5 * (Z_PIVOT + z_rear)),
            shape="box", size=(X_PIVOT - X_REAR, 0.05, 0.05))
        add(f"axle_r{side}", "axle", (X_REAR, s * 0.5 * HALF_TRACK, z_rear), shape="box",
            size=(0.08, HALF_TRACK, 0.08))
        for axle, x, z in (("f", X_FRONT, z_front), ("r", X_REAR, z_rear)):
            add(f"wheel_{axle}{side}", "wheel", (x, s * HALF_TRACK, z), spin=v / R_WHEEL, shape="cylinder",
                radius=R_WHEEL, length=0.2, axis="y")
        if link_bodies:
            add(f"lower_arm_link_{side}", "lower_arm", (X_FRONT, s * 0.5 * (Y_ARM_PIVOT + Y_STRUT), Z_BALL),
                shape="box", size=(0.03, Y_STRUT - Y_ARM_PIVOT, 0.03))
            add(f"tie_rod_link_{side}", "tie_rod", (X_TIE, s * 0.5 * (Y_RACK_END + Y_TIE_KNUCKLE), Z_TIE),
                shape="box", size=(0.02, Y_TIE_KNUCKLE - Y_RACK_END, 0.02))
            bottom, top = z_rear + 0.05, Z_REAR_TOP
            for end, z0, z1 in (("bottom", bottom, 0.5 * (bottom + top)), ("top", 0.5 * (bottom + top), top)):
                add(f"damper_{end}_{side}", "damper", (X_REAR, s * Y_REAR_SPRING, 0.5 * (z0 + z1)),
                    shape="cylinder", radius=0.02, length=z1 - z0, axis="z")
    if link_bodies:
        add("lateral_rod_link", "lateral_rod", (X_ROD, 0.0, z_rear), shape="cylinder", radius=0.012,
            length=2 * Y_ROD, axis="y")


def _front(m, z_front, preload, link_bodies):
    for side, s in SIDES:
        strut, knuckle = f"strut_f{side}", f"knuckle_f{side}"
        m.add_joint(f"top_mount_{side}", "universal", "chassis", strut, origin=(X_FRONT, s * Y_STRUT, Z_TOP),
                    axis=(1, 0, 0), axis2=(0, 1, 0))
        m.add_joint(f"strut_{side}", "cylindrical", strut, knuckle, origin=(X_FRONT, s * Y_STRUT, Z_CYL),
                    axis=(0, 0, 1))
        m.add_joint(f"hub_f{side}", "revolute", knuckle, f"wheel_f{side}", origin=(X_FRONT, s * HALF_TRACK, z_front),
                    axis=(0, 1, 0))
        pivot, ball = (X_FRONT, s * Y_ARM_PIVOT, Z_BALL), (X_FRONT, s * Y_STRUT, Z_BALL)
        rack_end, arm_end = (X_TIE, s * Y_RACK_END, Z_TIE), (X_TIE, s * Y_TIE_KNUCKLE, Z_TIE)
        if link_bodies:
            arm, rod = f"lower_arm_link_{side}", f"tie_rod_link_{side}"
            m.add_joint(f"lower_arm_{side}", "revolute", "chassis", arm, origin=pivot, axis=(1, 0, 0))
            m.add_joint(f"ball_{side}", "spherical", arm, knuckle, origin=ball)
            m.add_joint(f"tie_rod_{side}", "universal", "rack", rod, origin=rack_end, axis=(1, 0, 0), axis2=(0, 0, 1))
            m.add_joint(f"tie_ball_{side}", "spherical", rod, knuckle, origin=arm_end)
        else:
            m.add_joint(f"lower_arm_{side}", "revolute_spherical", "chassis", knuckle, origin=pivot,
                        axis=(1, 0, 0), origin2=ball)
            m.add_joint(f"tie_rod_{side}", "distance", "rack", knuckle, origin=rack_end, origin2=arm_end)
        m.add_spring_damper(f"spring_f{side}", strut, knuckle, point_i=(X_FRONT, s * Y_STRUT, Z_TOP),
                            point_j=(X_FRONT, s * Y_STRUT, Z_SEAT), stiffness=K_FRONT, damping=C_FRONT,
                            preload=-preload)


def _rear(m, z_rear, preload, link_bodies):
    for side, s in SIDES:
        arm, axle = f"arm_r{side}", f"axle_r{side}"
        m.add_joint(f"pivot_{side}", "revolute" if side == "l" else "cylindrical", "chassis", arm,
                    origin=(X_PIVOT, s * Y_PIVOT, Z_PIVOT), axis=(0, 1, 0))
        m.add_joint(f"weld_{side}", "fixed", arm, axle, origin=(X_REAR, s * Y_PIVOT, z_rear))
        m.add_joint(f"hub_r{side}", "revolute", axle, f"wheel_r{side}", origin=(X_REAR, s * HALF_TRACK, z_rear),
                    axis=(0, 1, 0))
        bottom, top = (X_REAR, s * Y_REAR_SPRING, z_rear + 0.05), (X_REAR, s * Y_REAR_SPRING, Z_REAR_TOP)
        if link_bodies:
            lo, hi = f"damper_bottom_{side}", f"damper_top_{side}"
            cross = dict(axis=(1, 0, 0), axis2=(0, 1, 0))
            middle = (X_REAR, s * Y_REAR_SPRING, 0.5 * (bottom[2] + top[2]))
            m.add_joint(f"damper_lower_mount_{side}", "universal", axle, lo, origin=bottom, **cross)
            m.add_joint(f"damper_upper_mount_{side}", "universal", "chassis", hi, origin=top, **cross)
            m.add_joint(f"damper_{side}", "cylindrical", hi, lo, origin=middle, axis=(0, 0, 1))
            ends = (hi, lo)
        else:
            ends = ("chassis", axle)
        m.add_spring_damper(f"spring_r{side}", *ends, point_i=top, point_j=bottom, stiffness=K_REAR,
                            damping=C_REAR, preload=-preload[side])
    mount, end = (X_ROD, Y_ROD, z_rear), (X_ROD, -Y_ROD, z_rear)
    if link_bodies:
        m.add_joint("lateral_rod_mount", "spherical", "chassis", "lateral_rod_link", origin=mount)
        m.add_joint("lateral_rod_ball", "universal", "lateral_rod_link", "axle_rr", origin=end,
                    axis=(0, 0, 1), axis2=(1, 0, 0))
    else:
        m.add_joint("lateral_rod", "distance", "chassis", "axle_rr", origin=mount, origin2=end)
    m.add_bushing("twist_beam", "axle_rl", "axle_rr", origin=(X_REAR, 0.0, z_rear),
                  stiffness=(0, 0, 0, 0, K_TWIST, 0), damping=(0, 0, 0, 0, C_TWIST, 0))


def _tires_and_control(m, v, profile, link_bodies):
    m.add_road("road", profile=profile, start=BUMP_START, obstacle_height=BUMP_HEIGHT, obstacle_length=BUMP_LENGTH)
    for wheel in ("fl", "fr", "rl", "rr"):
        m.add_tire(f"tire_{wheel}", f"wheel_{wheel}", "road", radius=R_WHEEL, stiffness=K_TIRE, damping=C_TIRE)
    m.add_speed_control("cruise", "chassis", "wheel_fl", "knuckle_fl", "wheel_fr", "knuckle_fr",
                        target_speed=v, radius=R_WHEEL)


__all__ = ["cae_tc", "front_axle_load", "MANOEUVRES"]
