/* Relative-coordinate kernels from the Cartesian ones by the velocity transformation (MBS Studio,
 * solver.codegen) — Choi & Yoo (2000) §2–3 (the equations of motion in relative coordinates obtained
 * from the Cartesian ones with q̇_c = T q̇), Kim & You (1997) eq. 15.
 *
 * Compiled after the model's generated code, which defines (solver/codegen/tree.py, derive.py):
 *   cgt_position(q → qc, T), cgt_velocity(q, q̇ → qc, T, q̇_c, Ṫq̇)      the tree map
 *   cgc_position, cgc_gamma, cgc_mass, cgc_forces                          Cartesian kernels at qc
 * and the layout constants NB, NC = 7 NB, NQ, MC (Cartesian rows), MR (relative rows), NAC, NAR, the
 * packed sizes NT, NJC, NJ, NM, the longest path PMAX (each as X1 = max(1, X)) and the tables
 * row_kind/row_a/row_b (what each relative row is) and ang_src.  A relative row is
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
 * Every matrix is stored packed (solver/codegen/relative_layout.py): T per body block (7 × p_b at
 * 7 body_col_start[b]), Φ_c,q per row and body (7 entries each, relative row i's at 7 row_body_start[i]),
 * M_c per diagonal block (49 b), so the work arrays are O(Σ_b p_b + nnz(Φ_c,q)), never O(NC²).
 * cg_position_packed and cg_dynamics_packed write Φ_q and M in their patterns (jp_start/jp_col,
 * mp_start/mp_col: relative_layout's relative_jacobian_pattern and relative_mass_pattern, by rows):
 * the band algebra (banded.c) reads those.  cg_position, cg_mass and cg_dynamics scatter them into the
 * dense row-major MR × NQ Φ_q and NQ × NQ M (reduced.c's dense algebra, Python).
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
    double qc[NC], T[NT1], qdc[NC], tdqd[NC];
    double phi[MC1], jac[NJC1], ang[NAC1], gamma[MC1], M[49 * NB], Q[NC];
    double row[NQ], MT[7 * PMAX1], jp[NJ1], mp[NM1];
} ws;

/* out[c] += (Φ_c,q[a] T)[c] for relative row i's Cartesian row a (packed at ws.jac + 7 row_body_start[i]),
 * over the blocks of its bodies and their path columns (T packed: body b's 7 × p_b block at
 * ws.T + 7 body_col_start[b]). */
static void row_times_T(int i, double *out)
{
    const double *row = ws.jac + 7 * row_body_start[i];
    for (int n = row_body_start[i]; n < row_body_start[i + 1]; ++n, row += 7) {
        const int b = row_body[n], c0 = body_col_start[b], p = body_col_start[b + 1] - c0;
        const double *t = ws.T + 7 * c0;
        for (int k = 0; k < 7; ++k) {
            const double a = row[k];
            if (a == 0.0) continue;
            for (int c = 0; c < p; ++c) out[body_col[c0 + c]] += a * t[k * p + c];
        }
    }
}

/* Φ_c,q[a] v for relative row i's Cartesian row a and a Cartesian vector v. */
static double row_dot(int i, const double *v)
{
    const double *row = ws.jac + 7 * row_body_start[i];
    double s = 0.0;
    for (int n = row_body_start[i]; n < row_body_start[i + 1]; ++n, row += 7)
        for (int k = 0; k < 7; ++k) s += row[k] * v[7 * row_body[n] + k];
    return s;
}

/* Φ, Φ_q packed (row i's entries jac[jp_start[i] …], columns jp_col[…]) and the unwrapped angles' raw
 * values at q. */
static void relative_position(const double *q, const double *par, const double *f, const double *u,
                              double *phi, double *jac, double *ang)
{
    cgt_position(q, ws.qc, ws.T);
    cgc_position(ws.qc, ws.qc, par, f, u, ws.phi, ws.jac, ws.ang);
    for (int i = 0; i < MR; ++i) {
        double *J = jac + jp_start[i];
        const int *col = jp_col + jp_start[i], n = jp_start[i + 1] - jp_start[i];
        const int a = row_a[i];
        if (row_kind[i] == ROW_CARTESIAN) {
            phi[i] = ws.phi[a];
            for (int e = 0; e < n; ++e) ws.row[col[e]] = 0.0;
            row_times_T(i, ws.row);
            for (int e = 0; e < n; ++e) J[e] = ws.row[col[e]];
        } else if (row_kind[i] == ROW_COORDINATE) {
            phi[i] = q[a] - f[row_b[i]];
            J[0] = 1.0;
        } else if (row_kind[i] == ROW_COUPLER) {
            const int s = cpl_col[row_b[i]];
            double p, dp, ddp;
            coupler_terms(row_b[i], par, q[s], &p, &dp, &ddp);
            phi[i] = q[a] - p;
            for (int e = 0; e < n; ++e) J[e] = (col[e] == a ? 1.0 : 0.0) - (col[e] == s ? dp : 0.0);
        } else {
            phi[i] = q[a] * q[a] + q[a + 1] * q[a + 1] + q[a + 2] * q[a + 2] + q[a + 3] * q[a + 3] - 1.0;
            for (int k = 0; k < 4; ++k) J[k] = 2.0 * q[a + k];
        }
    }
    for (int n = 0; n < NAR; ++n) ang[n] = ws.ang[ang_src[n]];
}

/* The dense MR × NQ Φ_q (row-major) of the packed one. */
static void dense_jacobian(const double *packed, double *jac)
{
    memset(jac, 0, sizeof(double) * MR * NQ);
    for (int i = 0; i < MR; ++i)
        for (int e = jp_start[i]; e < jp_start[i + 1]; ++e) jac[(size_t)i * NQ + jp_col[e]] = packed[e];
}

/* The dense NQ × NQ M (row-major) of the packed one. */
static void dense_mass(const double *packed, double *M)
{
    memset(M, 0, sizeof(double) * NQ * NQ);
    for (int k = 0; k < NQ; ++k)
        for (int e = mp_start[k]; e < mp_start[k + 1]; ++e) M[(size_t)k * NQ + mp_col[e]] = packed[e];
}

/* γ of the relative rows from ws (cgc_gamma and cgc_position at q_c, Ṫq̇ of cgt_velocity); f: f̈. */
static void relative_gamma(const double *q, const double *qd, const double *par, const double *f, double *gamma)
{
    for (int i = 0; i < MR; ++i) {
        const int a = row_a[i];
        if (row_kind[i] == ROW_CARTESIAN) {
            gamma[i] = ws.gamma[a] - row_dot(i, ws.tdqd);
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

/* M = Tᵀ M_c T + diag(a), packed (M's pattern: mp_start, mp_col), from ws (cgc_mass, T) and the
 * armature parameters: over the 7 × 7 block of every body and the columns of its path, the packed
 * index of each pair of them in mass_at. */
static void relative_mass(const double *par, double *M)
{
    memset(M, 0, sizeof(double) * NM1);
    for (int b = 0; b < NB; ++b) {
        const int c0 = body_col_start[b], p = body_col_start[b + 1] - c0, *at = mass_at + mass_at_start[b];
        const double *Mb = ws.M + 49 * b, *t = ws.T + 7 * c0;
        for (int i = 0; i < 7; ++i)            /* MT = M_c[block] T[block rows, path columns] (7 × p) */
            for (int j = 0; j < p; ++j) {
                double s = 0.0;
                for (int k = 0; k < 7; ++k) s += Mb[7 * i + k] * t[k * p + j];
                ws.MT[i * p + j] = s;
            }
        for (int i = 0; i < 7; ++i)
            for (int r = 0; r < p; ++r) {
                const double a = t[i * p + r];
                if (a != 0.0)
                    for (int c = 0; c < p; ++c) M[at[r * p + c]] += a * ws.MT[i * p + c];
            }
    }
#if ARMATURE >= 0
    for (int j = 0; j < NQ; ++j) M[mass_diag[j]] += par[ARMATURE + j];
#else
    (void)par;
#endif
}

/* Q = Tᵀ (Q_c − M_c Ṫq̇) from ws (cgc_forces, cgc_mass, T and Ṫq̇ of cgt_velocity). */
static void relative_forces(double *Q)
{
    for (int b = 0; b < NB; ++b) {
        const double *Mb = ws.M + 49 * b;
        for (int i = 0; i < 7; ++i) {
            double s = 0.0;
            for (int k = 0; k < 7; ++k) s += Mb[7 * i + k] * ws.tdqd[7 * b + k];
            ws.Q[7 * b + i] -= s;
        }
    }
    for (int j = 0; j < NQ; ++j) Q[j] = 0.0;
    for (int b = 0; b < NB; ++b) {
        const int c0 = body_col_start[b], p = body_col_start[b + 1] - c0;
        const double *t = ws.T + 7 * c0;
        for (int k = 0; k < 7; ++k) {
            const double a = ws.Q[7 * b + k];
            if (a == 0.0) continue;
            for (int c = 0; c < p; ++c) Q[body_col[c0 + c]] += a * t[k * p + c];
        }
    }
}

/* Φ and Φ_q in its pattern (jp_start, jp_col): the band algebra's kernel (banded.c). */
void cg_position_packed(const double *q, const double *qd, const double *par, const double *f, const double *u,
                        double *phi, double *jac, double *ang)
{
    (void)qd;
    relative_position(q, par, f, u, phi, jac, ang);
}

void cg_position(const double *q, const double *qd, const double *par, const double *f, const double *u,
                 double *phi, double *jac, double *ang)
{
    (void)qd;
    relative_position(q, par, f, u, phi, ws.jp, ang);
    dense_jacobian(ws.jp, jac);
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
    relative_mass(par, ws.mp);
    dense_mass(ws.mp, M);
}

void cg_forces(const double *q, const double *qd, const double *par, const double *f, const double *u, double *Q)
{
    cgt_velocity(q, qd, ws.qc, ws.T, ws.qdc, ws.tdqd);
    cgc_forces(ws.qc, ws.qdc, par, f, u, ws.Q);
    cgc_mass(ws.qc, ws.qdc, par, f, u, ws.M);
    relative_forces(Q);
}

/* cg_gamma (with the drivers' f̈ as fdd), cg_mass and cg_forces at one state with one evaluation of
 * the tree map and of each Cartesian kernel: what reduced.c's accelerations need (same numbers); M
 * packed in its pattern (mp_start, mp_col): the band algebra's kernel (banded.c). */
void cg_dynamics_packed(const double *q, const double *qd, const double *par, const double *f, const double *fdd,
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

/* cg_dynamics_packed with M dense (NQ × NQ, row-major): reduced.c's dense algebra. */
void cg_dynamics(const double *q, const double *qd, const double *par, const double *f, const double *fdd,
                 const double *u, double *gamma, double *M, double *Q)
{
    cg_dynamics_packed(q, qd, par, f, fdd, u, gamma, ws.mp, Q);
    dense_mass(ws.mp, M);
}

/* For the output rows (output_tree.c, after this file in its unit): the Cartesian Φ_c,q at the body
 * coordinates qc (the tree map's, cgt_edges), into ws.jac (packed: relative row i's entries per body of
 * row_body, 7 each, at 7 row_body_start[i]) … */
static void relative_cartesian_jacobian(const double *qc, const double *par, const double *f, const double *u)
{
    cgc_position(qc, qc, par, f, u, ws.phi, ws.jac, ws.ang);
}

/* … and W += s c_b of the Cartesian row of relative row i (a ROW_CARTESIAN row: a cut joint's, a driver's
 * on one) on body b: c_b = [g ; r_b × g + ½ G(p_b) g_p], g and g_p its entries in b's r and p, the
 * spatial gradient about the global origin (δΦ = c_bᵀ [δr_O ; δπ]; ω = 2 G(p) ṗ, Haug (1989) eq. 6.3.18).
 * A body not among the row's (row_body) has g = 0: nothing to add. */
static void relative_row_wrench(int i, int b, const double *qc, double s, double *W)
{
    int n = row_body_start[i];
    while (n < row_body_start[i + 1] && row_body[n] != b) ++n;
    if (n == row_body_start[i + 1]) return;
    const double *g = ws.jac + 7 * n, *r = qc + 7 * b, *p = qc + 7 * b + 3;
    const double G[12] = {-p[1], p[0], -p[3], p[2], -p[2], p[3], p[0], -p[1], -p[3], -p[2], p[1], p[0]};
    for (int k = 0; k < 3; ++k) {
        const double h = 0.5 * (G[4 * k] * g[3] + G[4 * k + 1] * g[4] + G[4 * k + 2] * g[5] + G[4 * k + 3] * g[6]);
        W[k] += s * g[k];
        W[3 + k] += s * (r[(k + 1) % 3] * g[(k + 2) % 3] - r[(k + 2) % 3] * g[(k + 1) % 3] + h);
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
