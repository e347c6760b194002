/* Output rows of the Cartesian formulation in compiled code (MBS Studio, solver.codegen.output): the
 * post-processing of CartesianSystem.postprocess_batch (solver/formulations/cartesian.py) at one
 * consistent state (q, q̇, q̈, λ) with Φ_q there, written by the compiled step loop (segment.c's
 * write_row, through cg_segment_t.k_output) straight into the recorder's arrays.
 *
 * In the runtime library (after segment.c; the model's data comes in cg_cartesian_output_t, filled by
 * solver/codegen/output.py).  Per body b, q_b = [r ; p] (CM, unit Euler parameters):
 *
 *   body states     r, A(p), ṙ, ω = A ω' with ω' = 2 L(p) ṗ (Haug (1989) eqs. 6.3.18, 6.1.37)
 *   accelerations   a = r̈,  α = A 2 L(p) p̈   (L̇ ṗ = 0)
 *   reactions       on body_j from body_i at the joint origin P (global axes) from the body-block
 *                   constraint forces g = −Φ_q[rows, b]ᵀ λ[rows] of the joint's rows and its drivers' on
 *                   b = body_j (body_i when body_j is the ground, sign −1): f = g_r, torque about the CM
 *                   A ½ L(p) g_p, moved to P: n_P = n + (r_b − P) × f; in joint axes (A_i C_i)ᵀ f,
 *                   (A_i C_i)ᵀ n_P
 *   driver forces   −λ of the driver rows
 *   energy          kinetic ½ m ṙᵀṙ + ½ ω'ᵀJ'ω', gravity −m gᵀr (spring and strain 0: models with force
 *                   elements or flexible bodies are post-processed in Python, solver/codegen/output.py)
 */
typedef struct {
    int nb, nj, nd;
    double gravity[3];
    const double *mass, *inertia;       /* nb, nb × 9 (body axes, about the CM) */
    const double *lam, *jac;            /* λ (m) and Φ_q at the state, dense row-major or packed … */
    const int *jac_at;                  /* … Φ_q(rows[n], 7 side + c) at jac[jac_at[7 n + c]] (−1: zero) */
    const int *joint_bi, *joint_bj;     /* its bodies (−1: ground) */
    const double *joint_sj, *joint_Ci;  /* body_j's marker origin (body axes, 3), body_i's marker axes (3 × 3) */
    const int *row_start, *rows;        /* per joint its constraint rows and its drivers' (rows[row_start[k] …]) */
    const int *driver_row;              /* nd */
    /* rows (row-major, one row after the other): nb × 3, nb × 9, …, nj × 3, nd, 4 */
    double *r, *A, *v, *w, *a, *alpha, *RF, *RT, *RFj, *RTj, *driver_force, *energy;
} cg_cartesian_output_t;

/* y = c L x (L 3 × 4); A(p), L(p), A x and Aᵀ x are contact.c's (earlier in the runtime unit) */
static void co_L(const double *L, const double *x, double c, double *y)
{
    for (int i = 0; i < 3; ++i) y[i] = c * (L[4 * i] * x[0] + L[4 * i + 1] * x[1] + L[4 * i + 2] * x[2] + L[4 * i + 3] * x[3]);
}


/* The output row `row` of the state (q, q̇, q̈) with the context's λ and Φ_q (module comment). */
void cg_cartesian_output(void *context, const double *q, const double *qd, const double *qdd, int row)
{
    const cg_cartesian_output_t *o = context;
    const int nb = o->nb, nj = o->nj;
    double kinetic = 0.0, gravity = 0.0;
    double *rows_A = o->A + (size_t)row * nb * 9;
    for (int b = 0; b < nb; ++b) {
        const double *x = q + 7 * b, *xd = qd + 7 * b, *xdd = qdd + 7 * b, *J = o->inertia + 9 * b;
        const size_t at = ((size_t)row * nb + b) * 3;
        double *A = rows_A + 9 * b, L[12], wb[3], ab[3], Jw[3];
        cc_euler_frame(x + 3, A, L);
        co_L(L, xd + 3, 2.0, wb);
        co_L(L, xdd + 3, 2.0, ab);
        cc_mul(A, wb, o->w + at);
        cc_mul(A, ab, o->alpha + at);
        cc_mul(J, wb, Jw);
        const double m = o->mass[b];
        kinetic += 0.5 * (m * (xd[0] * xd[0] + xd[1] * xd[1] + xd[2] * xd[2]) + wb[0] * Jw[0] + wb[1] * Jw[1]
                          + wb[2] * Jw[2]);
        gravity -= m * (o->gravity[0] * x[0] + o->gravity[1] * x[1] + o->gravity[2] * x[2]);
        memcpy(o->r + at, x, 3 * sizeof(double));
        memcpy(o->v + at, xd, 3 * sizeof(double));
        memcpy(o->a + at, xdd, 3 * sizeof(double));
    }
    double *en = o->energy + 4 * (size_t)row;
    en[0] = kinetic; en[1] = gravity; en[2] = 0.0; en[3] = 0.0;
    for (int k = 0; k < nj; ++k) {
        const int bi = o->joint_bi[k], bj = o->joint_bj[k], side = bj >= 0 ? bj : bi, c0 = 7 * side;
        const double sign = bj >= 0 ? 1.0 : -1.0, *sj = o->joint_sj + 3 * k, *Ci = o->joint_Ci + 9 * k;
        double g[7] = {0.0}, L[12], As[9], n[3], P[3], F[3], T[3], Fr[9];
        for (int n_ = o->row_start[k]; n_ < o->row_start[k + 1]; ++n_) {
            const int i = o->rows[n_];
            for (int c = 0; c < 7; ++c) {
                const int at = o->jac_at[7 * n_ + c];
                if (at >= 0) g[c] -= o->jac[at] * o->lam[i];
            }
        }
        cc_euler_frame(q + c0 + 3, As, L);
        double half[3];
        co_L(L, g + 3, 0.5, half);
        cc_mul(As, half, n);
        if (bj >= 0) {
            cc_mul(rows_A + 9 * bj, sj, P);
            for (int i = 0; i < 3; ++i) P[i] += q[7 * bj + i];
        } else {
            memcpy(P, sj, sizeof P);
        }
        const double d[3] = {q[c0] - P[0], q[c0 + 1] - P[1], q[c0 + 2] - P[2]};
        T[0] = n[0] + d[1] * g[2] - d[2] * g[1];
        T[1] = n[1] + d[2] * g[0] - d[0] * g[2];
        T[2] = n[2] + d[0] * g[1] - d[1] * g[0];
        for (int i = 0; i < 3; ++i) { F[i] = sign * g[i]; T[i] *= sign; }
        if (bi >= 0) {
            const double *Ai = rows_A + 9 * bi;
            for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j)
                    Fr[3 * i + j] = Ai[3 * i] * Ci[j] + Ai[3 * i + 1] * Ci[3 + j] + Ai[3 * i + 2] * Ci[6 + j];
        } else {
            memcpy(Fr, Ci, sizeof Fr);
        }
        const size_t at = ((size_t)row * nj + k) * 3;
        memcpy(o->RF + at, F, sizeof F);
        memcpy(o->RT + at, T, sizeof T);
        cc_tmul(Fr, F, o->RFj + at);
        cc_tmul(Fr, T, o->RTj + at);
    }
    for (int d = 0; d < o->nd; ++d) o->driver_force[(size_t)row * o->nd + d] = -o->lam[o->driver_row[d]];
}
