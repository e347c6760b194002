"""URDF text → plain records (:class:`Robot`): the elements the import reads, every number checked.

What MuJoCo, urdfdom and pybullet accept is accepted: blank lines before the XML declaration,
NUL bytes after the document (pybullet's humanoid.urdf) and a declaration of another version
(``<?xml version="0.0" ?>``, read as XML 1.0).  What they refuse
is refused with a ModelError naming the element and attribute (``link 'arm'.visual[0].origin.rpy:
expected 3 numbers, got '0 0 0 1'``): a wrong count of numbers, text that is not a number, NaN or
infinity, a negative or oversized visual size, an origin farther than 10⁶ m, a negative mass or
damping, a mechanical reduction that is not a number.  ``<collision>``, ``<gazebo>``,
``<calibration>`` and ``<safety_controller>`` are not read (the import ignores them).  The XML is parsed without external entities, DTDs or network and
is never "recovered" when malformed.
"""
from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelError

MAX_SIZE = 1.0e4            # m: the largest visual box side, radius, length (10 km)
MAX_SCALE = 1.0e4           # the largest |mesh scale| factor
MAX_OFFSET = 1.0e6          # m: the largest |xyz| component of an <origin> (the model's bound on positions)
MAX_ELEMENTS = 10_000       # links, joints, materials of one robot (each)
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "planar", "floating", "spherical")
GEOMETRY_TAGS = ("box", "cylinder", "sphere", "mesh")
_DECLARATION = re.compile(rb"""<\?xml\s+version\s*=\s*(["'])([^"']*)\1""")


@dataclass
class Inertial:
    mass: float
    origin: np.ndarray                  # 4×4 pose of the CM frame in the link frame
    inertia: np.ndarray | None          # 3×3 at the CM in the CM frame (None: no <inertia>)


@dataclass
class Visual:
    origin: np.ndarray                  # 4×4 pose in the link frame
    kind: str | None                    # box, cylinder, sphere, mesh; None: another geometry (not drawn)
    size: tuple = ()                    # box (x, y, z); cylinder (radius, length); sphere (radius,)
    filename: str = ""                  # mesh
    scale: tuple = (1.0, 1.0, 1.0)      # mesh
    material: str | None = None
    rgba: tuple | None = None


@dataclass
class Link:
    name: str
    inertial: Inertial | None
    visuals: list = field(default_factory=list)


@dataclass
class Joint:
    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray                  # 4×4 pose of the child link frame in the parent link frame
    axis: np.ndarray
    limit: dict = field(default_factory=dict)   # lower, upper, effort, velocity (those given)
    damping: float = 0.0
    friction: float = 0.0
    mimic: str | None = None            # the joint it follows: q = multiplier · q_mimic + offset
    mimic_multiplier: float = 1.0
    mimic_offset: float = 0.0


@dataclass
class Transmission:
    name: str
    type: str                           # <type> text or the type attribute (the older form)
    joints: list                        # [(joint name, its hardwareInterface texts)]
    actuators: list                     # [(actuator name, mechanicalReduction)] (reduction default 1)


@dataclass
class Robot:
    name: str                           # "" when the <robot> element has none
    links: list
    joints: list
    materials: dict                     # material name → rgba
    transmissions: list                 # the <transmission> elements (Transmission)


# ---- public API -------------------------------------------------------------------------------
def parse_urdf(raw: bytes, where: str) -> Robot:
    """The robot in the URDF bytes ``raw`` (``where`` names the file in messages)."""
    root = _xml_root(raw, where)
    if root.tag != "robot":
        raise ModelError(f"{where}: not a URDF file (the root element is <{root.tag}>, not <robot>)")
    name = root.get("name") or ""
    for tag in ("link", "joint", "material"):
        n = sum(1 for _ in root.iterchildren(tag))
        if n > MAX_ELEMENTS:
            raise ModelError(f"{where}: {n} <{tag}> elements, more than {MAX_ELEMENTS} (refused; the limit keeps an "
                             "import bounded)")
    materials = {}
    for k, m in enumerate(root.findall("material")):
        here = f"material '{m.get('name') or '#' + str(k + 1)}'"
        rgba = _color(m, here)
        if m.get("name") and rgba is not None:
            materials[m.get("name")] = rgba
    return Robot(name=name, links=[_link(e, k) for k, e in enumerate(root.findall("link"))],
                 joints=[_joint(e, k) for k, e in enumerate(root.findall("joint"))], materials=materials,
                 transmissions=[_transmission(t, k) for k, t in enumerate(root.findall("transmission"))])


def mesh_filenames(raw: bytes, where: str) -> list:
    """Every ``<mesh filename>`` of the URDF bytes (visuals and collisions)."""
    return [e.get("filename") or "" for e in _xml_root(raw, where).iter("mesh")]


# ---- XML --------------------------------------------------------------------------------------
def _xml_root(raw, where):
    """The XML root of ``raw``: leading blank space and trailing NUL bytes dropped, the
    declaration's version read as 1.0
    (libxml2 refuses other versions, MuJoCo's and pybullet's readers do not)."""
    from lxml import etree
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    raw = raw.lstrip(b" \t\r\n").rstrip(b" \t\r\n\x00")
    m = _DECLARATION.match(raw)
    if m and m.group(2) != b"1.0":
        raw = raw[:m.start(2)] + b"1.0" + raw[m.end(2):]
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, remove_comments=True,
                             remove_pis=True, remove_blank_text=True)
    try:
        return etree.parse(io.BytesIO(raw), parser).getroot()
    except etree.XMLSyntaxError as exc:
        raise ModelError(f"{where}: not well-formed XML ({exc})") from None


# ---- elements ---------------------------------------------------------------------------------
def _link(e, k):
    name = _name(e, "link", k)
    here = f"link '{name}'"
    inertial = None
    el = e.find("inertial")
    if el is not None:
        w = f"{here}.inertial"
        mass_el = el.find("mass")
        mass = 0.0 if mass_el is None else _number(mass_el, "value", f"{w}.mass", 0.0, minimum=0.0)
        inertia_el = el.find("inertia")
        inertia = None
        if inertia_el is not None:
            ixx, iyy, izz, ixy, ixz, iyz = (_number(inertia_el, a, f"{w}.inertia", 0.0)
                                            for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz"))
            inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        inertial = Inertial(mass, _origin(el, w), inertia)
    visuals = [_visual(v, f"{here}.visual[{j}]") for j, v in enumerate(e.findall("visual"))]
    return Link(name, inertial, visuals)


def _visual(e, here):
    origin = _origin(e, here)
    material = e.find("material")
    name = rgba = None
    if material is not None:
        name = material.get("name")
        rgba = _color(material, f"{here}.material")
    g = e.find("geometry")
    shape = g[0] if g is not None and len(g) else None
    if shape is None or shape.tag not in GEOMETRY_TAGS:
        return Visual(origin, None, material=name, rgba=rgba)
    w = f"{here}.geometry.{shape.tag}"
    if shape.tag == "mesh":
        filename = shape.get("filename")
        if not filename:
            raise ModelError(f"{w}.filename: missing")
        scale = _numbers(shape, "scale", w, (1.0, 1.0, 1.0), counts=(3, 1), bound=MAX_SCALE)
        return Visual(origin, "mesh", filename=filename, scale=tuple(np.broadcast_to(scale, (3,))),
                      material=name, rgba=rgba)
    attrs = {"box": ("size",), "cylinder": ("radius", "length"), "sphere": ("radius",)}[shape.tag]
    if shape.tag == "box":
        size = _numbers(shape, "size", w, None, minimum=0.0, bound=MAX_SIZE)
    else:
        size = tuple(_number(shape, a, w, None, minimum=0.0, bound=MAX_SIZE) for a in attrs)
    return Visual(origin, shape.tag, size=tuple(size), material=name, rgba=rgba)


def _joint(e, k):
    name = _name(e, "joint", k)
    here = f"joint '{name}'"
    kind = e.get("type")
    if kind not in JOINT_TYPES:
        raise ModelError(f"{here}.type: must be one of {', '.join(JOINT_TYPES)}; got {kind!r}")
    ends = []
    for end in ("parent", "child"):
        el = e.find(end)
        if el is None or not el.get("link"):
            raise ModelError(f"{here}: has no <{end} link=\"…\"/>")
        ends.append(el.get("link"))
    axis_el = e.find("axis")
    axis = np.array(_numbers(axis_el, "xyz", f"{here}.axis", (1.0, 0.0, 0.0))) if axis_el is not None \
        else np.array([1.0, 0.0, 0.0])
    joint = Joint(name, kind, ends[0], ends[1], _origin(e, here), axis)
    limit = e.find("limit")
    if limit is not None:
        for a in ("lower", "upper", "effort", "velocity"):
            if limit.get(a) is not None:
                joint.limit[a] = _number(limit, a, f"{here}.limit", None)
    dynamics = e.find("dynamics")
    if dynamics is not None:
        joint.damping = _number(dynamics, "damping", f"{here}.dynamics", 0.0, minimum=0.0)
        joint.friction = _number(dynamics, "friction", f"{here}.dynamics", 0.0, minimum=0.0)
    mimic = e.find("mimic")
    if mimic is not None:
        joint.mimic = mimic.get("joint") or "?"
        joint.mimic_multiplier = _number(mimic, "multiplier", f"{here}.mimic", 1.0)
        joint.mimic_offset = _number(mimic, "offset", f"{here}.mimic", 0.0)
    return joint


def _transmission(e, k):
    """A <transmission>: its type (ros_control's ``<type>`` or the older ``type`` attribute), joints
    with their hardware interfaces, actuators with their mechanical reductions (a finite number; the
    older form keeps ``<mechanicalReduction>`` beside them)."""
    name = e.get("name") or f"#{k + 1}"
    here = f"transmission '{name}'"
    kind = (e.findtext("type") or e.get("type") or "").strip()
    joints = [(j.get("name") or "", [(h.text or "").strip() for h in j.findall("hardwareInterface")])
              for j in e.findall("joint")]
    outer = e.find("mechanicalReduction")
    actuators = []
    for a in e.findall("actuator"):
        where = f"{here}.actuator '{a.get('name') or ''}'"
        reduction = a.find("mechanicalReduction")
        actuators.append((a.get("name") or "", _reduction(reduction if reduction is not None else outer, where)))
    return Transmission(name, kind, joints, actuators)


def _reduction(e, here):
    """The number of a <mechanicalReduction> element (1 when there is none)."""
    if e is None:
        return 1.0
    text = (e.text or "").strip()
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise ModelError(f"{here}.mechanicalReduction: expected a finite number, got {text!r}")
    return value


def _name(e, tag, k):
    name = e.get("name")
    if not name:
        raise ModelError(f"{tag} #{k + 1}: the <{tag}> element has no 'name' attribute")
    return name


def _origin(parent, here):
    """The 4×4 pose of a parent's ``<origin xyz rpy>`` (identity when absent); rpy is
    R_z(yaw) R_y(pitch) R_x(roll), as in URDF."""
    T = np.eye(4)
    e = parent.find("origin")
    if e is None:
        return T
    w = f"{here}.origin"
    T[:3, 3] = _numbers(e, "xyz", w, (0.0, 0.0, 0.0), bound=MAX_OFFSET)
    r, p, y = _numbers(e, "rpy", w, (0.0, 0.0, 0.0))
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    T[:3, :3] = [[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                 [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                 [-sp, cp * sr, cp * cr]]
    return T


def _color(e, here):
    c = e.find("color")
    if c is None:
        return None
    return _numbers(c, "rgba", f"{here}.color", None, counts=(4,))


# ---- numbers ----------------------------------------------------------------------------------
def _numbers(e, attr, here, default, counts=(3,), minimum=None, bound=None):
    """The whitespace-separated numbers of attribute ``attr`` of element ``e`` (``default`` when
    absent; None: required): ``counts`` says how many, each finite, ≥ ``minimum``, |x| ≤ ``bound``."""
    text = e.get(attr)
    if text is None:
        if default is None:
            raise ModelError(f"{here}.{attr}: missing")
        return tuple(default)
    parts = text.split()
    if len(parts) not in counts:
        raise ModelError(f"{here}.{attr}: expected {' or '.join(map(str, counts))} numbers, got {text!r}")
    return tuple(_check(p, f"{here}.{attr}", minimum, bound) for p in parts)


def _number(e, attr, here, default, minimum=None, bound=None):
    """One number attribute (see :func:`_numbers`)."""
    text = e.get(attr)
    if text is None:
        if default is None:
            raise ModelError(f"{here}.{attr}: missing")
        return float(default)
    return _check(text.strip(), f"{here}.{attr}", minimum, bound)


def _check(text, where, minimum, bound):
    try:
        x = float(text)
    except ValueError:
        raise ModelError(f"{where}: must be a number, got {text!r}") from None
    if not math.isfinite(x):
        raise ModelError(f"{where}: must be finite, got {text!r}")
    if minimum is not None and x < minimum:
        raise ModelError(f"{where}: must be >= {minimum:g}, got {text!r}")
    if bound is not None and abs(x) > bound:
        raise ModelError(f"{where}: must be at most {bound:g} in size, got {text!r}")
    return x
