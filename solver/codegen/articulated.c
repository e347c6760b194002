/* Open-tree dynamics in O(n): the articulated-body recursion in the state-vector form of seed
 * Kim & You (1997) (MBS Studio, solver.codegen).
 *
 * Compiled after the model's generated code, which defines (solver/codegen/tree.py, derive.py):
 *   cgt_edges(q, q̇ → q_c, q̇_c, A, ω, B, D)     per body [r ; p], [ṙ ; ṗ], rotation, ω; per tree
 *                                                coordinate its column of B_e, per edge D_e
 *   cgc_loads(q_c, q̇_c, par, f, u → F, T)       per body applied force at the CM (gravity
 *                                                included) and torque, global axes
 * and the layout NB, NQ, NQ1 = max(1, NQ), tables edge_parent (parent edge, −1 at the ground),
 * edge_child (body), edge_col (first coordinate), edge_n (coordinates), edge_euler (where the edge's
 * 4 Euler parameters start among its coordinates, −1: none), edge_row (their normalization row).
 * Edges are ordered parent before child.  The only constraint rows are the Euler-parameter
 * normalizations pᵀp − 1 = 0 of spherical and free joints (no cut joints, drivers or couplers).
 *
 * All quantities are global, about the global origin (Kim & You (1997) §2): state velocity Ŷ = [ṙ − r̃ω ; ω],
 * body state mass and force (eqs. 11–12)
 *   M̂ = [m I, −m r̃ ; m r̃, J − m r̃ r̃],   Q̂ = [f ; r̃ f + T − ω̃ J ω],  f = F − m ω̃ ṙ,  J = A J' Aᵀ,
 * and Ŷ_C = Ŷ_P + B_e q̇_e,  Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e (eqs. 6, 8): no frame transformations
 * between bodies.  With R̂_e the wrench of joint e on its child, M̂_C Ẏ̂_C = Q̂_C + R̂_e − Σ_k R̂_k
 * over the child edges k, and B_eᵀ R̂_e = τ_e (generalized joint forces).
 *
 * Articulated-body recursion (Featherstone's algorithm written with B_e, D_e), R̂_e = K_e Ẏ̂_C − L_e:
 *   backward   K_e = M̂_C + Σ_k (K_k − U_k W_k U_kᵀ),   U_k = K_k B_k,  W_k = (B_kᵀ U_k)⁻¹,
 *              L_e = Q̂_C + Σ_k (L_k − K_k D_k − U_k W_k u_k),   u_k = τ_k + B_kᵀ L_k − U_kᵀ D_k
 *   forward    q̈_e = W_e (u_e − U_eᵀ Ẏ̂_P),   Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e   (Ẏ̂_ground = 0)
 * Joint armature a (solver.formulations.armature; par[ARMATURE + j], none when ARMATURE < 0) adds to
 * the diagonal of the joint-space inertia: B_eᵀ U_e + diag(a_e) in W_e, and M = Bᵀ M̂ B + diag(a).
 * Euler parameters (solver/formulations/mobilizers.py: the pose depends on p/|p| only): B_e p̃ = 0 for
 * p̃ = the edge's p among its coordinates, so S = B_eᵀK_eB_e is singular along p̃ and neither M nor Q
 * has a component along it (the normalization carries no load: its multiplier is 0).  The row
 * pᵀp̈ = −ṗᵀṗ (Φ_q q̈ = γ of pᵀp − 1) fixes that component: W = (S + p̃p̃ᵀ)⁻¹, which equals S⁺ on
 * range(S) and maps p̃ to p̃/|p|², so U W Uᵀ and U W u are those of S⁺ (U p̃ = K B_e p̃ = 0), and
 *            q̈_e = W (a − p̃ (p̃ᵀa/|p|² + ṗᵀṗ)),   a = u_e − U_eᵀ Ẏ̂_P
 * (a projected on range(S), plus p̃ times −ṗᵀṗ/|p|²: pᵀp̈ = −ṗᵀṗ): the solution of M q̈ + Φ_qᵀλ = Q,
 * Φ_q q̈ = γ the dense reduction (reduced.c) finds by factoring NᵀMN.
 * O(n) per evaluation, against O(n²) to assemble M = Bᵀ M̂ B and O(n³) to factor it.  The composite
 * quantities of Kim & You (1997) (eqs. 16–17: K_e = M̂_C + Σ_k K_k, L_e = Q̂_C + Σ_k (L_k − K_k D_k)) give M
 * and Q (eq. 15) for the callers that need them (linearization, diagnosis): cg_mass, cg_forces.
 * Work arrays are thread-local: one library may serve runs in several threads.
 */
#pragma GCC optimize("O3")               /* the fixed 6 × 6 loops below: unrolled and vectorized, 2× faster
                                            than -O2 (the long generated kernels above stay at -O2) */
/* the generated code (compiled in units of its own, while this one compiles beside the derivation) */
void cgt_edges(const double *q, const double *qd, double *qc, double *qdc, double *A, double *w, double *B, double *D);
void cgc_loads(const double *q, const double *qd, const double *par, const double *f, const double *u, double *F,
               double *T);
enum { NJ = 7 };                         /* most coordinates of one tree joint (free: 3 + 4) */

static _Thread_local struct {
    double qc[7 * NB], qdc[7 * NB], A[9 * NB], w[3 * NB], B[6 * NQ1], D[6 * NB], F[3 * NB], T[3 * NB];
    double K[36 * NB], L[6 * NB];        /* per edge: M̂, Q̂ of its child, then articulated or composite */
    double U[6 * NQ1], W[NJ * NJ * NB], u[NQ1], Y[6 * NB];
} ws;

/* y = K x (K 6 × 6 row-major). */
static void mul6(const double *K, const double *x, double *y)
{
    for (int i = 0; i < 6; ++i) {
        double s = 0.0;
        for (int j = 0; j < 6; ++j) s += K[6 * i + j] * x[j];
        y[i] = s;
    }
}

static double dot6(const double *a, const double *b)
{
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5];
}

/* Inverse of the n × n matrix a (row-major, destroyed) into inv, Gauss–Jordan with partial
 * pivoting; 1, 0 when singular, −1 when not finite. */
static int invert_small(double *a, double *inv, int n)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) inv[i * n + j] = i == j;
    for (int k = 0; k < n; ++k) {
        int p = k;
        for (int i = k + 1; i < n; ++i) if (fabs(a[i * n + k]) > fabs(a[p * n + k])) p = i;
        const double piv = a[p * n + k];
        if (!isfinite(piv)) return -1;
        if (piv == 0.0) return 0;
        for (int j = 0; j < n; ++j) {
            double t = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = t;
            t = inv[k * n + j]; inv[k * n + j] = inv[p * n + j]; inv[p * n + j] = t;
        }
        for (int j = 0; j < n; ++j) { a[k * n + j] /= piv; inv[k * n + j] /= piv; }
        for (int i = 0; i < n; ++i) {
            const double l = a[i * n + k];
            if (i == k || l == 0.0) continue;
            for (int j = 0; j < n; ++j) { a[i * n + j] -= l * a[k * n + j]; inv[i * n + j] -= l * inv[k * n + j]; }
        }
    }
    return 1;
}

/* Kp += K − U W Uᵀ,  Lp += L − K D − U W u  (K D given as KD): a child edge's share of its parent's
 * articulated quantities.  One-coordinate joints (revolute, prismatic, screw) take the scalar W. */
static void to_parent(const double *restrict K, const double *restrict L, const double *restrict KD,
                      const double *restrict U, const double *restrict W, const double *restrict ue, int n,
                      double *restrict Kp, double *restrict Lp)
{
    double UW[6 * NJ], g[6] = {0.0};                  /* U W (6 × n, column j at 6 j), U W u */
    if (n == 1) {
        for (int i = 0; i < 6; ++i) {
            UW[i] = U[i] * W[0];
            g[i] = UW[i] * ue[0];
        }
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) Kp[6 * i + j] += K[6 * i + j] - UW[i] * U[j];
    } else {
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < 6; ++i) {
                double s = 0.0;
                for (int k = 0; k < n; ++k) s += U[6 * k + i] * W[n * k + j];
                UW[6 * j + i] = s;
                g[i] += s * ue[j];
            }
        for (int i = 0; i < 6; ++i)
            for (int j = 0; j < 6; ++j) {
                double s = K[6 * i + j];
                for (int k = 0; k < n; ++k) s -= UW[6 * k + i] * U[6 * k + j];
                Kp[6 * i + j] += s;
            }
    }
    for (int i = 0; i < 6; ++i) Lp[i] += L[i] - KD[i] - g[i];
}

/* Tree kinematics at (q, q̇), applied loads, and per edge K = M̂, L = Q̂ of its child body.  shift: the
 * state quantities of each subtree hanging from the ground about its root body's CM o instead of the
 * global origin (Ŷ' = [Ŷ_top − o × ω ; ω]: B' = [B_top − o × B_bot ; B_bot], D' likewise, M̂ and Q̂ with
 * r − o): the same q̈ (τ = B'ᵀR̂' = BᵀR̂), without the cancellation of m r̃r̃ against J when bodies
 * are far from the origin (a free body 1e8 body lengths away, an integrator's rejected stage). */
static void load_bodies(const double *q, const double *qd, const double *par, const double *f, const double *u,
                        int shift)
{
    cgt_edges(q, qd, ws.qc, ws.qdc, ws.A, ws.w, ws.B, ws.D);
    cgc_loads(ws.qc, ws.qdc, par, f, u, ws.F, ws.T);
    int root[NB];
    for (int e = 0; e < NB; ++e) {
        root[e] = edge_parent[e] < 0 ? e : root[edge_parent[e]];
        if (!shift) continue;
        const double *o = ws.qc + 7 * edge_child[root[e]];
        for (int j = 0; j < edge_n[e]; ++j) {
            double *Bj = ws.B + 6 * (edge_col[e] + j);
            const double x[3] = {o[1] * Bj[5] - o[2] * Bj[4], o[2] * Bj[3] - o[0] * Bj[5], o[0] * Bj[4] - o[1] * Bj[3]};
            for (int i = 0; i < 3; ++i) Bj[i] -= x[i];
        }
        double *De = ws.D + 6 * e;
        const double x[3] = {o[1] * De[5] - o[2] * De[4], o[2] * De[3] - o[0] * De[5], o[0] * De[4] - o[1] * De[3]};
        for (int i = 0; i < 3; ++i) De[i] -= x[i];
    }
    for (int e = 0; e < NB; ++e) {
        const int b = edge_child[e];
        const double *o = ws.qc + 7 * edge_child[root[e]], *qb = ws.qc + 7 * b;
        const double r[3] = {shift ? qb[0] - o[0] : qb[0], shift ? qb[1] - o[1] : qb[1], shift ? qb[2] - o[2] : qb[2]};
        const double *c = par + 7 * b, *v = ws.qdc + 7 * b, *A = ws.A + 9 * b, *w = ws.w + 3 * b;
        const double m = c[0];
        const double Jb[9] = {c[1], c[4], c[6], c[4], c[2], c[5], c[6], c[5], c[3]};   /* J' */
        double AJ[9], J[9];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                AJ[3 * i + j] = A[3 * i] * Jb[j] + A[3 * i + 1] * Jb[3 + j] + A[3 * i + 2] * Jb[6 + j];
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                J[3 * i + j] = AJ[3 * i] * A[3 * j] + AJ[3 * i + 1] * A[3 * j + 1] + AJ[3 * i + 2] * A[3 * j + 2];
        const double rt[9] = {0.0, -r[2], r[1], r[2], 0.0, -r[0], -r[1], r[0], 0.0};   /* r̃ */
        double *K = ws.K + 36 * e, *L = ws.L + 6 * e;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double rr = 0.0;
                for (int k = 0; k < 3; ++k) rr += rt[3 * i + k] * rt[3 * k + j];
                K[6 * i + j] = i == j ? m : 0.0;
                K[6 * i + 3 + j] = -m * rt[3 * i + j];
                K[6 * (3 + i) + j] = m * rt[3 * i + j];
                K[6 * (3 + i) + 3 + j] = J[3 * i + j] - m * rr;
            }
        const double *F = ws.F + 3 * b, *T = ws.T + 3 * b;
        const double fo[3] = {F[0] - m * (w[1] * v[2] - w[2] * v[1]), F[1] - m * (w[2] * v[0] - w[0] * v[2]),
                              F[2] - m * (w[0] * v[1] - w[1] * v[0])};
        double Jw[3];
        for (int i = 0; i < 3; ++i) Jw[i] = J[3 * i] * w[0] + J[3 * i + 1] * w[1] + J[3 * i + 2] * w[2];
        L[0] = fo[0]; L[1] = fo[1]; L[2] = fo[2];
        L[3] = r[1] * fo[2] - r[2] * fo[1] + T[0] - (w[1] * Jw[2] - w[2] * Jw[1]);
        L[4] = r[2] * fo[0] - r[0] * fo[2] + T[1] - (w[2] * Jw[0] - w[0] * Jw[2]);
        L[5] = r[0] * fo[1] - r[1] * fo[0] + T[2] - (w[0] * Jw[1] - w[1] * Jw[0]);
    }
}

/* Composite K, L (Kim & You (1997) eqs. 16–17), from the leaves. */
static void composite(void)
{
    for (int e = NB - 1; e >= 0; --e) {
        const int p = edge_parent[e];
        if (p < 0) continue;
        double KD[6];
        mul6(ws.K + 36 * e, ws.D + 6 * e, KD);
        for (int i = 0; i < 36; ++i) ws.K[36 * p + i] += ws.K[36 * e + i];
        for (int i = 0; i < 6; ++i) ws.L[6 * p + i] += ws.L[6 * e + i] - KD[i];
    }
}

/* q̈ of the open tree at (q, q̇) with generalized joint forces tau (added to the applied loads), by
 * the articulated-body recursion (header).  Returns 1, 0 when a joint's articulated inertia B_eᵀK_eB_e
 * is singular, −1 when a result is not finite (reduced.c's CG_DYNAMICS_NOT_FINITE). */
int cg_tree_accelerations(const double *q, const double *qd, const double *par, const double *f, const double *u,
                          const double *tau, double *qdd)
{
    load_bodies(q, qd, par, f, u, 1);
    for (int e = NB - 1; e >= 0; --e) {                       /* backward: articulated K, L */
        const int n = edge_n[e], c0 = edge_col[e], p = edge_parent[e];
        const double *K = ws.K + 36 * e, *L = ws.L + 6 * e, *D = ws.D + 6 * e, *B = ws.B + 6 * c0;
        double *U = ws.U + 6 * c0, *W = ws.W + NJ * NJ * e, *ue = ws.u + c0;
        double KD[6], S[NJ * NJ];
        mul6(K, D, KD);
        for (int j = 0; j < n; ++j) {
            mul6(K, B + 6 * j, U + 6 * j);
            ue[j] = tau[c0 + j] + dot6(B + 6 * j, L) - dot6(U + 6 * j, D);
            for (int i = 0; i < n; ++i) S[n * i + j] = dot6(B + 6 * i, U + 6 * j);
#if ARMATURE >= 0
            S[n * j + j] += par[ARMATURE + c0 + j];
#endif
        }
        const int eu = edge_euler[e];
        if (eu >= 0) {                                        /* S + p̃p̃ᵀ (header) */
            const double *p = q + c0 + eu;
            for (int i = 0; i < 4; ++i)
                for (int j = 0; j < 4; ++j) S[n * (eu + i) + eu + j] += p[i] * p[j];
        }
        if (n == 1) {
            if (!isfinite(S[0])) return -1;
            if (!(S[0] > 0.0)) return 0;
            W[0] = 1.0 / S[0];
        } else if (n) {
            const int inverted = invert_small(S, W, n);
            if (inverted <= 0) return inverted;
        }
        if (p >= 0) to_parent(K, L, KD, U, W, ue, n, ws.K + 36 * p, ws.L + 6 * p);
    }
    for (int e = 0; e < NB; ++e) {                            /* forward: q̈, Ẏ̂ */
        const int n = edge_n[e], c0 = edge_col[e], p = edge_parent[e];
        const double *U = ws.U + 6 * c0, *W = ws.W + NJ * NJ * e, *B = ws.B + 6 * c0, *D = ws.D + 6 * e;
        const double zero[6] = {0.0};
        const double *YP = p >= 0 ? ws.Y + 6 * p : zero;
        double *Y = ws.Y + 6 * e, a[NJ];
        for (int j = 0; j < n; ++j) a[j] = ws.u[c0 + j] - dot6(U + 6 * j, YP);
        const int eu = edge_euler[e];
        if (eu >= 0) {                                        /* a − p̃ (p̃ᵀa/|p|² + ṗᵀṗ) (header) */
            const double *p = q + c0 + eu, *pd = qd + c0 + eu;
            double pp = 0.0, pa = 0.0, vv = 0.0;
            for (int i = 0; i < 4; ++i) { pp += p[i] * p[i]; pa += p[i] * a[eu + i]; vv += pd[i] * pd[i]; }
            const double g = pa / pp + vv;
            for (int i = 0; i < 4; ++i) a[eu + i] -= p[i] * g;
        }
        for (int i = 0; i < 6; ++i) Y[i] = YP[i] + D[i];
        for (int j = 0; j < n; ++j) {
            double s = 0.0;
            for (int k = 0; k < n; ++k) s += W[n * j + k] * a[k];
            if (!isfinite(s)) return -1;
            qdd[c0 + j] = s;
            for (int i = 0; i < 6; ++i) Y[i] += B[6 * j + i] * s;
        }
    }
    return 1;
}

/* Generalized forces Q_e = B_eᵀ Σ_{subtree(e)} Ŵ_b of body loads (force Fx at the CM, torque Tx;
 * Ŵ = [F ; r̃ F + T]) — for the force elements evaluated in Python, at the state whose cgt_edges
 * outputs q_c and B the caller holds (it evaluated them for the elements' body frames). */
void cg_tree_generalized(const double *qc, const double *B, const double *Fx, const double *Tx, double *Q)
{
    for (int e = 0; e < NB; ++e) {
        const int b = edge_child[e];
        const double *F = Fx + 3 * b, *r = qc + 7 * b;
        double *S = ws.L + 6 * e;
        S[0] = F[0]; S[1] = F[1]; S[2] = F[2];
        S[3] = r[1] * F[2] - r[2] * F[1] + Tx[3 * b];
        S[4] = r[2] * F[0] - r[0] * F[2] + Tx[3 * b + 1];
        S[5] = r[0] * F[1] - r[1] * F[0] + Tx[3 * b + 2];
    }
    for (int e = NB - 1; e >= 0; --e) {
        const int p = edge_parent[e];
        for (int j = 0; j < edge_n[e]; ++j) Q[edge_col[e] + j] = dot6(B + 6 * (edge_col[e] + j), ws.L + 6 * e);
        if (p >= 0) for (int i = 0; i < 6; ++i) ws.L[6 * p + i] += ws.L[6 * e + i];
    }
}

/* The normalization rows Φ = pᵀp − 1, Φ_q = 2pᵀ on the edge's Euler parameters (the other entries of
 * jac are never written: its buffer starts zeroed) … */
void cg_position(const double *q, const double *qd, const double *par, const double *f, const double *u,
                 double *phi, double *jac, double *ang)
{
    for (int e = 0; e < NB; ++e) {
        if (edge_euler[e] < 0) continue;
        const int c = edge_col[e] + edge_euler[e], row = edge_row[e];
        double s = 0.0;
        for (int i = 0; i < 4; ++i) {
            s += q[c + i] * q[c + i];
            jac[(size_t)row * NQ + c + i] = 2.0 * q[c + i];
        }
        phi[row] = s - 1.0;
    }
}

/* … and their γ = −2 ṗᵀṗ. */
void cg_gamma(const double *q, const double *qd, const double *par, const double *f, const double *u,
              double *gamma)
{
    for (int e = 0; e < NB; ++e) {
        if (edge_euler[e] < 0) continue;
        const double *pd = qd + edge_col[e] + edge_euler[e];
        gamma[edge_row[e]] = -2.0 * (pd[0] * pd[0] + pd[1] * pd[1] + pd[2] * pd[2] + pd[3] * pd[3]);
    }
}

/* M = Bᵀ M̂ B from the composite K (Kim & You (1997) eqs. 15–16): block (a, e) = B_aᵀ K_e B_e for every
 * edge a on e's path, O(n²). */
void cg_mass(const double *q, const double *qd, const double *par, const double *f, const double *u, double *M)
{
    load_bodies(q, qd, par, f, u, 0);
    composite();
    memset(M, 0, sizeof(double) * NQ * NQ);
    for (int e = 0; e < NB; ++e)
        for (int j = 0; j < edge_n[e]; ++j) {
            const int cj = edge_col[e] + j;
            double KB[6];
            mul6(ws.K + 36 * e, ws.B + 6 * cj, KB);
            for (int a = e; a >= 0; a = edge_parent[a])
                for (int i = 0; i < edge_n[a]; ++i) {
                    const int ci = edge_col[a] + i;
                    M[ci * NQ + cj] = M[cj * NQ + ci] = dot6(ws.B + 6 * ci, KB);
                }
        }
#if ARMATURE >= 0
    for (int j = 0; j < NQ; ++j) M[j * NQ + j] += par[ARMATURE + j];
#endif
}

/* Q_e = B_eᵀ (L_e − K_e Σ_path D) with the composite K, L (Kim & You (1997) eqs. 15, 17), O(n). */
void cg_forces(const double *q, const double *qd, const double *par, const double *f, const double *u, double *Q)
{
    load_bodies(q, qd, par, f, u, 0);
    composite();
    for (int e = 0; e < NB; ++e) {
        const int p = edge_parent[e];
        double *Y = ws.Y + 6 * e, KY[6];
        for (int i = 0; i < 6; ++i) Y[i] = (p >= 0 ? ws.Y[6 * p + i] : 0.0) + ws.D[6 * e + i];
        mul6(ws.K + 36 * e, Y, KY);
        for (int i = 0; i < 6; ++i) KY[i] = ws.L[6 * e + i] - KY[i];
        for (int j = 0; j < edge_n[e]; ++j) Q[edge_col[e] + j] = dot6(ws.B + 6 * (edge_col[e] + j), KY);
    }
}
