"""Modal reduction of a beam mesh and the inertia shape integrals of the floating frame of
reference formulation (Shabana, *Dynamics of Multibody Systems*, 3rd ed., §5.5–5.6; Kim & Yoo (1997)
§2: coordinates [r, p, a₁..a_k]).

A material point of the body is at ū = ū₀ + Φ(x) a in the body frame (ū₀ = N e₀, Φ = N Φ_e with Φ_e
the nodal mode shapes).  With the mesh's direction blocks M_ab = ∫ρA N_aᵀN_b the integrals are
quadratic forms of nodal vectors, precomputed once (the "invariants"):

    m = ∫ρ dV,  S(a) = ∫ρ ū dV = S₀ + S_Φ a                       (Shabana eq. 5.144: S̄_t, S̄)
    E0_ab = e₀ᵀM_ab e₀,  E1_ab = e₀ᵀM_ab Φ_e,  E2_ab = Φ_eᵀM_ab Φ_e   (the S_kl integrals, eq. 5.150)
    W_ab(a) = ∫ρ ū_a ū_b = E0_ab + (E1_ab + E1_ba)·a + aᵀE2_ab a
    J(a) = tr(W) I − W + J_sec      (inertia about the frame origin; J_sec = ρL diag(I_p, I_y, I_z)
                                     is the sections' own rotary inertia, kept rigid)
    Y_ab,l(a) = ∫ρ ū_a φ_l,b = E1_ab,l + (aᵀE2_ab)_l,   Γ(a) = ∫ρ ũ Φ dV:  Γ_c,l = ε_cab Y_ab,l
    Z_c,ml = ∫ρ (φ_m × φ_l)_c = ε_cab E2_ab,ml

Modes: the k lowest elastic modes of the free–free mesh (eigh(K, M), the 6 rigid-body modes
dropped; mass-normalized, so the modal mass is I and the modal stiffness diag ω²), or the
Craig–Bampton basis (static constraint modes of the interface nodes + the k lowest fixed-interface
modes; Craig & Bampton 1968) orthonormalized by the reduced eigenproblem with its 6 rigid modes
dropped.  Either basis is M-orthogonal to the rigid-body motions.  Modal damping: C_aa = diag(2 ζ ω).

Stress recovery: per node and mode, σ_axial = E u', σ_bend,y = −E c_z w'' (on the +z fibre),
σ_bend,z = −E c_y v'' (on the +y fibre), τ_torsion = G c_t θx' (Euler–Bernoulli: σ = −E y v'').
"""
from __future__ import annotations

import numpy as np
from ..math.lazy import sla

from ..errors import ModelError
from .beam import NODE_DOF, BeamMesh

_EPS = np.zeros((3, 3, 3))
_EPS[0, 1, 2] = _EPS[1, 2, 0] = _EPS[2, 0, 1] = 1.0
_EPS[0, 2, 1] = _EPS[2, 1, 0] = _EPS[1, 0, 2] = -1.0
STRESS_KEYS = ("axial", "bending_y", "bending_z", "torsion")


class ShapeIntegrals:
    """The inertia shape integrals of a reduced body and the terms built from them (module
    docstring): attributes mass, S0, S_phi, E0, E1, E2, J_sec, Z, M_aa, K_aa, C_aa.  Arrays of
    numbers (:class:`ModalBody`) or of polynomials (:mod:`solver.codegen.flexible`, where they are
    kernel parameters): the methods below serve both, so the generated kernels and the numeric path
    evaluate the same formulas."""

    FIELDS = ("mass", "S0", "S_phi", "E0", "E1", "E2", "J_sec", "Z", "M_aa", "K_aa", "C_aa")

    @classmethod
    def of(cls, **arrays):
        """Shape integrals from arrays named as :attr:`FIELDS` (all of them)."""
        self = cls.__new__(cls)
        for name in cls.FIELDS:
            setattr(self, name, arrays[name])
        return self

    # ---- public API --------------------------------------------------------------------------------
    def first_moment(self, a):
        """S(a) = ∫ρ ū dV (3,)."""
        return self.S0 + self.S_phi @ a

    def inertia(self, a):
        """J(a) about the frame origin, body axes (3×3)."""
        W = self.E0 + self.E1 @ a
        W = W + W.T - self.E0 + (self.E2 @ a) @ a
        return np.trace(W) * np.eye(3) - W + self.J_sec

    def y_integrals(self, a):
        """Y_ab,l(a) = ∫ρ ū_a φ_l,b (3, 3, k)."""
        return self.E1 + a @ self.E2

    def coupling(self, Y):
        """Γ = ∫ρ ũ Φ dV (3×k) from Y."""
        return np.einsum("cab,abl->cl", _EPS, Y)

    def strain_energy(self, a):
        """U = ½ aᵀ K_aa a."""
        return 0.5 * a @ self.K_aa @ a


class ModalBody(ShapeIntegrals):
    """Reduced flexible body (see module docstring).

    Attributes: mesh, k (modes), modes (ndof, k) nodal shapes, omega (k,) rad/s, mass, S0, S_phi,
    E0, E1, E2, J_sec, K_aa, C_aa, M_aa, node_phi (n_nodes, 3, k) translation shapes,
    node_psi (n_nodes, 3, k) rotation shapes, stress_shapes (n_nodes, 4, k) Pa per unit a."""

    def __init__(self, mesh: BeamMesh, modes=2, damping_ratio=0.0, interface_nodes=None):
        if modes < 0:
            raise ModelError(f"modes: must be ≥ 0, got {modes}")
        self.mesh = mesh
        if interface_nodes:
            Phi, lam = _craig_bampton(mesh, modes, interface_nodes)
        else:
            Phi, lam = _free_modes(mesh, modes)
        self.k = Phi.shape[1]
        self.modes = Phi
        self.omega = np.sqrt(np.clip(lam, 0.0, None))
        self.M_aa = Phi.T @ mesh.M @ Phi
        self.K_aa = Phi.T @ mesh.K @ Phi
        self.C_aa = np.diag(2.0 * damping_ratio * self.omega)
        e0 = mesh.positions()
        Mab = mesh.M_ab
        ones = [np.zeros(mesh.ndof) for _ in range(3)]
        for a in range(3):
            ones[a].reshape(-1, NODE_DOF)[:, a] = 1.0
        self.mass = float(ones[0] @ Mab[0, 0] @ ones[0])
        self.S0 = np.array([ones[a] @ Mab[a, a] @ e0 for a in range(3)])
        self.S_phi = np.array([ones[a] @ Mab[a, a] @ Phi for a in range(3)])            # (3, k)
        self.E0 = np.einsum("i,abij,j->ab", e0, Mab, e0)
        self.E1 = np.einsum("i,abij,jl->abl", e0, Mab, Phi)
        self.E2 = np.einsum("im,abij,jl->abml", Phi, Mab, Phi)
        sec, rho, L = mesh.section, mesh.material.density, mesh.length
        self.J_sec = rho * L * np.diag([sec.Iy + sec.Iz, sec.Iy, sec.Iz])
        self.Z = np.einsum("cab,abml->cml", _EPS, self.E2)
        nodal = Phi.reshape(mesh.n_nodes, NODE_DOF, self.k)
        self.node_phi = nodal[:, :3, :]
        self.node_psi = nodal[:, 3:, :]
        mat = mesh.material
        scale = np.array([mat.youngs, -mat.youngs * sec.cz, -mat.youngs * sec.cy, mat.shear * sec.ct])
        self.stress_shapes = scale[None, :, None] * (mesh.strain_operators() @ Phi)

    @classmethod
    def from_invariants(cls, nodes, modes, omega, mass, S0, S_phi, E1, E2, inertia, stress_shapes,
                        damping_ratio=0.0):
        """A reduced body from externally computed data (:mod:`solver.flexible.modes_file`):
        ``nodes`` an object with ``nodes`` (n, 3), ``n_nodes`` and ``nearest_node``; ``modes``
        (n, 6, k) mass-normalized nodal shapes, so M_aa = I and K_aa = diag ω²; ``inertia`` J(0)
        about the frame origin, carried as E0 = ½ tr(J₀) I − J₀ with J_sec = 0 (then
        tr(E0) I − E0 = J₀, the only way E0 enters)."""
        self = cls.__new__(cls)
        self.mesh = nodes
        self.k = modes.shape[2]
        self.modes = modes.reshape(-1, self.k)
        self.omega = np.asarray(omega, float)
        self.M_aa = np.eye(self.k)
        self.K_aa = np.diag(self.omega**2)
        self.C_aa = np.diag(2.0 * damping_ratio * self.omega)
        self.mass, self.S0, self.S_phi, self.E1, self.E2 = float(mass), S0, S_phi, E1, E2
        self.E0 = 0.5 * np.trace(inertia) * np.eye(3) - inertia
        self.J_sec = np.zeros((3, 3))
        self.Z = np.einsum("cab,abml->cml", _EPS, E2)
        self.node_phi, self.node_psi = modes[:, :3, :], modes[:, 3:, :]
        self.stress_shapes = stress_shapes
        return self

    def node_displacement(self, node, a):
        """Elastic displacement Φ_node a of a node, body frame (3,)."""
        return self.node_phi[node] @ a

    def node_stress(self, node, a):
        """(axial, bending_y, bending_z, torsion) stress at a node, Pa."""
        return self.stress_shapes[node] @ a


# ---- helpers ------------------------------------------------------------------------------------
def _rigid_modes(mesh):
    """The 6 rigid-body motions (ndof, 6): translations and small rotations about the origin."""
    R = np.zeros((mesh.ndof, 6))
    for n, x in enumerate(mesh.nodes):
        o = NODE_DOF * n
        R[o:o + 3, :3] = np.eye(3)
        R[o:o + 3, 3:] = -np.array([[0, -x[2], x[1]], [x[2], 0, -x[0]], [-x[1], x[0], 0]])
        R[o + 3:o + 6, 3:] = np.eye(3)
    return R


def _drop_rigid(vecs, lam, M, K, R, k):
    """The k lowest eigenpairs that are not rigid-body modes (their M-projection on span R small),
    cleaned of the round-off rigid content the near-zero eigenvalues mix in (projected M-orthogonal
    to span R, then re-solved in their span)."""
    G = R.T @ M @ R
    keep = []
    for i in range(vecs.shape[1]):
        v = vecs[:, i]
        c = np.linalg.solve(G, R.T @ M @ v)
        if (c @ G @ c) < 0.5 * (v @ M @ v):
            keep.append(i)
        if len(keep) == k:
            break
    if len(keep) < k:
        raise ModelError(f"modes: the mesh has only {len(keep)} elastic modes; asked for {k}")
    # remove the round-off rigid content (near-zero eigenvalues mix) and re-solve in the span
    Phi = vecs[:, keep] - R @ np.linalg.solve(G, R.T @ M @ vecs[:, keep])
    if not keep:
        return Phi, lam[keep]
    lam2, y = sla.eigh(Phi.T @ K @ Phi, Phi.T @ M @ Phi)
    return Phi @ y, lam2


def _free_modes(mesh, k):
    n = min(mesh.ndof, k + 6)
    lam, vecs = sla.eigh(mesh.K, mesh.M, subset_by_index=[0, n - 1])
    return _drop_rigid(vecs, lam, mesh.M, mesh.K, _rigid_modes(mesh), k)


def _craig_bampton(mesh, k, interface_nodes):
    """Craig–Bampton basis (constraint modes of the interface DOF + k fixed-interface modes),
    orthonormalized: eigh of the reduced (K, M), the 6 rigid modes dropped, all others kept."""
    b = np.concatenate([mesh.node_dofs(n) for n in sorted(set(interface_nodes))])
    i = np.setdiff1d(np.arange(mesh.ndof), b)
    K, M = mesh.K, mesh.M
    T = np.zeros((mesh.ndof, len(b) + k))
    T[b, :len(b)] = np.eye(len(b))
    T[np.ix_(i, np.arange(len(b)))] = -np.linalg.solve(K[np.ix_(i, i)], K[np.ix_(i, b)])
    if k:
        _, phi_i = sla.eigh(K[np.ix_(i, i)], M[np.ix_(i, i)], subset_by_index=[0, k - 1])
        T[np.ix_(i, np.arange(len(b), len(b) + k))] = phi_i
    lam, y = sla.eigh(T.T @ K @ T, T.T @ M @ T)
    vecs = T @ y
    return _drop_rigid(vecs, lam, M, K, _rigid_modes(mesh), T.shape[1] - 6)
