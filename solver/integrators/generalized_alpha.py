"""Generalized-α integration of the index-3 DAE (Arnold & Brüls 2007, Multibody Syst Dyn 18)

    M(q) q̈ + Φ_qᵀ λ − Q(q, q̇, t) = 0,     Φ(q, t) = 0,

for stiff models (Lee, Lee & Bae (2013) uses an implicit BDF; Kim & You (1997)'s case 2 has a 3e9 N/m spring).
With spectral radius at infinity ρ∞: α_m = (2ρ∞ − 1)/(ρ∞ + 1), α_f = ρ∞/(ρ∞ + 1),
γ = ½ + α_f − α_m, β = ¼ (γ + ½)².  Each step solves for (q_{n+1}, λ_{n+1}) by Newton with the
iteration matrix

    [ M β' + C_t γ' + K_t   Φ_qᵀ ] [Δq]       β' = (1 − α_m)/(β h² (1 − α_f)),  γ' = γ/(β h),
    [ Φ_q                   0    ] [Δλ],      K_t = (M q̈)_q − Q_q + (Φ_qᵀλ)_q,  C_t = −Q_q̇,

where (Φ_qᵀλ)_q is the analytic constraint Hessian of the formulation and (M q̈)_q, Q_q, Q_q̇ are
central differences.  The matrix is refreshed when Newton converges slowly (modified Newton).
Output velocities are projected onto Φ_q q̇ = ν (the integrator keeps its own q̇: projecting
inside the scheme would spoil its second order).
The step is fixed (``h``), halved on Newton failure and grown back after successes.
"""
from __future__ import annotations

import numpy as np
from ..math.lazy import sla


class GeneralizedAlpha:
    """One integration run of a MechanicalSystem from a consistent (q, q̇) at t."""

    def __init__(self, system, q, qd, qdd, lam, t, h, rows, rho_inf=0.8, tol=1e-8, max_iter=12):
        """rows: the independent constraint rows (redundant ones are left out of the Newton
        matrix, which would otherwise be singular); lam holds their multipliers."""
        self.s = system
        self.rows = rows
        self.q, self.qd, self.qdd, self.lam, self.t = q.copy(), qd.copy(), qdd.copy(), lam.copy(), t
        self.a = qdd.copy()
        self.h_nominal = self.h = h
        r = rho_inf
        self.am, self.af = (2 * r - 1) / (r + 1), r / (r + 1)
        self.gamma = 0.5 + self.af - self.am
        self.beta = 0.25 * (self.gamma + 0.5) ** 2
        self.tol, self.max_iter = tol, max_iter
        self.iteration_matrix = None
        self.newton_iterations = 0

    def consistent_velocities(self):
        """q̇ projected onto Φ_q q̇ = ν (the index-3 scheme satisfies Φ = 0 but only approximately
        the velocity constraints; outputs use the projection, the integrator keeps its own q̇)."""
        ev = self.s.constraints(self.q, self.t, level=1)
        y, *_ = np.linalg.lstsq(ev.jac @ ev.jac.T, ev.nu - ev.jac @ self.qd, rcond=None)
        return self.qd + ev.jac.T @ y

    def step(self, t_target):
        """Advance to ``t_target`` (≤ one nominal step ahead), halving the step on failure."""
        while self.t < t_target - 1e-14 * max(1.0, abs(t_target)):
            h = min(self.h, t_target - self.t)
            if self._try_step(h):
                self.h = min(self.h_nominal, 2 * self.h)
            else:
                self.h = h / 2
                self.iteration_matrix = None
                if self.h < self.h_nominal / 2**12:
                    return False
        return True

    # ---- helpers --------------------------------------------------------------------------------
    def _try_step(self, h):
        s, am, af, gamma, beta = self.s, self.am, self.af, self.gamma, self.beta
        t1 = self.t + h
        q0, qd0, qdd0, a0 = self.q, self.qd, self.qdd, self.a
        # predictor (Arnold & Brüls, algorithm 1)
        a = (af * qdd0 - am * a0) / (1 - am)
        q = q0 + h * qd0 + h * h * (0.5 - beta) * a0 + h * h * beta * a
        qd = qd0 + h * (1 - gamma) * a0 + h * gamma * a
        qdd = np.zeros_like(qdd0)
        lam = self.lam.copy()
        bp = (1 - am) / (beta * h * h * (1 - af))
        gp = gamma / (beta * h)
        scale = beta * h * h
        for it in range(self.max_iter):
            ev = s.constraints(q, t1)
            jac, phi = ev.jac[self.rows], ev.phi[self.rows]
            M = s.mass(q)
            res_q = M @ qdd + jac.T @ lam - s.forces(q, qd, t1)
            res = np.concatenate([res_q * scale, phi])
            if not np.all(np.isfinite(res)):
                return False
            if self.iteration_matrix is None or it >= 4:
                self.iteration_matrix = self._matrix(q, qd, qdd, lam, t1, bp, gp, scale, jac)
            try:
                dx = sla.lu_solve(self.iteration_matrix, -res)
            except ValueError:
                return False
            dq = dx[:s.nq]
            q = q + dq
            qd = qd + gp * dq
            qdd = qdd + bp * dq
            lam = lam + dx[s.nq:] / scale
            self.newton_iterations += 1
            # converged when the position correction is below tol (relative, floored at round-off)
            if np.max(np.abs(dq)) <= max(self.tol, 1e-13) * (1.0 + np.max(np.abs(q))):
                break
        else:
            return False
        self.a = a + (1 - af) / (1 - am) * qdd
        self.q, self.qd, self.qdd, self.lam, self.t = q, qd, qdd, lam, t1
        return True

    def _matrix(self, q, qd, qdd, lam, t, bp, gp, scale, jac):
        s, n = self.s, self.s.nq
        eps = 1e-7
        Mq = np.empty((n, n))
        Qq = np.empty((n, n))
        Qv = np.empty((n, n))
        for k in range(n):
            e = np.zeros(n)
            e[k] = eps * max(1.0, abs(q[k]))
            Mq[:, k] = (s.mass(q + e) @ qdd - s.mass(q - e) @ qdd) / (2 * e[k])
            Qq[:, k] = (s.forces(q + e, qd, t) - s.forces(q - e, qd, t)) / (2 * e[k])
            ev = eps * max(1.0, abs(qd[k]))
            e[k] = ev
            Qv[:, k] = (s.forces(q, qd + e, t) - s.forces(q, qd - e, t)) / (2 * ev)
        full = np.zeros(len(s.equations))
        full[self.rows] = lam
        K = Mq - Qq + s.constraint_hessian(q, full, t)
        S = s.mass(q) * bp - Qv * gp + K
        m = jac.shape[0]
        A = np.block([[S * scale, jac.T], [jac, np.zeros((m, m))]])
        return sla.lu_factor(A)
