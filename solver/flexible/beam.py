"""3D Euler–Bernoulli beam finite elements meshed along a straight line (Kim & Yoo (1997) §4: the
flexible coupler is 10 beam elements / 11 nodes).

Body frame: origin at the beam's midpoint (its undeformed centre of mass), x along start → end,
y and z the section's principal axes.  Each node has 6 DOF ``[u, v, w, θx, θy, θz]`` (translations
and small rotations, body axes); an element has 12.  On an element of length L with ξ = x/L ∈ [0, 1]
the centreline displacement is interpolated by (Przemieniecki, *Theory of Matrix Structural
Analysis*, §5.6 and §11.4)

    u = (1−ξ) u₁ + ξ u₂                                 (axial, linear)
    v = H₁ v₁ + L H₂ θz₁ + H₃ v₂ + L H₄ θz₂              (bending in x–y, v' = θz)
    w = H₁ w₁ − L H₂ θy₁ + H₃ w₂ − L H₄ θy₂              (bending in x–z, w' = −θy)
    θx = (1−ξ) θx₁ + ξ θx₂                               (torsion)
    H₁ = 1 − 3ξ² + 2ξ³,  H₂ = ξ − 2ξ² + ξ³,  H₃ = 3ξ² − 2ξ³,  H₄ = −ξ² + ξ³

and the consistent matrices are the exact integrals (4-point Gauss, exact to degree 7)

    M_e = ∫ ρA NᵀN dx + ∫ ρ I_p N_θᵀN_θ dx,      I_p = I_y + I_z (torsional inertia)
    K_e = ∫ (EA N_u'ᵀN_u' + EI_z N_v''ᵀN_v'' + EI_y N_w''ᵀN_w'' + GJ N_θ'ᵀN_θ') dx,  G = E/(2(1+ν)).

Bending rotary inertia is neglected (Euler–Bernoulli).  Besides M and K the mesh keeps the
direction blocks ``M_ab = ∫ ρA N_aᵀ N_b dx`` (a, b ∈ {x, y, z}) that the floating-frame inertia
integrals need (:mod:`solver.flexible.modal`).
"""
from __future__ import annotations

import numpy as np
from ..math.lazy import sla

from ..errors import ModelError
from ..model.sections import Material, Section

NODE_DOF = 6
_GAUSS_X, _GAUSS_W = np.polynomial.legendre.leggauss(4)
_XI = 0.5 * (_GAUSS_X + 1.0)                    # Gauss points on [0, 1]
_WXI = 0.5 * _GAUSS_W


class BeamMesh:
    """A straight beam of length ``length`` meshed into ``n_elements`` equal elements, in its body
    frame (see module docstring).  Attributes: nodes (n+1, 3), M and K (6(n+1) square), blocks
    M_ab (3, 3, ndof, ndof)."""

    def __init__(self, length, section: Section, material: Material, n_elements=10):
        if n_elements < 1:
            raise ModelError(f"elements: must be ≥ 1, got {n_elements}")
        self.length = float(length)
        self.section, self.material = section, material
        self.n_elements = n = int(n_elements)
        self.n_nodes = n + 1
        self.ndof = NODE_DOF * (n + 1)
        x = np.linspace(-0.5 * length, 0.5 * length, n + 1)
        self.nodes = np.column_stack([x, np.zeros(n + 1), np.zeros(n + 1)])
        Le = self.length / n
        Me, Ke, Mab_e = _element_matrices(Le, section, material)
        self.M = np.zeros((self.ndof, self.ndof))
        self.K = np.zeros((self.ndof, self.ndof))
        self.M_ab = np.zeros((3, 3, self.ndof, self.ndof))
        for e in range(n):
            s = slice(NODE_DOF * e, NODE_DOF * e + 12)
            self.M[s, s] += Me
            self.K[s, s] += Ke
            self.M_ab[:, :, s, s] += Mab_e
        self.element_length = Le

    # ---- public API -----------------------------------------------------------------------------
    def positions(self):
        """Nodal vector e₀ of the undeformed geometry (translations = node positions, rotations 0):
        the element interpolation reproduces it exactly, ū₀(x) = N(x) e₀."""
        e0 = np.zeros(self.ndof)
        e0.reshape(-1, NODE_DOF)[:, :3] = self.nodes
        return e0

    def node_dofs(self, node):
        if not 0 <= node < self.n_nodes:
            raise ModelError(f"node: must be in 0..{self.n_nodes - 1}, got {node}")
        return np.arange(NODE_DOF * node, NODE_DOF * node + NODE_DOF)

    def nearest_node(self, point_body):
        """Index of the node nearest a body-frame point."""
        return int(np.argmin(np.linalg.norm(self.nodes - np.asarray(point_body, float), axis=1)))

    def frequencies(self, fixed_nodes=()):
        """Natural frequencies (rad/s, ascending) of the mesh with all DOF of ``fixed_nodes``
        clamped (empty: free–free, which starts with 6 rigid-body zeros): eigh(K, M)."""
        free = np.setdiff1d(np.arange(self.ndof), np.concatenate(
            [self.node_dofs(k) for k in fixed_nodes]) if len(fixed_nodes) else [])
        lam = sla.eigh(self.K[np.ix_(free, free)], self.M[np.ix_(free, free)], eigvals_only=True)
        return np.sqrt(np.clip(lam, 0.0, None))

    def strain_operators(self):
        """Per node, the rows mapping nodal displacements to (u', w'', v'', θx') at that node
        (axial strain, curvatures about y and z, twist rate), shape (n_nodes, 4, ndof): values at
        the element ends, averaged over the (one or two) elements meeting at the node."""
        n, Le = self.n_elements, self.element_length
        D = np.zeros((self.n_nodes, 4, self.ndof))
        count = np.zeros(self.n_nodes)
        for e in range(n):
            s = slice(NODE_DOF * e, NODE_DOF * e + 12)
            for end, node in ((0.0, e), (1.0, e + 1)):
                D[node, :, s] += _strain_rows(end, Le)
                count[node] += 1
        return D / count[:, None, None]


# ---- helpers ------------------------------------------------------------------------------------
def _hermite(xi):
    """(H, H', H'') of the four Hermite cubics at ξ, derivatives with respect to ξ."""
    H = np.array([1 - 3 * xi**2 + 2 * xi**3, xi - 2 * xi**2 + xi**3, 3 * xi**2 - 2 * xi**3, -xi**2 + xi**3])
    dH = np.array([-6 * xi + 6 * xi**2, 1 - 4 * xi + 3 * xi**2, 6 * xi - 6 * xi**2, -2 * xi + 3 * xi**2])
    ddH = np.array([-6 + 12 * xi, -4 + 6 * xi, 6 - 12 * xi, -2 + 6 * xi])
    return H, dH, ddH


def _shape(xi, Le):
    """N (3×12): centreline displacement [u, v, w]; N_θ (12,): torsion angle."""
    H, _, _ = _hermite(xi)
    N = np.zeros((3, 12))
    N[0, [0, 6]] = 1 - xi, xi
    N[1, [1, 5, 7, 11]] = H[0], Le * H[1], H[2], Le * H[3]
    N[2, [2, 4, 8, 10]] = H[0], -Le * H[1], H[2], -Le * H[3]
    Nt = np.zeros(12)
    Nt[[3, 9]] = 1 - xi, xi
    return N, Nt


def _strain_rows(xi, Le):
    """Rows (4×12) of u', w'', v'', θx' at ξ (derivatives with respect to x)."""
    _, dH, ddH = _hermite(xi)
    D = np.zeros((4, 12))
    D[0, [0, 6]] = -1.0 / Le, 1.0 / Le
    D[1, [2, 4, 8, 10]] = ddH[0] / Le**2, -ddH[1] / Le, ddH[2] / Le**2, -ddH[3] / Le
    D[2, [1, 5, 7, 11]] = ddH[0] / Le**2, ddH[1] / Le, ddH[2] / Le**2, ddH[3] / Le
    D[3, [3, 9]] = -1.0 / Le, 1.0 / Le
    return D


def _element_matrices(Le, sec: Section, mat: Material):
    """(M_e, K_e, M_ab_e) of one element by Gauss quadrature (see module docstring)."""
    rho, E, G = mat.density, mat.youngs, mat.shear
    Me = np.zeros((12, 12))
    Ke = np.zeros((12, 12))
    Mab = np.zeros((3, 3, 12, 12))
    rigidity = np.array([E * sec.area, E * sec.Iy, E * sec.Iz, G * sec.J])
    for xi, w in zip(_XI, _WXI):
        N, Nt = _shape(xi, Le)
        D = _strain_rows(xi, Le)
        Mab += w * Le * rho * sec.area * np.einsum("ai,bj->abij", N, N)
        Me += w * Le * rho * (sec.Iy + sec.Iz) * np.outer(Nt, Nt)
        Ke += w * Le * (D.T * rigidity) @ D
    Me += Mab[0, 0] + Mab[1, 1] + Mab[2, 2]
    return Me, Ke, Mab
