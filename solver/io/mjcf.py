"""MJCF import: a MuJoCo model, read and compiled by MuJoCo itself (``mujoco.MjSpec``, files
bounded and confined by :mod:`solver.io.mjcf_files`) → a :class:`~solver.model.model.Model`
(the mapping is documented in docs/import.md).

The model is built at MuJoCo's reference configuration ``qpos0`` (``mj_kinematics``), so each
hinge or slide coordinate of the model is ``qpos − qpos0`` of the MuJoCo joint (same axis, same
sign).  Mass properties are the compiled ones (``body_mass``, ``body_inertia`` in the inertial
frame ``body_iquat`` at ``body_ipos``), so MuJoCo's inertia-from-geoms and its defaults hold.
Bodies without joints are fused into their parents by MuJoCo (``fusestatic``); those welded to the
world (and mocap bodies) are ground.  With ``A`` the body's axes and ``c`` its CM at qpos0 (``xmat``,
``xipos``), a body is ``add_body(mass, position=c, orientation=A, inertia=R diag(I) Rᵀ)``, ``R =
Aᵀ ximat`` the inertial axes in body axes.

Joints of one body act in order (MuJoCo's kinematics: each joint moves the body frame, later
joints' axes move with the earlier ones), so a body with k > 1 joints is a chain of k − 1
intermediate bodies of negligible mass (``TINY_MASS`` × the largest body mass, at the joint's
anchor) and the body, one joint each: hinge → revolute, slide → prismatic, ball → spherical at
``xanchor`` along ``xaxis``.  A free joint → no joint (the solver gives a body without a path to
ground its free 6-DOF joint).  ``limited`` hinges and slides → ``lower_limit``/``upper_limit`` (range −
qpos0) enforced as stops with MuJoCo's soft-limit reference, and ``frictionloss`` → a joint friction
(:mod:`solver.io.mjcf_soft`); joint damping and stiffness → a spring–damper on the joint
(:func:`~solver.io.imported.add_joint_spring_damper`; free position springref − qpos0).
Joint ``armature`` of a hinge or slide → the joint's armature (rotor inertia, M_θθ += a as MuJoCo's qM).
``<equality connect>`` → spherical joint, ``weld`` → fixed joint (both closing loops; refused when
not satisfied at qpos0), ``<equality joint>`` → a coupler (:meth:`_Builder._joint_coupling`).  A
force actuator on a hinge or slide (``<motor>``, a fixed-gain ``<general>``) → a joint actuator with
a declared input for its ctrl (:meth:`_Builder._actuator`).  Everything else that MuJoCo models and
this model does not (servos, tendons, contacts, ball/free armature, friction loss, fluid forces …) is listed
in the notes.  Geoms → display meshes (:mod:`solver.io.mjcf_geoms`).
"""
from __future__ import annotations

import os

import numpy as np

from ..errors import ModelError
from ..model.model import GROUND, Model
from .imported import (Imported, Names, add_actuator_input, add_joint_spring_damper, out_folder, save_imported,
                       valid_name)
from .mjcf_files import load_spec
from .mjcf_geoms import DRAWN_GROUPS, geom_color, geom_mesh
from .mjcf_soft import friction_fields, stop_fields
from .urdf_mesh import VisualReader

TINY_MASS = 1e-17           # an intermediate body's mass, relative to the model's largest body mass
TINY_RADIUS = 1e-2          # m: its radius of gyration
EQUALITY_TOLERANCE = 1e-9   # m or rad: an equality's residual at qpos0 taken as satisfied
UNNAMED = "MuJoCo Model"    # MuJoCo's name of a model whose <mujoco> has no model attribute
KINDS = {"mjJNT_HINGE": "revolute", "mjJNT_SLIDE": "prismatic", "mjJNT_BALL": "spherical"}


def read_mjcf(path, visuals=True, enforce_limits=True) -> Imported:
    """Read an MJCF file into a model (module docstring).  Files are read only inside the
    model's folder.  ``visuals=False``: the model alone (``meshes`` stays empty).
    ``enforce_limits``: limited joints get stops (False: the limits are data only)."""
    path = os.fspath(path)
    spec, mj, warnings = load_spec(path)
    stem = os.path.splitext(os.path.basename(path))[0]
    name = spec.modelname if spec.modelname not in ("", UNNAMED) else stem
    builder = _Builder(mj, name, enforce_limits)
    builder.notes += [f"MuJoCo: {w}" for w in warnings]
    return builder.build(visuals)


def import_mjcf(path, out_path, enforce_limits=True) -> Imported:
    """Read an MJCF file, write each body's display mesh as ``<stem>_meshes/<body>.stl`` beside
    ``out_path`` and save the model as the project ``out_path`` (:func:`~solver.io.imported.save_imported`)."""
    out_folder(out_path)
    return save_imported(read_mjcf(path, enforce_limits=enforce_limits), out_path)


def is_mjcf(path) -> bool:
    """Whether ``path`` holds MJCF (its root element is ``<mujoco>``) rather than URDF: ``.urdf``
    files are URDF, others are decided by the first element (lxml, no entities or network)."""
    from lxml import etree

    from .files import open_regular
    from .mjcf_files import MAX_MJCF_BYTES
    if os.fspath(path).lower().endswith(".urdf"):
        return False
    with open_regular(path, MAX_MJCF_BYTES, "model file") as fh:
        try:
            for _, element in etree.iterparse(fh, events=("start",), resolve_entities=False, no_network=True,
                                              load_dtd=False):
                return etree.QName(element).localname == "mujoco"
        except etree.XMLSyntaxError:
            return False
    return False


class _Builder:
    """One import of a compiled MjModel at qpos0."""

    def __init__(self, mj, name, enforce_limits):
        import mujoco
        self.mujoco, self.mj = mujoco, mj
        self.data = mujoco.MjData(mj)
        self.data.qpos[:] = mj.qpos0
        mujoco.mj_kinematics(mj, self.data)
        self.enforce_limits = enforce_limits
        flags = mj.opt.disableflags
        self.notes_pending = []
        D = mujoco.mjtDisableBit
        self.disabled = {f: bool(flags & getattr(D, f"mjDSBL_{f.upper()}")) for f in
                         ("gravity", "spring", "damper", "limit", "equality", "constraint", "actuation",
                          "frictionloss", "refsafe")}
        for f in ("limit", "equality", "frictionloss"):
            self.disabled[f] |= self.disabled["constraint"]
        # MuJoCo's soft limits and friction losses (solver.io.mjcf_soft): each coordinate's effective mass
        # 1/dof_invweight0 (mj_setConst at qpos0) and the time step that bounds τ (refsafe)
        self.mass = 1.0 / np.maximum(mj.dof_invweight0, 1e-300)
        self.step = (float(mj.opt.timestep), not self.disabled["refsafe"])
        self.soft_limits = self.friction_losses = 0
        for f in ("spring", "damper", "limit", "equality", "actuation", "frictionloss"):
            if self.disabled[f]:
                self.notes_pending.append(f"option: {f} disabled (disableflags); not imported")
        gravity = (0.0, 0.0, 0.0) if self.disabled["gravity"] else tuple(float(g) for g in mj.opt.gravity)
        self.model = Model(name=valid_name(name), gravity=gravity)
        self.model.settings.set("formulation", "relative")
        self.result = Imported(self.model)
        self.notes = self.result.notes
        self.notes += self.notes_pending
        self.names = Names(self.notes)
        self.owner = {0: GROUND}            # MuJoCo body id → its body in the model (or ground)
        self.tiny = TINY_MASS * (float(np.max(mj.body_mass)) or 1.0)      # 1 kg when nothing has mass
        if self.disabled["gravity"]:
            self.notes.append("option: gravity is disabled (disableflags); the model has no gravity")

    def build(self, visuals) -> Imported:
        for b in range(1, self.mj.nbody):
            self._body(b)
        for e in range(self.mj.neq):
            self._equality(e)
        for a in range(0 if self.disabled["actuation"] else self.mj.nu):
            self._actuator(a)
        self._unmapped()
        if visuals:
            self._geoms()
        return self.result

    # ---- names --------------------------------------------------------------------------------
    def _name(self, kind, i):
        return self.mujoco.mj_id2name(self.mj, kind, i) or ""

    def _label(self, kind, i, word):
        """The MuJoCo name of object ``i`` or ``word<i>`` when it has none."""
        return self._name(getattr(self.mujoco.mjtObj, f"mjOBJ_{kind}"), i) or f"{word}{i}"

    # ---- bodies and joints --------------------------------------------------------------------
    def _body(self, b):
        mj, d = self.mj, self.data
        label = self._label("BODY", b, "body")
        parent = self.owner[mj.body_parentid[b]]
        if mj.body_weldid[b] == 0:
            self.owner[b] = GROUND
            if mj.body_mocapid[b] >= 0:
                self.notes.append(f"body '{label}': a mocap body, fixed to ground here (MuJoCo moves it by mocap data)")
            return
        name = self.names.unique("body", label)
        A = d.xmat[b].reshape(3, 3)
        mass = float(mj.body_mass[b])
        R = A.T @ d.ximat[b].reshape(3, 3)
        J = R @ np.diag(mj.body_inertia[b]) @ R.T
        if mass <= 0.0:
            mass, J = self.tiny, self.tiny * TINY_RADIUS ** 2 * np.eye(3)
            self.notes.append(f"body '{label}': has no mass in MuJoCo; given {mass:.3g} kg (a body needs a mass)")
        joints = list(range(mj.body_jntadr[b], mj.body_jntadr[b] + mj.body_jntnum[b]))
        prev = parent
        for k, j in enumerate(joints[:-1]):
            link = self.names.unique("body", f"{label}_{self._label('JOINT', j, 'joint')}_link")
            self._add_body(link, self.tiny, d.xanchor[j], A, self.tiny * TINY_RADIUS ** 2 * np.eye(3))
            self._joint(j, prev, link)
            prev = link
        self._add_body(name, mass, d.xipos[b], A, J)
        self.owner[b] = name
        if len(joints) > 1:
            self.notes.append(f"body '{label}': its {len(joints)} joints act in order through "
                              f"{len(joints) - 1} intermediate bodies of {self.tiny:.3g} kg")
        if not joints:
            self.model.add_joint(self.names.unique("joint", f"{label}_weld"), "fixed", parent, name,
                                 origin=d.xpos[b])
        else:
            self._joint(joints[-1], prev, name)

    def _add_body(self, name, mass, position, A, J):
        self.model.add_body(name, mass=mass, position=position, orientation=A,
                            inertia=(J[0, 0], J[1, 1], J[2, 2], J[0, 1], J[1, 2], J[2, 0]))

    def _joint(self, j, parent, child):
        mj, d = self.mj, self.data
        label = self._label("JOINT", j, "joint")
        where = f"joint '{label}'"
        kind = self.mujoco.mjtJoint(mj.jnt_type[j]).name
        dof, qadr = mj.jnt_dofadr[j], mj.jnt_qposadr[j]
        armature = float(mj.dof_armature[dof])
        if armature and kind in ("mjJNT_BALL", "mjJNT_FREE"):
            self.notes.append(f"{where}: armature {armature:g} (rotor inertia) of a {kind[6:].lower()} joint is not "
                              "modelled")
        loss = 0.0 if self.disabled["frictionloss"] else float(mj.dof_frictionloss[dof])
        if loss and kind in ("mjJNT_BALL", "mjJNT_FREE"):
            self.notes.append(f"{where}: frictionloss {loss:g} of a {kind[6:].lower()} joint is not modelled")
        if kind == "mjJNT_FREE":
            self.notes.append(f"{where}: free, so no joint: body '{child}' moves freely (6 DOF)")
            self.result.free_bodies[label] = child
            self._unmapped_passive(j, where, "free")
            return
        name = self.names.unique("joint", label)
        self.result.joint_names[label] = name
        kind = KINDS[kind]
        limits = {}
        if mj.jnt_limited[j] and kind != "spherical":
            limits = {"lower_limit": float(mj.jnt_range[j, 0] - mj.qpos0[qadr]),
                      "upper_limit": float(mj.jnt_range[j, 1] - mj.qpos0[qadr])}
            if not self.enforce_limits or self.disabled["limit"]:
                limits["stops"] = False
            else:
                limits.update(stop_fields(self.mass[dof], mj.jnt_solref[j], mj.jnt_solimp[j], *self.step))
                self.soft_limits += 1
                if not limits["lower_limit"] <= 0.0 <= limits["upper_limit"]:
                    self.notes.append(f"{where}: qpos0 is outside its range {mj.jnt_range[j, 0]:g} … "
                                      f"{mj.jnt_range[j, 1]:g}; its stop pushes it into the range from the start "
                                      "(as MuJoCo's limit does)")
        elif mj.jnt_limited[j]:
            self.notes.append(f"{where}: the ball joint's cone limit {mj.jnt_range[j, 1]:g} rad is not modelled")
        if armature and kind != "spherical":
            limits["armature"] = armature
        self.model.add_joint(name, kind, parent, child, origin=d.xanchor[j], axis=d.xaxis[j], **limits)
        if kind == "spherical":
            self._unmapped_passive(j, where, "ball")
            return
        if loss:
            self.model.add_joint_friction(self.names.unique("force", f"{name}_friction"), name, **friction_fields(
                self.mass[dof], loss, mj.dof_solref[dof], mj.dof_solimp[dof], *self.step))
            self.friction_losses += 1
        damping = 0.0 if self.disabled["damper"] else float(mj.dof_damping[dof])
        stiffness = 0.0 if self.disabled["spring"] else float(mj.jnt_stiffness[j])
        if not (damping or stiffness):
            return
        travel = max(abs(limits.get("lower_limit", 0.0)), abs(limits.get("upper_limit", 0.0)))
        note = add_joint_spring_damper(self.model, self.names.unique("force", f"{name}_spring"), name, kind,
                                       parent, child, d.xanchor[j], d.xaxis[j], damping, stiffness,
                                       free=float(mj.qpos_spring[qadr] - mj.qpos0[qadr]), travel=travel)
        if note:
            self.notes.append(f"{where}: damping and stiffness as {note}")

    def _unmapped_passive(self, j, where, kind):
        dof = self.mj.jnt_dofadr[j]
        if np.any(self.mj.dof_damping[dof:dof + 3]) or self.mj.jnt_stiffness[j]:
            self.notes.append(f"{where}: damping and stiffness of a {kind} joint are not modelled")

    # ---- equality constraints -----------------------------------------------------------------
    def _equality(self, e):
        mj = self.mj
        label = self._label("EQUALITY", e, "equality")
        where = f"equality '{label}'"
        kind = self.mujoco.mjtEq(mj.eq_type[e]).name[len("mjEQ_"):].lower()
        if not mj.eq_active0[e] or self.disabled["equality"]:
            self.notes.append(f"{where}: {kind}, inactive at the start; not imported")
            return
        if kind == "joint":
            self._joint_coupling(e, where)
            return
        if kind not in ("connect", "weld"):
            self.notes.append(f"{where}: a {kind} equality is not modelled")
            return
        self._check_satisfied(e, where)
        (b1, anchor1), (b2, _) = self._eq_end(e, 1), self._eq_end(e, 2)
        o1, o2 = self.owner[b1], self.owner[b2]
        if o1 == o2:
            self.notes.append(f"{where}: joins two parts of one rigid body; no effect")
            return
        name = self.names.unique("joint", label)
        self.model.add_joint(name, "spherical" if kind == "connect" else "fixed", o1, o2, origin=anchor1)
        self.notes.append(f"{where}: {kind} → {'spherical' if kind == 'connect' else 'fixed'} joint '{name}' "
                          "(a rigid constraint; MuJoCo's is soft, solref/solimp)")

    def _joint_coupling(self, e, where):
        """``<equality joint>``: q1 − q1₀ = Σₖ cₖ (q2 − q2₀)ᵏ, k = 0…4 (``eq_data[0:5]``, MuJoCo's
        mjEQ_JOINT).  Our joint coordinates are q − q₀, so this is the coupler
        θ_joint1 = Σ cₖ θ_joint2ᵏ (ratio c₁ and offset c₀ when linear); without joint2, joint1 is
        held at c₀ by a constant driver."""
        mj = self.mj
        j1, j2 = mj.eq_obj1id[e], mj.eq_obj2id[e]
        label = self._label("EQUALITY", e, "equality")
        coef = [float(c) for c in mj.eq_data[e, :5]]
        leader = self.result.joint_names.get(self._label("JOINT", j2, "joint")) if j2 >= 0 else None
        follower = self.result.joint_names.get(self._label("JOINT", j1, "joint"))
        if follower is None or (j2 >= 0 and leader is None):
            self.notes.append(f"{where}: couples a joint that was not imported as a joint; not enforced")
            return
        if leader is None:
            name = self.names.unique("driver", label)
            self.model.add_driver(name, joint=follower, expression=repr(coef[0]))
            self.notes.append(f"{where}: holds joint '{follower}' at {coef[0]:g} → driver '{name}' (rigid; "
                              "MuJoCo's is soft, solref/solimp)")
            return
        name = self.names.unique("coupler", label)
        linear = not any(coef[2:])
        poly = {"ratio": coef[1], "offset": coef[0]} if linear else {"coefficients": coef}
        self.model.add_coupler(name, leader, follower, **poly)
        self.notes.append(f"{where}: → coupler '{name}' (joint '{follower}' = "
                          f"{'ratio·' if linear else 'polynomial of '}joint '{leader}'; rigid, MuJoCo's is soft)")

    def _eq_end(self, e, side):
        """(MuJoCo body id, global anchor at qpos0) of side 1 or 2 of a connect/weld."""
        mj, d = self.mj, self.data
        obj = mj.eq_obj1id[e] if side == 1 else mj.eq_obj2id[e]
        if mj.eq_objtype[e] == self.mujoco.mjtObj.mjOBJ_SITE:
            return int(mj.site_bodyid[obj]), d.site_xpos[obj].copy()
        local = mj.eq_data[e, 0:3] if side == 1 else mj.eq_data[e, 3:6]
        return int(obj), d.xpos[obj] + d.xmat[obj].reshape(3, 3) @ local

    def _check_satisfied(self, e, where):
        """The equality's residual at qpos0 from MuJoCo's own constraint rows (the model is built
        there, so an unsatisfied one cannot be a joint of it)."""
        mujoco, mj = self.mujoco, self.mj
        data = mujoco.MjData(mj)
        data.qpos[:] = mj.qpos0
        mujoco.mj_forward(mj, data)
        rows = (data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY) & (data.efc_id == e)
        residual = float(np.max(np.abs(data.efc_pos[rows]), initial=0.0))
        if residual > EQUALITY_TOLERANCE:
            raise ModelError(f"{where}: not satisfied at qpos0 (residual {residual:.3g}); the model is built at "
                             "qpos0, where a joint holds by construction (refused)")

    # ---- actuators ----------------------------------------------------------------------------
    def _actuator(self, a):
        """A force actuator on a hinge or slide joint (``<motor>``, or ``<general>`` with a fixed gain,
        no bias and no activation dynamics): the joint's generalized force is gear · gainprm[0] · ctrl,
        a joint actuator with that gain and a declared input for ctrl
        (:func:`~solver.io.imported.add_actuator_input`).  Other actuators are noted."""
        mj, m = self.mj, self.mujoco
        label = self._label("ACTUATOR", a, "actuator")
        where = f"actuator '{label}'"
        trn = m.mjtTrn(mj.actuator_trntype[a]).name
        joint = int(mj.actuator_trnid[a, 0])
        target = self.result.joint_names.get(self._label("JOINT", joint, "joint")) if trn in (
            "mjTRN_JOINT", "mjTRN_JOINTINPARENT") else None
        why = None
        if target is None or self.model.joints[target].type not in ("revolute", "prismatic"):
            why = f"its transmission ({trn[len('mjTRN_'):].lower()}) is not a hinge or slide joint of the model"
        elif m.mjtDyn(mj.actuator_dyntype[a]).name != "mjDYN_NONE":
            why = "it has activation dynamics"
        elif (m.mjtGain(mj.actuator_gaintype[a]).name != "mjGAIN_FIXED"
              or m.mjtBias(mj.actuator_biastype[a]).name != "mjBIAS_NONE"):
            why = "its force depends on the state (a position or velocity servo: gain or bias not fixed)"
        if why is not None:
            self.notes.append(f"{where}: not imported: {why}")
            return
        gain = float(mj.actuator_gear[a, 0] * mj.actuator_gainprm[a, 0])
        name, force = add_actuator_input(self.model, self.names, label, target, gain)
        self.notes.append(f"{where}: → joint actuator '{force}' on joint '{target}' (force {gain:g} × the input "
                          f"'{name}', MuJoCo's ctrl; default 0)")
        limits = [f"{what} {lo:g} … {hi:g}" for what, limited, (lo, hi) in (
            ("ctrlrange", mj.actuator_ctrllimited[a], mj.actuator_ctrlrange[a]),
            ("forcerange", mj.actuator_forcelimited[a], mj.actuator_forcerange[a])) if limited]
        if limits:
            self.notes.append(f"{where}: its {' and '.join(limits)} is not enforced (give inputs within it)")

    # ---- what is not mapped -------------------------------------------------------------------
    def _unmapped(self):
        mj = self.mj
        if self.soft_limits:
            self.notes.append(f"{self.soft_limits} joint limits: stops with MuJoCo's solref as a spring–damper "
                              "(stiffness m/τ², damping 2m/τ, m = 1/dof_invweight0; not the share of the other "
                              "forces MuJoCo's soft constraint also takes, nor its impedance ramp within the width)")
        if self.friction_losses:
            self.notes.append(f"{self.friction_losses} joint friction losses: joint friction of that limit, smooth "
                              "below MuJoCo's regularization speed (solreffriction)")
        if mj.ntendon:
            passive = any(np.any(a) for a in (mj.tendon_stiffness, mj.tendon_damping, mj.tendon_limited))
            self.notes.append(f"{mj.ntendon} tendons not modelled" +
                              (" (some have stiffness, damping or limits: the dynamics differ)" if passive else ""))
        colliding = int(np.sum((mj.geom_contype | mj.geom_conaffinity) != 0))
        if colliding or mj.npair:
            self.notes.append(f"contacts not imported: {colliding} geoms may collide in MuJoCo"
                              + (f", {mj.npair} explicit contact pairs" if mj.npair else ""))
        if np.any(mj.body_gravcomp):
            self.notes.append("gravity compensation (gravcomp) of "
                              f"{int(np.count_nonzero(mj.body_gravcomp))} bodies is not modelled")
        opt = mj.opt
        if opt.density or opt.viscosity or np.any(opt.wind):
            self.notes.append(f"option: fluid forces (density {opt.density:g}, viscosity {opt.viscosity:g}, wind "
                              f"{' '.join(f'{w:g}' for w in opt.wind)}) are not modelled")
        integrator = self.mujoco.mjtIntegrator(opt.integrator).name[len("mjINT_"):]
        self.notes.append(f"option: MuJoCo's {integrator} integrator at timestep {opt.timestep:g} s is not used "
                          "(the model runs with its own error-controlled integrator)")
        ignored = [f"{n} {what}" for n, what in (
            (mj.nsensor, "sensors"), (mj.nsite, "sites"), (mj.ncam, "cameras"), (mj.nlight, "lights"),
            (mj.nkey, "keyframes"), (mj.nflex, "flexes"), (mj.nskin, "skins"), (mj.nplugin, "plugins"),
            (mj.nexclude, "contact excludes"), (mj.nnumeric + mj.ntext + mj.ntuple, "custom data"))
            if n]
        if ignored:
            self.notes.append(f"ignored: {', '.join(ignored)}")

    # ---- display geometry ---------------------------------------------------------------------
    def _geoms(self):
        import trimesh
        mj, d = self.mj, self.data
        skipped = {}
        drawn = [g for g in range(mj.ngeom) if self.owner[mj.geom_bodyid[g]] != GROUND
                 and mj.geom_group[g] < DRAWN_GROUPS and mj.geom_rgba[g, 3] > 0.0]
        budget = VisualReader(len(drawn), f"model '{self.model.name}'")
        parts = {}
        for g in drawn:
            body = self.owner[mj.geom_bodyid[g]]
            where = f"geom '{self._label('GEOM', g, 'geom')}'"
            mesh = geom_mesh(mj, g, budget, where)
            if isinstance(mesh, str):
                skipped[mesh] = skipped.get(mesh, 0) + 1
                continue
            b = mj.geom_bodyid[g]
            X = np.eye(4)
            X[:3, :3] = d.xmat[b].reshape(3, 3).T @ d.geom_xmat[g].reshape(3, 3)
            X[:3, 3] = d.xmat[b].reshape(3, 3).T @ (d.geom_xpos[g] - d.xipos[b])
            mesh.apply_transform(X)
            parts.setdefault(body, []).append(mesh)
            self.result.colors.setdefault(body, geom_color(mj, g))
        self.result.meshes = {body: trimesh.util.concatenate(p) for body, p in parts.items()}
        on_ground = sum(self.owner[mj.geom_bodyid[g]] == GROUND for g in range(mj.ngeom))
        hidden = sum(self.owner[mj.geom_bodyid[g]] != GROUND for g in range(mj.ngeom)) - len(drawn)
        notes = [f"{n} geoms: {why}" for why, n in skipped.items()]
        notes += [f"{on_ground} geoms fixed to the world are not drawn"] if on_ground else []
        notes += [f"{hidden} geoms hidden in MuJoCo's viewer (group {DRAWN_GROUPS} or above, or transparent) are not "
                  "drawn"] if hidden else []
        self.notes += [f"display: {n}" for n in notes]
