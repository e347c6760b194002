/* The tree's bodies in the state-vector form of Kim & You (1997) (MBS Studio, solver.codegen): what the
 * open-tree dynamics (articulated.c) and the output rows (output_tree.c) share, in the model library of
 * an open tree (after the layout of solver/codegen/build.py _articulated_layout) and of a relative system
 * with constraint rows (after relative.c, _relative_layout).
 *
 * Compiled after the model's generated code, which defines (solver/codegen/tree.py, derive.py):
 *   cgt_edges(q, q̇ → q_c, q̇_c, A, ω, B, D)     per body [r ; p], [ṙ ; ṗ], rotation, ω; per tree
 *                                                coordinate its column of B_e, per edge D_e
 *   cgc_loads(q_c, q̇_c, par, f, u → F, T)       per body applied force at the CM (gravity
 *                                                included) and torque, global axes
 * and the layout NB, NQ, NQ1 = max(1, NQ), tables edge_parent (parent edge, −1 at the ground),
 * edge_child (body), edge_col (first coordinate), edge_n (coordinates).  Edges are ordered parent
 * before child; a tree has one edge per body (floating bodies on free joints).
 *
 * All quantities are global, about the global origin (Kim & You (1997) §2): state velocity Ŷ = [ṙ − r̃ω ; ω],
 * body state mass and force (eqs. 11–12)
 *   M̂ = [m I, −m r̃ ; m r̃, J − m r̃ r̃],   Q̂ = [f ; r̃ f + T − ω̃ J ω],  f = F − m ω̃ ṙ,  J = A J' Aᵀ,
 * Ŷ_C = Ŷ_P + B_e q̇_e,  Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e (eqs. 6, 8), and the composite quantities
 * (eqs. 16–17) K_e = M̂_C + Σ_k K_k,  L_e = Q̂_C + Σ_k (L_k − K_k D_k) over the child edges k.
 * Work arrays are thread-local: one library may serve runs in several threads.
 */
/* the generated code (compiled in units of its own, while this one compiles beside the derivation) */
void cgt_edges(const double *q, const double *qd, double *qc, double *qdc, double *A, double *w, double *B, double *D);
void cgc_loads(const double *q, const double *qd, const double *par, const double *f, const double *u, double *F,
               double *T);

static _Thread_local struct {
    double qc[7 * NB], qdc[7 * NB], A[9 * NB], w[3 * NB], B[6 * NQ1], D[6 * NB], F[3 * NB], T[3 * NB];
    double K[36 * NB], L[6 * NB];        /* per edge: M̂, Q̂ of its child, then articulated or composite */
} tb;

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

/* Tree kinematics at (q, q̇), applied loads, and per edge K = M̂, L = Q̂ of its child body.  shift: the
 * state quantities of each subtree hanging from the ground about its root body's CM o instead of the
 * global origin (Ŷ' = [Ŷ_top − o × ω ; ω]: B' = [B_top − o × B_bot ; B_bot], D' likewise, M̂ and Q̂ with
 * r − o): the same q̈ (τ = B'ᵀR̂' = BᵀR̂), without the cancellation of m r̃r̃ against J when bodies
 * are far from the origin (a free body 1e8 body lengths away, an integrator's rejected stage). */
static void load_bodies(const double *q, const double *qd, const double *par, const double *f, const double *u,
                        int shift)
{
    cgt_edges(q, qd, tb.qc, tb.qdc, tb.A, tb.w, tb.B, tb.D);
    cgc_loads(tb.qc, tb.qdc, par, f, u, tb.F, tb.T);
    int root[NB];
    for (int e = 0; e < NB; ++e) {
        root[e] = edge_parent[e] < 0 ? e : root[edge_parent[e]];
        if (!shift) continue;
        const double *o = tb.qc + 7 * edge_child[root[e]];
        for (int j = 0; j < edge_n[e]; ++j) {
            double *Bj = tb.B + 6 * (edge_col[e] + j);
            const double x[3] = {o[1] * Bj[5] - o[2] * Bj[4], o[2] * Bj[3] - o[0] * Bj[5], o[0] * Bj[4] - o[1] * Bj[3]};
            for (int i = 0; i < 3; ++i) Bj[i] -= x[i];
        }
        double *De = tb.D + 6 * e;
        const double x[3] = {o[1] * De[5] - o[2] * De[4], o[2] * De[3] - o[0] * De[5], o[0] * De[4] - o[1] * De[3]};
        for (int i = 0; i < 3; ++i) De[i] -= x[i];
    }
    for (int e = 0; e < NB; ++e) {
        const int b = edge_child[e];
        const double *o = tb.qc + 7 * edge_child[root[e]], *qb = tb.qc + 7 * b;
        const double r[3] = {shift ? qb[0] - o[0] : qb[0], shift ? qb[1] - o[1] : qb[1], shift ? qb[2] - o[2] : qb[2]};
        const double *c = par + 7 * b, *v = tb.qdc + 7 * b, *A = tb.A + 9 * b, *w = tb.w + 3 * b;
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
        double *K = tb.K + 36 * e, *L = tb.L + 6 * e;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j) {
                double rr = 0.0;
                for (int k = 0; k < 3; ++k) rr += rt[3 * i + k] * rt[3 * k + j];
                K[6 * i + j] = i == j ? m : 0.0;
                K[6 * i + 3 + j] = -m * rt[3 * i + j];
                K[6 * (3 + i) + j] = m * rt[3 * i + j];
                K[6 * (3 + i) + 3 + j] = J[3 * i + j] - m * rr;
            }
        const double *F = tb.F + 3 * b, *T = tb.T + 3 * b;
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
        mul6(tb.K + 36 * e, tb.D + 6 * e, KD);
        for (int i = 0; i < 36; ++i) tb.K[36 * p + i] += tb.K[36 * e + i];
        for (int i = 0; i < 6; ++i) tb.L[6 * p + i] += tb.L[6 * e + i] - KD[i];
    }
}
