/* Output rows of the relative formulation in compiled code (MBS Studio, solver.codegen.output): the
 * post-processing of RelativeSystem._post (solver/formulations/relative.py) at one consistent state
 * (q, q̇, q̈, λ), written by the compiled step loop (segment.c's write_row, through
 * cg_segment_t.k_output) straight into the recorder's arrays.
 *
 * Compiled in the model library after tree_bodies.c (same unit: its layout NB, NQ, edge_*, body_edge,
 * its work space tb, load_bodies and composite): after articulated.c for an open tree, after relative.c
 * for a system with constraint rows (MR defined: cut joints, drivers, Euler parameters).  The body
 * state mass matrices M̂_b, forces Q̂_b (Kim & You (1997) eqs. 11–12, applied loads from the generated
 * cgc_loads) and the composite K_e, L_e (eqs. 16–17) are those of the tree at (q, q̇).  Per output point:
 *
 *   body states     r, A, ṙ, ω from cgt_edges
 *   cut joints      (relative.c) the constraint wrench of each cut joint's rows and of its drivers' on
 *                   body b of the joint, −Σ_i λ_i c_b,i with c_b,i = [g ; r_b × g + ½ G(p_b) g_p] the
 *                   spatial gradient of the Cartesian row (g, g_p: its entries in b's r and p;
 *                   Haug (1989) eq. 6.3.20: ½ G g_p is the torque about the CM), added to Q̂_b before the
 *                   composite L_e — as RelativeSystem._cut_wrenches does from the equation forms
 *   accelerations   Ẏ̂_C = Ẏ̂_P + B_e q̈_e + D_e (eq. 8),  α = Ẏ̂_bot,  a = Ẏ̂_top + α × r + ω × ṙ
 *   reactions       tree joints: R̂_e = −L_e + K_e Ẏ̂_C + Σ_{l ∈ subtree(e), l ≠ e} K_l B_l q̈_l   (eq. 30,
 *                   the subtree sums accumulated from the leaves), on body_j: ±R̂_e (− for an inverted
 *                   joint); cut joints: their wrench on body_j (−the one on body_i when body_j is the
 *                   ground); about the joint origin P on body_j: [f ; n_P] = [f ; n_O − P × f] (eq. 31);
 *                   in joint axes (body_i's marker C_i): (A_i C_i)ᵀ f, (A_i C_i)ᵀ n_P
 *   driver forces   on a tree coordinate c of edge e: B_e,cᵀ R̂_e (eq. 36) less the loads p'(q_c) λ of the
 *                   couplers led by c (relative.c); on a cut joint: −λ of its row
 *   armature        (ARMATURE ≥ 0) the rotors' loads ∓a θ̈ w on a tree joint's bodies in Q̂ (rotor_loads)
 *   energy          kinetic ½ m ṙᵀṙ + ½ ω'ᵀJ'ω' (ω' = Aᵀω) + Σ ½ a θ̇², gravity −m gᵀr (the force elements'
 *                   potential is added in Python, solver/codegen/output.py)
 *
 * The joint and driver tables (cg_output_t) come from the RelativeSystem (solver/codegen/output.py).
 */
typedef struct {
    const double *par, *f, *u;          /* the kernels' parameters, driver values, inputs (the solve's) */
    const double *lam;                  /* the multipliers (the solve's) */
    double gravity[3];
    int nj, nd;
    const int *joint_edge;              /* per joint: its tree edge, −1 for a cut joint */
    const double *joint_sign;           /* +1, −1 for an inverted joint */
    const int *joint_bi, *joint_bj;     /* its bodies (−1: ground) */
    const double *joint_sj, *joint_Ci;  /* body_j's marker origin (body axes, 3), body_i's marker axes (3 × 3) */
    const int *cut_start, *cut_rows;    /* per joint its constraint rows and its drivers' (cut_rows[cut_start[k] …]:
                                           a cut joint's; none for a tree joint) */
    const int *driver_col, *driver_edge, *driver_row;   /* per driver: its tree column and edge, or −1 and
                                                           its row */
    const double *edge_sout;            /* per edge: its joint's origin on the child (child's body axes, 3) */
    double *wrench;                     /* work: per joint its spatial wrench on body_j (nj × 6) */
    /* rows (row-major, one row after the other): nb × 3, nb × 9, …, nj × 3, nd, 4 */
    double *r, *A, *v, *w, *a, *alpha, *RF, *RT, *RFj, *RTj, *driver_force, *energy;
} cg_output_t;

static _Thread_local struct {
    double Ydd[6 * NB], KBq[6 * NB], below[6 * NB], R[6 * NB];
} out_ws;

/* n = Aᵀ x (A 3 × 3 row-major). */
static void out_tmul3(const double *A, const double *x, double *n)
{
    for (int i = 0; i < 3; ++i) n[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

#ifdef MR
/* The cut joints' constraint wrenches (module comment) into o->wrench, each side's added to the Q̂ of its
 * body (tb.L of the body's edge, before composite). */
static void cut_wrenches(const cg_output_t *o)
{
    relative_cartesian_jacobian(tb.qc, o->par, o->f, o->u);
    for (int k = 0; k < o->nj; ++k) {
        if (o->joint_edge[k] >= 0) continue;
        const int ends[2] = {o->joint_bi[k], o->joint_bj[k]};
        double W[2][6] = {{0.0}};
        for (int side = 0; side < 2; ++side) {
            const int b = ends[side];
            if (b < 0) continue;
            for (int n = o->cut_start[k]; n < o->cut_start[k + 1]; ++n)
                relative_row_wrench(o->cut_rows[n], b, tb.qc, -o->lam[o->cut_rows[n]], W[side]);
            for (int i = 0; i < 6; ++i) tb.L[6 * body_edge[b] + i] += W[side][i];
        }
        for (int i = 0; i < 6; ++i) o->wrench[6 * k + i] = ends[1] >= 0 ? W[1][i] : -W[0][i];
    }
}
#endif

#if ARMATURE >= 0
/* Joint armature a (par[ARMATURE + c], solver.formulations.armature): the rotors' inertial loads −a θ̈ w on
 * the child, +a θ̈ w on the parent (w = [0 ; z] along a revolute's axis z, [u ; o × u] along a prismatic's
 * u at its origin o: RelativeSystem._add_rotor_loads), added to Q̂ before composite, so the reactions
 * are the joint's alone and a driver's force includes a θ̈; returns the rotors' energy Σ ½ a θ̇². */
static double rotor_loads(const cg_output_t *o, const double *qd, const double *qdd)
{
    double energy = 0.0;
    for (int e = 0; e < NB; ++e)
        for (int j = 0; j < edge_n[e]; ++j) {
            const int c = edge_col[e] + j, p = edge_parent[e], b = edge_child[e];
            const double a = o->par[ARMATURE + c], *B = tb.B + 6 * c;
            if (a == 0.0) continue;
            energy += 0.5 * a * qd[c] * qd[c];
            double w[6] = {0.0, 0.0, 0.0, B[3], B[4], B[5]};
            if (B[3] == 0.0 && B[4] == 0.0 && B[5] == 0.0) {
                const double *A = tb.A + 9 * b, *s = o->edge_sout + 3 * e, *r = tb.qc + 7 * b;
                double x[3];
                for (int i = 0; i < 3; ++i) x[i] = r[i] + A[3 * i] * s[0] + A[3 * i + 1] * s[1] + A[3 * i + 2] * s[2];
                w[0] = B[0]; w[1] = B[1]; w[2] = B[2];
                w[3] = x[1] * B[2] - x[2] * B[1];
                w[4] = x[2] * B[0] - x[0] * B[2];
                w[5] = x[0] * B[1] - x[1] * B[0];
            }
            for (int i = 0; i < 6; ++i) {
                tb.L[6 * e + i] -= a * qdd[c] * w[i];
                if (p >= 0) tb.L[6 * p + i] += a * qdd[c] * w[i];
            }
        }
    return energy;
}
#endif

/* The output row `row` of the state (q, q̇, q̈) with the context's λ (module comment). */
void cg_tree_output(void *context, const double *q, const double *qd, const double *qdd, int row)
{
    const cg_output_t *o = context;
    load_bodies(q, qd, o->par, o->f, o->u, 0);
    double kinetic = 0.0, gravity = 0.0;
    for (int b = 0; b < NB; ++b) {
        const double *c = o->par + 7 * b, *r = tb.qc + 7 * b, *v = tb.qdc + 7 * b, *A = tb.A + 9 * b;
        const double *w = tb.w + 3 * b;
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
#ifdef MR
    cut_wrenches(o);
#endif
#if ARMATURE >= 0
    en[0] += rotor_loads(o, qd, qdd);
#endif
    composite();
    double *Ydd = out_ws.Ydd, *KBq = out_ws.KBq, *below = out_ws.below, *R = out_ws.R;
    for (int e = 0; e < NB; ++e) {                       /* eq. 8, parents first */
        const int p = edge_parent[e], c0 = edge_col[e];
        double Bq[6] = {0.0};
        for (int j = 0; j < edge_n[e]; ++j)
            for (int i = 0; i < 6; ++i) Bq[i] += tb.B[6 * (c0 + j) + i] * qdd[c0 + j];
        for (int i = 0; i < 6; ++i) {
            Ydd[6 * e + i] = (p >= 0 ? Ydd[6 * p + i] : 0.0) + Bq[i] + tb.D[6 * e + i];
            below[6 * e + i] = 0.0;
        }
        mul6(tb.K + 36 * e, Bq, KBq + 6 * e);
    }
    for (int e = NB - 1; e >= 0; --e) {                  /* eq. 30, leaves first */
        const int p = edge_parent[e];
        double KY[6];
        mul6(tb.K + 36 * e, Ydd + 6 * e, KY);
        for (int i = 0; i < 6; ++i) R[6 * e + i] = -tb.L[6 * e + i] + KY[i] + below[6 * e + i];
        if (p >= 0) for (int i = 0; i < 6; ++i) below[6 * p + i] += KBq[6 * e + i] + below[6 * e + i];
        const int b = edge_child[e];
        const double *Y = Ydd + 6 * e, *r = tb.qc + 7 * b, *v = tb.qdc + 7 * b, *w = tb.w + 3 * b;
        double *a = o->a + ((size_t)row * NB + b) * 3, *al = o->alpha + ((size_t)row * NB + b) * 3;
        a[0] = Y[0] + (Y[4] * r[2] - Y[5] * r[1]) + (w[1] * v[2] - w[2] * v[1]);
        a[1] = Y[1] + (Y[5] * r[0] - Y[3] * r[2]) + (w[2] * v[0] - w[0] * v[2]);
        a[2] = Y[2] + (Y[3] * r[1] - Y[4] * r[0]) + (w[0] * v[1] - w[1] * v[0]);
        al[0] = Y[3]; al[1] = Y[4]; al[2] = Y[5];
    }
    for (int k = 0; k < o->nj; ++k) {                    /* eq. 31 */
        const int edge = o->joint_edge[k], bi = o->joint_bi[k], bj = o->joint_bj[k];
        double *W = o->wrench + 6 * k;
        if (edge >= 0) for (int i = 0; i < 6; ++i) W[i] = o->joint_sign[k] * R[6 * edge + i];
        const double *sj = o->joint_sj + 3 * k;
        double P[3], T[3], Fr[9];
        for (int i = 0; i < 3; ++i)
            P[i] = bj >= 0 ? tb.qc[7 * bj + i] + tb.A[9 * bj + 3 * i] * sj[0] + tb.A[9 * bj + 3 * i + 1] * sj[1]
                                 + tb.A[9 * bj + 3 * i + 2] * sj[2]
                           : sj[i];
        T[0] = W[3] - (P[1] * W[2] - P[2] * W[1]);
        T[1] = W[4] - (P[2] * W[0] - P[0] * W[2]);
        T[2] = W[5] - (P[0] * W[1] - P[1] * W[0]);
        const double *Ci = o->joint_Ci + 9 * k;
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 3; ++j)
                Fr[3 * i + j] = bi >= 0 ? tb.A[9 * bi + 3 * i] * Ci[j] + tb.A[9 * bi + 3 * i + 1] * Ci[3 + j]
                                              + tb.A[9 * bi + 3 * i + 2] * Ci[6 + j]
                                        : Ci[3 * i + j];
        const size_t at = ((size_t)row * o->nj + k) * 3;
        memcpy(o->RF + at, W, 3 * sizeof(double));
        memcpy(o->RT + at, T, 3 * sizeof(double));
        out_tmul3(Fr, W, o->RFj + at);
        out_tmul3(Fr, T, o->RTj + at);
    }
    for (int d = 0; d < o->nd; ++d) {                    /* eq. 36; −λ on a cut joint */
        const int col = o->driver_col[d];
        double force = col >= 0 ? dot6(tb.B + 6 * col, R + 6 * o->driver_edge[d]) : -o->lam[o->driver_row[d]];
#ifdef MR
        if (col >= 0) force -= relative_coupler_loads(col, q, o->par, o->lam);
#endif
        o->driver_force[(size_t)row * o->nd + d] = force;
    }
}
