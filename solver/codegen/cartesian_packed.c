/* The Cartesian kernels' Φ_q and M in their patterns (MBS Studio, solver.codegen.build: the fixed unit of a
 * Cartesian library, after its layout).
 *
 * The generated cg_position_packed and cg_mass_packed write only the entries of Φ_q (m × nq) and M (nq × nq)
 * that the derivation found non-zero (solver/codegen/derive.py), each at its place in the sorted list of
 * those entries: Φ_q entry e at row-major position cgp_jac_at[e] (CGP_NJ of them), M entry e at
 * cgp_mass_at[e] (CGP_NM) — the layout the band algebra reads (banded.c: j_at, m_at; reduced.py
 * PACKED_KERNELS), as relative.c's packed kernels give it for the relative formulation.  Every entry of
 * the list is written at every call, so nothing is cleared.  Here:
 *
 *   cg_position, cg_mass   the dense kernels (reduced.c's dense algebra, Python, the FMU): the packed
 *                          ones scattered into the cleared row-major array (the numbers written before);
 *   cg_dynamics_packed     γ, M packed and Q in one call (reduced.c's k_dynamics with the band algebra).
 *
 * The layout defines CGP_M, CGP_NQ, CGP_NJ, CGP_NM (each also as …1 = max(1, …)) and the tables. */

void cg_position_packed(const double *q, const double *qd, const double *par, const double *f, const double *u,
                        double *phi, double *jac, double *ang);
void cg_mass_packed(const double *q, const double *qd, const double *par, const double *f, const double *u,
                    double *M);
void cg_gamma(const double *q, const double *qd, const double *par, const double *f, const double *u, double *gamma);
void cg_forces(const double *q, const double *qd, const double *par, const double *f, const double *u, double *Q);

static _Thread_local double cgp_jac_ws[CGP_NJ1], cgp_mass_ws[CGP_NM1];

void cg_position(const double *q, const double *qd, const double *par, const double *f, const double *u,
                 double *phi, double *jac, double *ang)
{
    cg_position_packed(q, qd, par, f, u, phi, cgp_jac_ws, ang);
    memset(jac, 0, sizeof(double) * (size_t)CGP_M * CGP_NQ);
    for (int e = 0; e < CGP_NJ; ++e) jac[cgp_jac_at[e]] = cgp_jac_ws[e];
}

void cg_mass(const double *q, const double *qd, const double *par, const double *f, const double *u, double *M)
{
    cg_mass_packed(q, qd, par, f, u, cgp_mass_ws);
    memset(M, 0, sizeof(double) * (size_t)CGP_NQ * CGP_NQ);
    for (int e = 0; e < CGP_NM; ++e) M[cgp_mass_at[e]] = cgp_mass_ws[e];
}

/* reduced.c's k_dynamics: γ (driver values f̈ in fdd), M packed, Q */
void cg_dynamics_packed(const double *q, const double *qd, const double *par, const double *f, const double *fdd,
                        const double *u, double *gamma, double *M, double *Q)
{
    cg_gamma(q, qd, par, fdd, u, gamma);
    cg_mass_packed(q, qd, par, f, u, M);
    cg_forces(q, qd, par, f, u, Q);
}
