/* Relative-coordinate kernels from the Cartesian ones by the velocity transformation (MBS Studio,
 * solver.codegen) — Choi & Yoo (2000) §2–3 (the equations of motion in relative coordinates obtained
 * from the Cartesian ones with q̇_c = T q̇), Kim & You (1997) eq. 15.
 *
 * Compiled after the model's generated code, which defines (solver/codegen/tree.py, derive.py):
 *   cgt_position(q → qc, T), cgt_velocity(q, q̇ → qc, T, q̇_c, Ṫq̇)      the tree map
 *   cgc_position, cgc_gamma, cgc_mass, cgc_forces                          Cartesian kernels at qc
 * and the layout constants NB, NC = 7 NB, NQ, MC (Cartesian rows), MR (relative rows), NAC, NAR and
 * the tables row_kind/row_a/row_b (what each relative row is) and ang_src.  A relative row is
 *   ROW_CARTESIAN  Cartesian row a (cut-joint equations, drivers on cut joints):
 *                  Φ = Φ_c[a], Φ_q = Φ_c,q[a] T, γ = γ_c[a] − Φ_c,q[a] Ṫq̇
 *   ROW_COORDINATE a driven tree coordinate, column a, driver b:  Φ = q_a − f_b, γ = f̈_b
 *   ROW_NORM       Euler parameters of a tree joint at column a:  Φ = pᵀp − 1, γ = −2 ṗᵀṗ
 *   ROW_COUPLER    a coupler between tree coordinates, column a following column cpl_col[b]:
 *                  Φ = q_a − p(q_s), Φ_q = e_a − p'(q_s) e_s, γ = p''(q_s) q̇_s² (solver.formulations.rows,
 *                  CouplerSource), p = Σ_k c_k x^k with c_k = par[cpl_par[b] + k], k < cpl_n[b]
 * and the equations of motion are
 *   M = Tᵀ M_c T + diag(a),   Q = Tᵀ (Q_c − M_c Ṫq̇)   (M_c block diagonal: 7 × 7 per body)
 * with a the joint armature of each coordinate, par[ARMATURE + j] (solver.formulations.armature; no
 * term when ARMATURE < 0).
 * T is sparse along the tree: body b's 7 rows are non-zero only in the columns of the joints on its
 * path from the root (table body_col), and a Cartesian row only in the 7 columns of each of its
 * bodies (table row_body, from the Cartesian Φ_q pattern).  So M = Σ_b T_bᵀ M_c,b T_b adds a
 * p_b × p_b block per body (p_b the path length), a cut-joint row Φ_c,q[a] T costs 7 p_b per body of
 * the row, and nothing is O(NC · NQ): the cost grows with Σ_b p_b², not with the model's size squared.
 * Sums run over the same terms in the same order as the dense products, skipping only exact zeros.
 * The kernels have the signatures of the Cartesian ones, so reduced.c (through its kernel pointers) and
 * solver.codegen.build.Kernels use them unchanged.  Work arrays are thread-local: one library may
 * serve runs in several threads.
 */
/* the generated code (compiled in units of its own, while this one compiles beside the derivation) */
void cgt_position(const double *q, double *qc, double *T);
void cgt_velocity(const double *q, const double *qd, double *qc, double *T, double *qdc, double *tdqd);
void cgc_position(const double *q, const double *qd, const double *par, const double *f, const double *u,
                  double *phi, double *jac, double *ang);
void cgc_gamma(const double *q, const double *qd, const double *par, const double *f, const double *u, double *gamma);
void cgc_mass(const double *q, const double *qd, const double *par, const double *f, const double *u, double *M);
void cgc_forces(const double *q, const double *qd, const double *par, const double *f, const double *u, double *Q);

enum { ROW_CARTESIAN = 0, ROW_COORDINATE = 1, ROW_NORM = 2, ROW_COUPLER = 3 };

/* p, p', p'' at x of coupler b's polynomial (Horner's rule). */
static void coupler_terms(int b, const double *par, double x, double *p, double *dp, double *ddp)
{
    *p = *dp = *ddp = 0.0;
    for (int k = cpl_n[b] - 1; k >= 0; --k) {
        *ddp = *ddp * x + 2.0 * *dp;
        *dp = *dp * x + *p;
        *p = *p * x + par[cpl_par[b] + k];
    }
}

static _Thread_local struct {
    double qc[NC], T[NC * NQ], qdc[NC], tdqd[NC];
    double phi[MC1], jac[MC1 * NC], ang[NAC1], gamma[MC1], M[NC * NC], Q[NC];
} ws;

/* out (NQ) = Φ_c,q[a] T for the Cartesian row a (row: its NC entries), over the blocks of its bodies. */
static void row_times_T(int i, const double *row, double *out)
{
    for (int j = 0; j < NQ; ++j) out[j] = 0.0;
    for (int n = row_body_start[i]; n < row_body_start[i + 1]; ++n) {
        const int b = row_body[n];
        for (int k = 7 * b; k < 7 * b + 7; ++k) {
            const double a = row[k];
            if (a == 0.0) continue;
            const double *t = ws.T + k * NQ;
            for (int c = body_col_start[b]; c < body_col_start[b + 1]; ++c) out[body_col[c]] += a * t[body_col[c]];
        }
    }
}

/* Φ_c,q[a] v for the Cartesian row a (row: its NC entries) and a Cartesian vector v. */
static double row_dot(int i, const double *row, const double *v)
{
    double s = 0.0;
    for (int n = row_body_start[i]; n < row_body_start[i + 1]; ++n)
        for (int k = 7 * row_body[n]; k < 7 * row_body[n] + 7; ++k) s += row[k] * v[k];
    return s;
}

void cg_position(const double *q, const double *qd, const double *par, const double *f, const double *u,
                 double *phi, double *jac, double *ang)
{
    cgt_position(q, ws.qc, ws.T);
    cgc_position(ws.qc, ws.qc, par, f, u, ws.phi, ws.jac, ws.ang);
    for (int i = 0; i < MR; ++i) {
        double *J = jac + i * NQ;
        const int a = row_a[i];
        if (row_kind[i] == ROW_CARTESIAN) {
            phi[i] = ws.phi[a];
            row_times_T(i, ws.jac + a * NC, J);
            continue;
        }
        for (int j = 0; j < NQ; ++j) J[j] = 0.0;
        if (row_kind[i] == ROW_COORDINATE) {
            phi[i] = q[a] - f[row_b[i]];
            J[a] = 1.0;
        } else if (row_kind[i] == ROW_COUPLER) {
            const int s = cpl_col[row_b[i]];
            double p, dp, ddp;
            coupler_terms(row_b[i], par, q[s], &p, &dp, &ddp);
            phi[i] = q[a] - p;
            J[a] = 1.0;
            J[s] -= dp;
        } else {
            phi[i] = q[a] * q[a] + q[a + 1] * q[a + 1] + q[a + 2] * q[a + 2] + q[a + 3] * q[a + 3] - 1.0;
            for (int k = 0; k < 4; ++k) J[a + k] = 2.0 * q[a + k];
        }
    }
    for (int n = 0; n < NAR; ++n) ang[n] = ws.ang[ang_src[n]];
}

/* M += Tᵀ M_c T over the 7 × 7 block of every body and the columns of its path. */
static void add_reduced_mass(double *M)
{
    for (int b = 0; b < NB; ++b) {
        const int o = 7 * b, *col = body_col + body_col_start[b], p = body_col_start[b + 1] - body_col_start[b];
        double MT[7 * NQ];                 /* M_c[block] T[block rows, path columns] (7 × p) */
        for (int i = 0; i < 7; ++i)
            for (int j = 0; j < p; ++j) {
                double s = 0.0;
                for (int k = 0; k < 7; ++k) s += ws.M[(o + i) * NC + o + k] * ws.T[(o + k) * NQ + col[j]];
                MT[i * p + j] = s;
            }
        for (int i = 0; i < 7; ++i) {
            const double *t = ws.T + (o + i) * NQ;
            for (int r = 0; r < p; ++r) {
                const double a = t[col[r]];
                if (a != 0.0)
                    for (int c = 0; c < p; ++c) M[col[r] * NQ + col[c]] += a * MT[i * p + c];
            }
        }
    }
}

/* γ of the relative rows from ws (cgc_gamma and cgc_position at q_c, Ṫq̇ of cgt_velocity); f: f̈. */
static void relative_gamma(const double *q, const double *qd, const double *par, const double *f, double *gamma)
{
    for (int i = 0; i < MR; ++i) {
        const int a = row_a[i];
        if (row_kind[i] == ROW_CARTESIAN) {
            gamma[i] = ws.gamma[a] - row_dot(i, ws.jac + a * NC, ws.tdqd);
        } else if (row_kind[i] == ROW_COORDINATE) {
            gamma[i] = f[row_b[i]];
        } else if (row_kind[i] == ROW_COUPLER) {
            const int s = cpl_col[row_b[i]];
            double p, dp, ddp;
            coupler_terms(row_b[i], par, q[s], &p, &dp, &ddp);
            gamma[i] = ddp * qd[s] * qd[s];
        } else {
            gamma[i] = -2.0 * (qd[a] * qd[a] + qd[a + 1] * qd[a + 1] + qd[a + 2] * qd[a + 2] + qd[a + 3] * qd[a + 3]);
        }
    }
}

/* M = Tᵀ M_c T + diag(a) from ws (cgc_mass, T) and the armature parameters. */
static void relative_mass(const double *par, double *M)
{
    memset(M, 0, sizeof(double) * NQ * NQ);
    add_reduced_mass(M);
#if ARMATURE >= 0
    for (int j = 0; j < NQ; ++j) M[j * NQ + j] += par[ARMATURE + j];
#else
    (void)par;
#endif
}

/* Q = Tᵀ (Q_c − M_c Ṫq̇) from ws (cgc_forces, cgc_mass, T and Ṫq̇ of cgt_velocity). */
static void relative_forces(double *Q)
{
    for (int b = 0; b < NB; ++b) {
        const int o = 7 * b;
        for (int i = 0; i < 7; ++i) {
            double s = 0.0;
            for (int k = 0; k < 7; ++k) s += ws.M[(o + i) * NC + o + k] * ws.tdqd[o + k];
            ws.Q[o + i] -= s;
        }
    }
    for (int j = 0; j < NQ; ++j) Q[j] = 0.0;
    for (int b = 0; b < NB; ++b)
        for (int k = 7 * b; k < 7 * b + 7; ++k) {
            const double a = ws.Q[k];
            if (a == 0.0) continue;
            const double *t = ws.T + k * NQ;
            for (int c = body_col_start[b]; c < body_col_start[b + 1]; ++c) Q[body_col[c]] += a * t[body_col[c]];
        }
}

void cg_gamma(const double *q, const double *qd, const double *par, const double *f, const double *u,
              double *gamma)
{
    cgt_velocity(q, qd, ws.qc, ws.T, ws.qdc, ws.tdqd);
    cgc_gamma(ws.qc, ws.qdc, par, f, u, ws.gamma);
    cgc_position(ws.qc, ws.qdc, par, f, u, ws.phi, ws.jac, ws.ang);     /* Φ_c,q for −Φ_c,q Ṫq̇ */
    relative_gamma(q, qd, par, f, gamma);
}

void cg_mass(const double *q, const double *qd, const double *par, const double *f, const double *u, double *M)
{
    cgt_position(q, ws.qc, ws.T);
    cgc_mass(ws.qc, ws.qc, par, f, u, ws.M);
    relative_mass(par, M);
}

void cg_forces(const double *q, const double *qd, const double *par, const double *f, const double *u, double *Q)
{
    cgt_velocity(q, qd, ws.qc, ws.T, ws.qdc, ws.tdqd);
    cgc_forces(ws.qc, ws.qdc, par, f, u, ws.Q);
    cgc_mass(ws.qc, ws.qdc, par, f, u, ws.M);
    relative_forces(Q);
}

/* cg_gamma (with the drivers' f̈ as fdd), cg_mass and cg_forces at one state with one evaluation of
 * the tree map and of each Cartesian kernel: what reduced.c's accelerations need (same numbers). */
void cg_dynamics(const double *q, const double *qd, const double *par, const double *f, const double *fdd,
                        const double *u, double *gamma, double *M, double *Q)
{
    cgt_velocity(q, qd, ws.qc, ws.T, ws.qdc, ws.tdqd);
    cgc_gamma(ws.qc, ws.qdc, par, fdd, u, ws.gamma);
    cgc_position(ws.qc, ws.qdc, par, f, u, ws.phi, ws.jac, ws.ang);
    cgc_mass(ws.qc, ws.qdc, par, f, u, ws.M);
    cgc_forces(ws.qc, ws.qdc, par, f, u, ws.Q);
    relative_gamma(q, qd, par, fdd, gamma);
    relative_mass(par, M);
    relative_forces(Q);
}

/* For the output rows (output_tree.c, after this file in its unit): the Cartesian Φ_c,q at the body
 * coordinates qc (the tree map's, cgt_edges), into ws.jac … */
static void relative_cartesian_jacobian(const double *qc, const double *par, const double *f, const double *u)
{
    cgc_position(qc, qc, par, f, u, ws.phi, ws.jac, ws.ang);
}

/* … and W += s c_b of the Cartesian row of relative row i (a ROW_CARTESIAN row: a cut joint's, a driver's
 * on one) on body b: c_b = [g ; r_b × g + ½ G(p_b) g_p], g and g_p its entries in b's r and p, the
 * spatial gradient about the global origin (δΦ = c_bᵀ [δr_O ; δπ]; ω = 2 G(p) ṗ, Haug (1989) eq. 6.3.18). */
static void relative_row_wrench(int i, int b, const double *qc, double s, double *W)
{
    const double *g = ws.jac + (size_t)row_a[i] * NC + 7 * b, *r = qc + 7 * b, *p = qc + 7 * b + 3;
    const double G[12] = {-p[1], p[0], -p[3], p[2], -p[2], p[3], p[0], -p[1], -p[3], -p[2], p[1], p[0]};
    for (int k = 0; k < 3; ++k) {
        const double n = 0.5 * (G[4 * k] * g[3] + G[4 * k + 1] * g[4] + G[4 * k + 2] * g[5] + G[4 * k + 3] * g[6]);
        W[k] += s * g[k];
        W[3 + k] += s * (r[(k + 1) % 3] * g[(k + 2) % 3] - r[(k + 2) % 3] * g[(k + 1) % 3] + n);
    }
}

/* … and Σ p'(q_c) λ_i over the couplers between tree coordinates (ROW_COUPLER rows i) led by column c: their
 * load on c, which eq. 36's B_cᵀ R̂_e of a driver on c holds besides the driver's (RelativeSystem._post). */
static double relative_coupler_loads(int c, const double *q, const double *par, const double *lam)
{
    double load = 0.0;
    for (int i = 0; i < MR; ++i) {
        if (row_kind[i] != ROW_COUPLER || cpl_col[row_b[i]] != c) continue;
        double p, dp, ddp;
        coupler_terms(row_b[i], par, q[c], &p, &dp, &ddp);
        load += dp * lam[i];
    }
    return load;
}
