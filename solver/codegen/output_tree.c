/* Output rows of an open tree in compiled code (MBS Studio, solver.codegen.output): the post-processing
 * of RelativeSystem._post (solver/formulations/relative.py) at one consistent state (q, q̇, q̈), written by
 * the compiled step loop (segment.c's write_row, through cg_segment_t.k_output) straight into the
 * recorder's arrays.
 *
 * Compiled in the model library after articulated.c (same unit: its layout NB, NQ, edge_*, its
 * work space ws and cg_tree_accelerations).  A row is read from the articulated-body recursion at
 * its state — the one the step loop's solve has just evaluated there (cg_tree_output_solved), or
 * evaluated for the row (cg_tree_output, rows stored one at a time): the body states, B_e and D_e,
 * and the articulated K_e, L_e, all about each ground subtree's root CM o (load_bodies' shift).
 * Per output point:
 *
 *   body states     r, A, ṙ, ω from cgt_edges
 *   accelerations   Ẏ̂'_C = Ẏ̂'_P + B'_e q̈_e + D'_e (Kim & You (1997) eq. 8, about o),  α = Ẏ̂'_bot,
 *                   a = Ẏ̂'_top + α × (r − o) + ω × ṙ   (Ẏ̂_top = Ẏ̂'_top + o × α)
 *   reactions       R̂'_e = K_e Ẏ̂'_C − L_e, the articulated-body form of the joint's wrench on its child
 *                   (Featherstone (2008) §7.3; articulated.c's header: M̂_C Ẏ̂_C = Q̂_C + R̂_e − Σ_k R̂_k
 *                   with each child's R̂_k = K_k Ẏ̂_k − L_k), equal to the composite form of eq. 30;
 *                   on body_j: ±R̂_e (− for an inverted joint) = [f ; n_o], about the joint origin P
 *                   on body_j: [f ; n_o − (P − o) × f]   (eq. 31);
 *                   in joint axes (body_i's marker C_i): (A_i C_i)ᵀ f, (A_i C_i)ᵀ n_P
 *   energy          kinetic ½ m ṙᵀṙ + ½ ω'ᵀJ'ω' (ω' = Aᵀω), gravity −m gᵀr (spring and strain 0: models
 *                   with force elements are post-processed in Python, solver/codegen/output.py)
 *
 * No load_bodies or composite pass of its own: a row costs O(n) beside the solve at its point.
 * The joint tables (cg_output_t) come from the RelativeSystem (solver/codegen/output.py).
 */
typedef struct {
    const double *par, *f, *u;          /* the kernels' parameters, driver values, inputs (the solve's) */
    double gravity[3];
    int nj;
    const int *joint_edge;              /* per joint: its tree edge */
    const double *joint_sign;           /* +1, −1 for an inverted joint */
    const int *joint_bi, *joint_bj;     /* its bodies (−1: ground) */
    const double *joint_sj, *joint_Ci;  /* body_j's marker origin (body axes, 3), body_i's marker axes (3 × 3) */
    /* rows (row-major, one row after the other): nb × 3, nb × 9, …, nj × 3, 4 */
    double *r, *A, *v, *w, *a, *alpha, *RF, *RT, *RFj, *RTj, *energy;
} cg_output_t;

static _Thread_local struct {
    double Ydd[6 * NB], R[6 * NB];
} out_ws;

/* n = Aᵀ x (A 3 × 3 row-major). */
static void out_tmul3(const double *A, const double *x, double *n)
{
    for (int i = 0; i < 3; ++i) n[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

/* The output row `row` of the state (q, q̇, q̈) (module comment), from the work space of the
 * articulated-body recursion just evaluated at (q, q̇): body states, the shifted B_e, D_e and the
 * articulated K_e, L_e. */
static void tree_row(const cg_output_t *o, const double *qdd, int row)
{
    double kinetic = 0.0, gravity = 0.0;
    for (int b = 0; b < NB; ++b) {
        const double *c = o->par + 7 * b, *r = ws.qc + 7 * b, *v = ws.qdc + 7 * b, *A = ws.A + 9 * b;
        const double *w = ws.w + 3 * b;
        double wb[3];
        out_tmul3(A, w, wb);
        const double Jw[3] = {c[1] * wb[0] + c[4] * wb[1] + c[6] * wb[2], c[4] * wb[0] + c[2] * wb[1] + c[5] * wb[2],
                              c[6] * wb[0] + c[5] * wb[1] + c[3] * wb[2]};
        kinetic += 0.5 * (c[0] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + wb[0] * Jw[0] + wb[1] * Jw[1]
                          + wb[2] * Jw[2]);
        gravity -= c[0] * (o->gravity[0] * r[0] + o->gravity[1] * r[1] + o->gravity[2] * r[2]);
        const size_t at = ((size_t)row * NB + b) * 3;
        memcpy(o->r + at, r, 3 * sizeof(double));
        memcpy(o->v + at, v, 3 * sizeof(double));
        memcpy(o->w + at, w, 3 * sizeof(double));
        memcpy(o->A + 3 * at, A, 9 * sizeof(double));
    }
    double *en = o->energy + 4 * (size_t)row;
    en[0] = kinetic; en[1] = gravity; en[2] = 0.0; en[3] = 0.0;
    double *Ydd = out_ws.Ydd, *R = out_ws.R;
    int root[NB];
    for (int e = 0; e < NB; ++e) {                       /* eq. 8 and the reactions, parents first */
        const int p = edge_parent[e], c0 = edge_col[e], b = edge_child[e];
        root[e] = p < 0 ? e : root[p];
        double *Y = Ydd + 6 * e;
        for (int i = 0; i < 6; ++i) Y[i] = (p >= 0 ? Ydd[6 * p + i] : 0.0) + ws.D[6 * e + i];
        for (int j = 0; j < edge_n[e]; ++j)
            for (int i = 0; i < 6; ++i) Y[i] += ws.B[6 * (c0 + j) + i] * qdd[c0 + j];
        mul6(ws.K + 36 * e, Y, R + 6 * e);               /* R̂'_e = K_e Ẏ̂'_C − L_e about o */
        for (int i = 0; i < 6; ++i) R[6 * e + i] -= ws.L[6 * e + i];
        const double *r = ws.qc + 7 * b, *ro = ws.qc + 7 * edge_child[root[e]], *v = ws.qdc + 7 * b;
        const double *w = ws.w + 3 * b, d[3] = {r[0] - ro[0], r[1] - ro[1], r[2] - ro[2]};
        double *a = o->a + ((size_t)row * NB + b) * 3, *al = o->alpha + ((size_t)row * NB + b) * 3;
        a[0] = Y[0] + (Y[4] * d[2] - Y[5] * d[1]) + (w[1] * v[2] - w[2] * v[1]);
        a[1] = Y[1] + (Y[5] * d[0] - Y[3] * d[2]) + (w[2] * v[0] - w[0] * v[2]);
        a[2] = Y[2] + (Y[3] * d[1] - Y[4] * d[0]) + (w[0] * v[1] - w[1] * v[0]);
        al[0] = Y[3]; al[1] = Y[4]; al[2] = Y[5];
    }
    for (int k = 0; k < o->nj; ++k) {                    /* eq. 31 */
        const int e = o->joint_edge[k];
        const double *W = R + 6 * e, s = o->joint_sign[k], *sj = o->joint_sj + 3 * k;
        const double *ro = ws.qc + 7 * edge_child[root[e]];
        const int bi = o->joint_bi[k], bj = o->joint_bj[k];
        double P[3], F[3], T[3], Fr[9];
        for (int i = 0; i < 3; ++i) {                    /* P − o */
            P[i] = (bj >= 0 ? ws.qc[7 * bj + i] + ws.A[9 * bj + 3 * i] * sj[0] + ws.A[9 * bj + 3 * i + 1] * sj[1]
                                  + ws.A[9 * bj + 3 * i + 2] * sj[2]
                            : sj[i]) - ro[i];
            F[i] = s * W[i];
        }
        T[0] = s * W[3] - (P[1] * F[2] - P[2] * F[1]);
        T[1] = s * W[4] - (P[2] * F[0] - P[0] * F[2]);
        T[2] = s * W[5] - (P[0] * F[1] - P[1] * F[0]);
        const double *Ci = o->joint_Ci + 9 * k;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                Fr[3 * i + j] = bi >= 0 ? ws.A[9 * bi + 3 * i] * Ci[j] + ws.A[9 * bi + 3 * i + 1] * Ci[3 + j]
                                              + ws.A[9 * bi + 3 * i + 2] * Ci[6 + j]
                                        : Ci[3 * i + j];
        const size_t at = ((size_t)row * o->nj + k) * 3;
        memcpy(o->RF + at, F, 3 * sizeof(double));
        memcpy(o->RT + at, T, 3 * sizeof(double));
        out_tmul3(Fr, F, o->RFj + at);
        out_tmul3(Fr, T, o->RTj + at);
    }
}

/* The output row `row` of the state (q, q̇, q̈) at which the step loop's solve (reduced.c's
 * tree_reduced: cg_tree_accelerations) has just evaluated the recursion (segment.c's k_output). */
void cg_tree_output_solved(void *context, const double *q, const double *qd, const double *qdd, int row)
{
    (void)q; (void)qd;
    tree_row(context, qdd, row);
}

/* The output row `row` of any consistent state (q, q̇, q̈) (rows stored one at a time): the recursion
 * evaluated there first (no joint forces τ: the models covered have none).  Returns 1, or what
 * cg_tree_accelerations returned (0: singular, −1: not finite) with nothing written. */
int cg_tree_output(void *context, const double *q, const double *qd, const double *qdd, int row)
{
    const cg_output_t *o = context;
    static const double tau[NQ1] = {0.0};
    double scratch[NQ1];
    const int status = cg_tree_accelerations(q, qd, o->par, o->f, o->u, tau, scratch);
    if (status == 1) tree_row(o, qdd, row);
    return status;
}
