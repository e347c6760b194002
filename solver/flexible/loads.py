"""Force elements attached to flexible bodies (Kim & Yoo (1997) eqs. 3–4: the external-force term F of
the Lagrange equations in q = [r, p, a]).

A force element's side on a flexible body attaches to the FE node n nearest the given point (as
joints do, :mod:`solver.flexible.joints`).  The attachment point P is carried by the node: its
offset s from the undeformed node (body frame, fixed) moves with the node's elastic displacement,
and its frame turns with the node's rotation θ = Ψ_n a (as the joints' markers do):

    ū_P = ū₀,n + s + Φ_n a,      r_P = r + A ū_P,      A_P = A exp(θ̃),
    ṙ_P = ṙ + A (ω̃' ū_P + Φ_n ȧ),      ω_P = A (ω' + Ψ_n ȧ)            (ω' = 2 L(p) ṗ).

A_P is a proper rotation, so a bushing's axes on the node stay orthonormal (an isotropic
translational bushing is then exactly conservative); ω_P is its angular velocity to first order in θ.

Each attachment is a *frame* of :class:`solver.forces.BodyFrames` (index after the rigid bodies),
so every force element (spring–damper, bushing, applied force/torque, rotational spring on a joint
at the node) works on it unchanged and returns a wrench: force F at P and torque T (global).  By
virtual work, δW = Fᵀδr_P + Tᵀδθ_P with δr_P = δr − A ũ_P δπ' + A Φ_n δa and
δθ_P = A (δπ' + Ψ_n δa), the generalized force on the body's coordinates is

    Q_r = F,    Q_p = 2 Lᵀ (ũ_P Aᵀ F + Aᵀ T),    Q_a = Φ_nᵀ Aᵀ F + Ψ_nᵀ Aᵀ T

(the Euler-parameter rows 2Lᵀ Q_π' as for the rigid bodies of :mod:`solver.formulations.cartesian`;
the modal rows project the nodal load on the retained mode shapes, the reduced FE load vector).
The force part is exact (P is linear in a for fixed r, p); the torque part is first order in θ,
like the node frames of the joints.
"""
from __future__ import annotations

import numpy as np

from ..forces import BodyFrames
from ..math.rotations import L_matrix, cross, rotation_matrix
from .compile import reference_frame


def attachment_motion(r, A, u, phi, psi, rd, w, ad):
    """(r_P, ṙ_P, ω_P) of an attachment point at ū_P = ``u`` (module docstring): r + A ū_P,
    ṙ + A (ω' × ū_P + Φ_n ȧ), A (ω' + Ψ_n ȧ), with ω' = ``w`` = 2 L(p) ṗ.  Numbers or symbolic
    (:mod:`solver.codegen.flexible`)."""
    return r + A @ u, rd + A @ (cross(w, u) + phi @ ad), A @ (w + psi @ ad)


def attachment_forces(A, L, u, phi, psi, f, t):
    """(Q_r, Q_p, Q_a) of a force f at P and a torque t (global) on the body's coordinates
    (module docstring): f, 2 Lᵀ (ũ_P Aᵀ f + Aᵀ t), Φ_nᵀ Aᵀ f + Ψ_nᵀ Aᵀ t.  Numbers or symbolic."""
    fl, tl = A.T @ f, A.T @ t
    return f, 2 * L.T @ (cross(u, fl) + tl), phi.T @ fl + psi.T @ tl


class FlexibleAttachments:
    """Attachment frames of force elements on flexible bodies.

    ``init`` (frame index → (r₀, A₀)) starts with the rigid bodies' entries and grows by one frame
    per attachment; :meth:`index_entries` gives the name → function-of-point entries that
    :func:`solver.forces.compile_forces` calls to create them.  The nodes are known before the
    modal bases are built (:meth:`nodes`: Craig–Bampton interface nodes); :meth:`bind` then hands
    over the reduced bodies."""

    def __init__(self, nb, elements, meshes, rigid_init):
        """nb: number of rigid bodies (attachment frames are numbered from nb); elements: the
        flexible bodies' model elements; meshes: name → BeamMesh; rigid_init: index → (r₀, A₀)."""
        self.nb = nb
        self.init = {k: rigid_init[k] for k in range(nb)}
        self._elements = {e.name: e for e in elements}
        self._meshes = meshes
        self.items = []          # (body name, node, s) per attachment frame
        self._floating = {}

    # ---- public API -----------------------------------------------------------------------------
    def index_entries(self):
        """{flexible body name: attach(point) → frame index}; point None = the body's reference
        point (midpoint of the beam)."""
        return {name: (lambda point, name=name: self._attach(name, point)) for name in self._elements}

    def nodes(self):
        """(body name, node) of every attachment."""
        return [(name, node) for name, node, _ in self.items]

    def bind(self, floating):
        """Hand over the :class:`solver.flexible.floating.FloatingBody` objects (after reduction)."""
        self._floating = {fb.name: fb for fb in floating}

    def frames(self, q, qd):
        """(r_P, A_P, ṙ_P, ω_P) of every attachment (module docstring), as arrays (n, …)."""
        from scipy.spatial.transform import Rotation     # imported on use: only flexible models need it
        n = len(self.items)
        r, A, v, w = np.empty((n, 3)), np.empty((n, 3, 3)), np.empty((n, 3)), np.empty((n, 3))
        for k, (fb, node, u0) in enumerate(self._bound()):
            rb, p, a = fb.split(q)
            rd, pd, ad = fb.split(qd)
            Ab = rotation_matrix(p)
            phi, psi = fb.body.node_phi[node], fb.body.node_psi[node]
            r[k], v[k], w[k] = attachment_motion(rb, Ab, u0 + phi @ a, phi, psi, rd, 2.0 * L_matrix(p) @ pd, ad)
            A[k] = Ab @ Rotation.from_rotvec(psi @ a).as_matrix()
        return r, A, v, w

    def extend(self, frames: BodyFrames, q, qd):
        """``frames`` of the rigid bodies followed by the attachment frames."""
        if not self.items:
            return frames
        r, A, v, w = self.frames(q, qd)
        return BodyFrames(np.concatenate([frames.r, r]), np.concatenate([frames.A, A]),
                          np.concatenate([frames.v, v]), np.concatenate([frames.w, w]), frames.angles)

    def generalized(self, q, F, T, Q):
        """Add the generalized forces of the attachment wrenches F, T (n, 3) to Q (module docstring)."""
        for (fb, node, u0), f, t in zip(self._bound(), F, T):
            _, p, a = fb.split(q)
            phi, psi = fb.body.node_phi[node], fb.body.node_psi[node]
            Qr, Qp, Qa = attachment_forces(rotation_matrix(p), L_matrix(p), u0 + phi @ a, phi, psi, f, t)
            Q[fb.o:fb.o + 3] += Qr
            Q[fb.o + 3:fb.o + 7] += Qp
            Q[fb.ao:fb.ao + fb.k] += Qa

    # ---- helpers --------------------------------------------------------------------------------
    def _attach(self, name, point):
        r0, A0 = reference_frame(self._elements[name])
        body_point = np.zeros(3) if point is None else A0.T @ (np.asarray(point, float) - r0)
        mesh = self._meshes[name]
        node = mesh.nearest_node(body_point)
        self.items.append((name, node, body_point - mesh.nodes[node]))
        k = self.nb + len(self.items) - 1
        self.init[k] = (r0 + A0 @ body_point, A0)
        return k

    def _bound(self):
        """(FloatingBody, node, ū₀,n + s) per attachment."""
        return [(self._floating[name], node, self._meshes[name].nodes[node] + s) for name, node, s in self.items]
