/* FMI 2.0 Co-Simulation slave of one MBS Studio model (solver.fmu) — fixed part.
 *
 * Compiled in one translation unit after the model's generated kernels, reduced.c (cg_reduced:
 * Newton on the dependent coordinates, q̇, q̈, λ — Kim & Yoo (1997) eqs. 7, 8, 13; its kernel
 * pointers set to the kernels here, reset_instance), dopri.c, segment.c and the model's layout written by solver/fmu/source.py (sizes, tables, time functions, the variable table).
 *
 * Integrator: Dormand–Prince 5(4) of dopri.c (in the runtime source, shared with simulate's compiled
 * step loop: Hairer's error estimate and PI step-size control; the FMU steps to the communication
 * points and needs no dense output) on the
 * independent coordinates y = [z, ż] of a tangent-space partition (Kim & Yoo (1997) QR partition:
 * Φ_q[rows]ᵀ = [U V] R, q = q_ref + V z + U w).  A partition is made at the consistent state (q_ref = q,
 * z = 0, ż = Vᵀq̇, z̈ = Vᵀq̈ since [U V] is orthonormal) after initialization, a parameter or input
 * change, and when the step loops' renewal rule (solver.analysis.step_rules, as simulate's loops:
 * Partition.degraded's cheap tests, segment.c's SEG_QUALITY) says so after an accepted step:
 * σ_min(Φ_q[rows] U) below MBS_REPARTITION_RATIO times its value at partition time, relative to the
 * smallest row norm of Φ_q[rows], or ‖∂q/∂z‖_F above MBS_AMPLIFICATION_GROWTH times its value then
 * (both from the last solve of the step, at its end); otherwise the partition is kept and y = [z, ż]
 * = [Vᵀ(q − q_ref), Vᵀq̇] goes on.  A step whose Newton iteration fails is rejected and retried with a
 * quarter of the step.  Internal
 * steps end exactly on the communication points.  Unwrapped joint angles follow the step loops' one
 * branch rule (solver.formulations.branches.py, reduced.c's cg_branch_*: the reference is the prediction
 * from the accepted state, a departure beyond MBS_BRANCH_GUARD refuses the step, retried
 * MBS_BRANCH_SHRINK times shorter, and an accepted step caps the next).
 */
#include <stdio.h>
#include <stdarg.h>
#include "fmi2Functions.h"

#define DOF (NQ - NR)
#define NQ1 (NQ > 0 ? NQ : 1)
#define M1 (NM > 0 ? NM : 1)
#define NR1 (NR > 0 ? NR : 1)
#define DOF1 (DOF > 0 ? DOF : 1)
#define NY1 (2 * DOF1)
#define NU1 (NU > 0 ? NU : 1)
#define NA1 (NA > 0 ? NA : 1)
#define NDRV1 (NDRV > 0 ? NDRV : 1)
#define NIN1 (NIN > 0 ? NIN : 1)
#define NJ1 (NJ > 0 ? NJ : 1)
#define NRED1 (NRED > 0 ? NRED : 1)
#define MIN_STEP 1e-12
#define MAX_REJECTS 60

enum { PHASE_INSTANTIATED, PHASE_INIT, PHASE_STEPPING, PHASE_TERMINATED, PHASE_ERROR };

typedef struct {
    cg_reduced_t s;
    double U[NQ1 * NR1], V[NQ1 * DOF1], q_ref[NQ1], ang_state[NA1], f[NDRV1], fd[NDRV1], fdd[NDRV1];
    double u[NU1], Qx[NQ1], q[NQ1], qd[NQ1], qdd[NQ1], zdd[DOF1], lam[M1];
    double phi[M1], jac[M1 * NQ1], ang[NA1], gamma[M1], Mass[NQ1 * NQ1], Q[NQ1], err, sigma, amplification;
    int rows[NR1], red_rows[NRED1], ang_row[NA1], drv_row[NDRV1];
    double ang_coef[NA1];
    /* the accepted state: positions, velocities, accelerations, multipliers, unwrapped angles */
    double t, xq[NQ1], xqd[NQ1], xqdd[NQ1], xlam[M1], xang[NA1], xrate[NA1];   /* … and their rates */
    double RF[3 * NJ1], RT[3 * NJ1];
    double qr_A[NQ1 * NR1], qr_Q[NQ1 * NQ1], qr_beta[NR1];   /* repartition() work space */
    double par[NPAR1], in[NIN1], din[NIN1], d2in[NIN1], t_in;   /* inputs: value, 1st, 2nd derivative at t_in */
    double rtol, atol, h;
    dp_t dp;
    double dp_memory[DP_MEMORY(NY1)];
    double quality_ref, amplification_ref;   /* σ_min(Φ_q[rows] U) / smallest row norm and ‖∂q/∂z‖_F at partition time */
    int stale;                 /* the partition degraded at the accepted state: a new one before the next step */
    long steps, rejected, failed, rhs_calls, partitions;   /* statistics, logged by fmi2Terminate when logging is on */
    int phase, dirty;          /* dirty: a parameter or input was set since the last step */
    fmi2CallbackFunctions cb;
    char *name;
    int logging;
} Instance;

/* A(p) of unit Euler parameters, row-major (solver.math.rotations.rotation_matrix) */
static void rotation(const double *p, double *A)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3; A[1] = 2 * (e1 * e2 - e0 * e3); A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3); A[4] = e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2); A[7] = 2 * (e2 * e3 + e0 * e1); A[8] = e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3;
}

static void log_error(Instance *I, const char *fmt, ...)
{
    char text[512];
    va_list args;
    va_start(args, fmt);
    vsnprintf(text, sizeof text, fmt, args);
    va_end(args);
    if (I->cb.logger) I->cb.logger(I->cb.componentEnvironment, I->name, fmi2Error, "logError", "%s", text);
}

/* Reactions of every joint on body_j from body_i at the joint origin P (global axes), from the
 * body-block constraint forces g = −Φ_qᵀλ of one of its bodies (the joint's rows and its drivers'):
 * F = g_r, torque about the CM (a flexible body's frame origin) A ½L(p) g_p moved to P —
 * CartesianSystem.postprocess_batch; on a flexible body_j P is the deformed node,
 * r_j + A_j (ℓ₀ + Φ_node a) (CartesianSystem._flexible_reaction). */
static void mbs_reactions(const double *q, const double *jac, const double *lam, double *RF, double *RT)
{
    for (int j = 0; j < NJ; ++j) {
        const int side = mbs_joint_side[j], bj = mbs_joint_bj[j], o = 7 * side;
        const double sign = side == bj ? 1.0 : -1.0;
        double g[7] = {0.0};
        for (int n = mbs_joint_row0[j]; n < mbs_joint_row0[j + 1]; ++n) {
            const int row = mbs_joint_rows[n];
            for (int c = 0; c < 7; ++c) g[c] -= jac[(size_t)row * NQ + o + c] * lam[row];
        }
        const double *p = q + o + 3, *sj = mbs_joint_sj + 3 * j;
        double A[9], Lg[3], T[3], P[3];
        rotation(p, A);
        Lg[0] = 0.5 * (-p[1] * g[3] + p[0] * g[4] + p[3] * g[5] - p[2] * g[6]);
        Lg[1] = 0.5 * (-p[2] * g[3] - p[3] * g[4] + p[0] * g[5] + p[1] * g[6]);
        Lg[2] = 0.5 * (-p[3] * g[3] + p[2] * g[4] - p[1] * g[5] + p[0] * g[6]);
        if (bj >= 0) {
            double Aj[9], l[3] = {sj[0], sj[1], sj[2]};
            const int nk = (mbs_joint_phi0[j + 1] - mbs_joint_phi0[j]) / 3;
            const double *phi = mbs_joint_phi + mbs_joint_phi0[j], *a = q + mbs_joint_ao[j];
            for (int i = 0; i < 3; ++i)
                for (int m = 0; m < nk; ++m) l[i] += phi[i * nk + m] * a[m];
            rotation(q + 7 * bj + 3, Aj);
            for (int i = 0; i < 3; ++i)
                P[i] = q[7 * bj + i] + Aj[3 * i] * l[0] + Aj[3 * i + 1] * l[1] + Aj[3 * i + 2] * l[2];
        } else {
            for (int i = 0; i < 3; ++i) P[i] = sj[i];
        }
        const double d[3] = {q[o] - P[0], q[o + 1] - P[1], q[o + 2] - P[2]};
        for (int i = 0; i < 3; ++i) T[i] = A[3 * i] * Lg[0] + A[3 * i + 1] * Lg[1] + A[3 * i + 2] * Lg[2];
        T[0] += d[1] * g[2] - d[2] * g[1];
        T[1] += d[2] * g[0] - d[0] * g[2];
        T[2] += d[0] * g[1] - d[1] * g[0];
        for (int i = 0; i < 3; ++i) { RF[3 * j + i] = sign * g[i]; RT[3 * j + i] = sign * T[i]; }
    }
}

/* component c of the angular velocity ω = A ω', ω' = 2 L(p) ṗ of body b (global axes) */
static double mbs_angular_velocity(const double *q, const double *qd, int b, int c)
{
    const double *p = q + 7 * b + 3, *pd = qd + 7 * b + 3;
    double A[9];
    rotation(p, A);
    const double w[3] = {2.0 * (-p[1] * pd[0] + p[0] * pd[1] + p[3] * pd[2] - p[2] * pd[3]),
                         2.0 * (-p[2] * pd[0] - p[3] * pd[1] + p[0] * pd[2] + p[1] * pd[3]),
                         2.0 * (-p[3] * pd[0] + p[2] * pd[1] - p[1] * pd[2] + p[0] * pd[3])};
    return A[3 * c] * w[0] + A[3 * c + 1] * w[1] + A[3 * c + 2] * w[2];
}

/* time functions and inputs at t: driver f, ḟ, f̈ and the kernels' u (time functions, or FMI inputs
 * u = value + u̇ τ + ½ ü τ², τ = t − t_in, with the derivatives set by fmi2SetRealInputDerivatives) */
static void time_inputs(Instance *I, double t)
{
    mbs_drivers(t, I->in, I->din, I->d2in, I->t_in, I->f, I->fd, I->fdd);
    mbs_inputs(t, I->in, I->din, I->d2in, I->t_in, I->u);
}

/* Householder QR of Φ_q[rows]ᵀ (NQ × NR) at the current Jacobian: U = first NR columns of the
 * orthogonal factor, V the other DOF (the tangent space); q_ref = the current q. */
static void repartition(Instance *I)
{
    static const int nq = NQ, r = NR;
    double *A = I->qr_A, *Qf = I->qr_Q, *beta = I->qr_beta;
    for (int k = 0; k < nq; ++k)
        for (int i = 0; i < r; ++i) A[k * r + i] = I->jac[(size_t)I->rows[i] * nq + k];
    for (int c = 0; c < r; ++c) {           /* reflector v (stored below the diagonal, v_c = 1) */
        double norm = 0.0;
        for (int k = c; k < nq; ++k) norm += A[k * r + c] * A[k * r + c];
        norm = sqrt(norm);
        beta[c] = 0.0;
        if (norm == 0.0) continue;
        const double alpha = A[c * r + c] > 0 ? -norm : norm;
        const double v0 = A[c * r + c] - alpha;
        for (int k = c + 1; k < nq; ++k) A[k * r + c] /= v0;
        A[c * r + c] = alpha;
        double vv = 1.0;
        for (int k = c + 1; k < nq; ++k) vv += A[k * r + c] * A[k * r + c];
        beta[c] = 2.0 / vv;
        for (int j = c + 1; j < r; ++j) {
            double s = A[c * r + j];
            for (int k = c + 1; k < nq; ++k) s += A[k * r + c] * A[k * r + j];
            s *= beta[c];
            A[c * r + j] -= s;
            for (int k = c + 1; k < nq; ++k) A[k * r + j] -= s * A[k * r + c];
        }
    }
    for (int i = 0; i < nq; ++i)            /* Qf = H_0 … H_{r-1} I */
        for (int j = 0; j < nq; ++j) Qf[i * nq + j] = i == j ? 1.0 : 0.0;
    for (int c = r - 1; c >= 0; --c) {
        if (beta[c] == 0.0) continue;
        for (int j = 0; j < nq; ++j) {
            double s = Qf[c * nq + j];
            for (int k = c + 1; k < nq; ++k) s += A[k * r + c] * Qf[k * nq + j];
            s *= beta[c];
            Qf[c * nq + j] -= s;
            for (int k = c + 1; k < nq; ++k) Qf[k * nq + j] -= s * A[k * r + c];
        }
    }
    double scale = 1.0;                     /* partition.newton_tolerance(position_tolerance(atol), q, Φ_q) */
    for (int k = 0; k < nq; ++k) {
        for (int i = 0; i < r; ++i) I->U[k * r + i] = Qf[k * nq + i];
        for (int c = 0; c < DOF; ++c) I->V[k * DOF + c] = Qf[k * nq + r + c];
        I->q_ref[k] = I->q[k];
        scale = fmax(scale, fabs(I->q[k]));
    }
    for (size_t k = 0; k < (size_t)NM * nq; ++k) scale = fmax(scale, fabs(I->jac[k]));
    I->s.tol = fmax(fmin(MBS_POSITION_TOL, MBS_POSITION_FRACTION * I->atol), MBS_ROUNDOFF * scale);
}

/* [ż; z̈] at (t, y) by cg_reduced (level 3: λ too, the accepted state's reactions); 0 on success, else a
 * CG_* status */
static int rhs(Instance *I, double t, const double *y, double *dy)
{
    ++I->rhs_calls;
    time_inputs(I, t);
    cg_branch_predict(&I->s, I->xang, I->xrate, t - I->t);
    const int status = cg_reduced(&I->s, y, 3);
    if (status != CG_OK) return status ? status : -1;
    if (cg_branch_departure(&I->s, I->xang, I->xrate, t - I->t) > MBS_BRANCH_GUARD) return CG_BRANCH;
    for (int c = 0; c < DOF; ++c) { dy[c] = y[DOF + c]; dy[DOF + c] = I->zdd[c]; }
    return 0;
}

/* y = [Vᵀ(q − q_ref), Vᵀ q̇] and its rate [Vᵀq̇, Vᵀq̈] of the accepted state (z = 0 in a fresh partition) */
static void project(const Instance *I, double *y, double *dy)
{
    for (int c = 0; c < DOF; ++c) {
        double z = 0.0, v = 0.0, a = 0.0;
        for (int k = 0; k < NQ; ++k) {
            const double vk = I->V[k * DOF + c];
            z += vk * (I->xq[k] - I->q_ref[k]); v += vk * I->xqd[k]; a += vk * I->xqdd[k];
        }
        y[c] = z; y[DOF + c] = v; dy[c] = v; dy[DOF + c] = a;
    }
}

/* The partition has degraded at the state of the last solve (module comment; segment.c's SEG_QUALITY). */
static int degraded(Instance *I)
{
    return I->sigma < MBS_REPARTITION_RATIO * I->quality_ref * smallest_row_norm(&I->s)
        || I->amplification > MBS_AMPLIFICATION_GROWTH * I->amplification_ref;
}

/* The partition's references from the solve at its own state (just made: z = 0). */
static void reference(Instance *I)
{
    const double rows = smallest_row_norm(&I->s);
    I->quality_ref = rows > 0.0 ? I->sigma / rows : 0.0;
    I->amplification_ref = I->amplification;
    I->stale = 0;
    ++I->partitions;
}

static void restore(Instance *I)
{
    memcpy(I->q, I->xq, sizeof I->q);
    memcpy(I->ang_state, I->xang, sizeof I->ang_state);
}

static void accept(Instance *I, double t)
{
    const double dt = t - I->t, departure = cg_branch_departure(&I->s, I->xang, I->xrate, dt);
    cg_branch_accept(&I->s, I->xang, I->xrate, dt);
    if (dt > 0.0) I->h = fmin(I->h, cg_branch_step_cap(dt, departure, MBS_BRANCH_GUARD));
    I->t = t;
    memcpy(I->xq, I->q, sizeof I->q);
    memcpy(I->xqd, I->qd, sizeof I->qd);
    memcpy(I->xqdd, I->qdd, sizeof I->qdd);
    memcpy(I->xlam, I->lam, sizeof I->lam);
    mbs_reactions(I->xq, I->jac, I->xlam, I->RF, I->RT);
}

/* The consistent q̈, λ of the accepted state at t with the current parameters and inputs (and a
 * fresh partition there): after initialization, and at a communication point after parameters or
 * inputs were set. */
static int settle(Instance *I)
{
    double y[NY1], dy[NY1];
    restore(I);
    time_inputs(I, I->t);
    cg_position(I->q, I->qd, I->par, I->f, I->u, I->phi, I->jac, I->ang);
    repartition(I);
    project(I, y, dy);
    const int status = rhs(I, I->t, y, dy);
    if (status) return status;
    reference(I);
    accept(I, I->t);
    return 0;
}

/* A fresh partition at the accepted state (a failed degraded() test) and its references. */
static int renew(Instance *I)
{
    double y[NY1], dy[NY1];
    repartition(I);
    project(I, y, dy);
    const int status = rhs(I, I->t, y, dy);
    restore(I);
    if (status) return status;
    reference(I);
    return 0;
}

static int fmu_rhs(void *I, double t, const double *y, double *dy) { return rhs((Instance *)I, t, y, dy); }

/* I->t to t_end by dp_step (module comment). */
static int integrate(Instance *I, double t_end)
{
    dp_t *d = &I->dp;
    int rejects = 0;
    d->rtol = I->rtol;
    d->atol = I->atol;
    while (t_end - I->t > 1e-14 * (1.0 + fabs(t_end))) {
        if (DOF == 0) {                      /* kinematic: the state follows the drivers */
            double none[NY1];
            restore(I);
            if (rhs(I, t_end, none, none)) { log_error(I, "the drivers cannot be followed at t = %g", t_end); return 0; }
            accept(I, t_end);
            break;
        }
        if (I->stale && renew(I)) {          /* after a failure the partition is still the step's */
            log_error(I, "no partition at t = %.9g: its constraints cannot be solved", I->t);
            return 0;
        }
        project(I, d->y, d->f);
        d->t = I->t;
        d->h = I->h;
        const long rejected = d->rejected;
        const int code = dp_step(d, fmu_rhs, I, t_end);
        I->rejected += d->rejected - rejected;
        if (code != DP_OK) {                 /* a stage's constraints cannot be solved, or its angle's branch
                                                cannot be told: the step again, shorter */
            ++I->failed;
            restore(I);
            I->h = d->h * MBS_BRANCH_SHRINK;
            if (++rejects > MAX_REJECTS || I->h < MIN_STEP) {
                log_error(I, "step size %.3g too small at t = %.9g (%s)", I->h, I->t,
                          code > 0 ? "constraints cannot be solved" : "error test failed");
                return 0;
            }
            continue;
        }
        rejects = 0;
        I->stale = degraded(I);             /* the last solve: k7 at the new state */
        ++I->steps;
        /* a step cut short to end on the communication point does not set the next step, unless it shrinks it */
        I->h = d->h_old < I->h && d->h >= d->h_old ? I->h : d->h;
        accept(I, d->t);                    /* k7 was evaluated at the new state */
    }
    I->t = t_end;
    return 1;
}

static void reset_instance(Instance *I)
{
    cg_reduced_t *s = &I->s;
    memset(s, 0, sizeof *s);
    s->nq = NQ; s->m = NM; s->r = NR; s->dof = DOF; s->na = NA; s->ndrv = NDRV; s->nred = NRED;
    memcpy(I->rows, mbs_rows, sizeof I->rows);
    memcpy(I->red_rows, mbs_red_rows, sizeof I->red_rows);
    memcpy(I->ang_row, mbs_ang_row, sizeof I->ang_row);
    memcpy(I->ang_coef, mbs_ang_coef, sizeof I->ang_coef);
    memcpy(I->drv_row, mbs_drv_row, sizeof I->drv_row);
    s->rows = I->rows; s->red_rows = I->red_rows; s->U = I->U; s->V = I->V; s->q_ref = I->q_ref;
    s->ang_row = I->ang_row; s->ang_coef = I->ang_coef; s->ang_state = I->ang_state; s->drv_row = I->drv_row;
    s->par = I->par; s->f = I->f; s->fd = I->fd; s->fdd = I->fdd; s->u = I->u; s->Qx = I->Qx;
    s->tol = MBS_POSITION_TOL; s->max_iter = 25;       /* repartition() sets tol from atol */
    s->accept = MBS_POSITION_TOL; s->stall = MBS_NEWTON_STALL;
    s->q = I->q; s->qd = I->qd; s->qdd = I->qdd; s->zdd = I->zdd; s->lam = I->lam; s->phi = I->phi;
    s->jac = I->jac; s->ang = I->ang; s->gamma = I->gamma; s->M = I->Mass; s->Q = I->Q;
    s->err = &I->err; s->sigma_min = &I->sigma; s->amplification = &I->amplification;
    s->k_position = cg_position; s->k_gamma = cg_gamma; s->k_mass = cg_mass; s->k_forces = cg_forces;
    memset(I->Qx, 0, sizeof I->Qx);
    memcpy(I->xq, mbs_q0, sizeof I->xq);
    memcpy(I->xqd, mbs_qd0, sizeof I->xqd);
    memset(I->xqdd, 0, sizeof I->xqdd);
    memset(I->xlam, 0, sizeof I->xlam);
    memcpy(I->xang, mbs_ang0, sizeof I->xang);
    memcpy(I->xrate, mbs_rate0, sizeof I->xrate);
    memset(I->RF, 0, sizeof I->RF);
    memset(I->RT, 0, sizeof I->RT);
    memcpy(I->par, mbs_par0, sizeof I->par);
    memcpy(I->in, mbs_in0, sizeof I->in);
    memset(I->din, 0, sizeof I->din);
    memset(I->d2in, 0, sizeof I->d2in);
    I->t = I->t_in = 0.0;
    I->rtol = MBS_RTOL;
    I->atol = MBS_ATOL;
    I->h = 1e-4;
    dp_init(&I->dp, DP_DOPRI5, 2 * DOF, I->dp_memory, I->rtol, I->atol, INFINITY);
    I->steps = I->rejected = I->failed = I->rhs_calls = I->partitions = 0;
    I->quality_ref = 0.0;
    I->amplification_ref = INFINITY;
    I->stale = 1;
    I->dirty = 1;
    I->phase = PHASE_INSTANTIATED;
    restore(I);
}

/* ---- the FMI 2.0 interface ------------------------------------------------------------------- */
const char *fmi2GetTypesPlatform(void) { return fmi2TypesPlatform; }
const char *fmi2GetVersion(void) { return fmi2Version; }

fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String categories[])
{
    (void)n; (void)categories;
    ((Instance *)c)->logging = on;
    return fmi2OK;
}

fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String location,
                              const fmi2CallbackFunctions *functions, fmi2Boolean visible, fmi2Boolean logging)
{
    (void)location; (void)visible;
    if (!functions || type != fmi2CoSimulation || !guid || strcmp(guid, MBS_GUID) != 0) {
        if (functions && functions->logger)
            functions->logger(functions->componentEnvironment, name, fmi2Error, "logError",
                              type != fmi2CoSimulation ? "only Co-Simulation is supported"
                                                       : "the GUID does not match this FMU");
        return NULL;
    }
    Instance *I = calloc(1, sizeof(Instance));
    if (!I) return NULL;
    I->cb = *functions;
    I->name = malloc(strlen(name ? name : "") + 1);
    strcpy(I->name, name ? name : "");
    I->logging = logging;
    reset_instance(I);
    return I;
}

void fmi2FreeInstance(fmi2Component c)
{
    Instance *I = c;
    if (!I) return;
    free(I->name);
    free(I);
}

fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean toleranceDefined, fmi2Real tolerance,
                               fmi2Real startTime, fmi2Boolean stopTimeDefined, fmi2Real stopTime)
{
    Instance *I = c;
    (void)stopTimeDefined; (void)stopTime;
    if (startTime != 0.0) {
        log_error(I, "the start state is the model's assembled state at t = 0: startTime must be 0, got %g", startTime);
        return fmi2Error;
    }
    if (toleranceDefined) {
        if (!(tolerance > 0.0)) { log_error(I, "tolerance must be > 0, got %g", tolerance); return fmi2Error; }
        I->atol = tolerance * (MBS_ATOL / MBS_RTOL);
        I->rtol = tolerance;
    }
    return fmi2OK;
}

fmi2Status fmi2EnterInitializationMode(fmi2Component c) { ((Instance *)c)->phase = PHASE_INIT; return fmi2OK; }

fmi2Status fmi2ExitInitializationMode(fmi2Component c)
{
    Instance *I = c;
    if (settle(I)) { log_error(I, "the start state cannot be solved"); I->phase = PHASE_ERROR; return fmi2Error; }
    I->dirty = 0;
    I->phase = PHASE_STEPPING;
    return fmi2OK;
}

fmi2Status fmi2Terminate(fmi2Component c)
{
    Instance *I = c;
    if (I->logging && I->cb.logger)
        I->cb.logger(I->cb.componentEnvironment, I->name, fmi2OK, "logStatistics",
                     "t = %g: %ld steps, %ld rejected by the error test, %ld by a failed Newton iteration, "
                     "%ld right-hand sides, %ld partitions", I->t, I->steps, I->rejected, I->failed, I->rhs_calls,
                     I->partitions);
    I->phase = PHASE_TERMINATED;
    return fmi2OK;
}

fmi2Status fmi2Reset(fmi2Component c)
{
    Instance *I = c;
    const double rtol = I->rtol, atol = I->atol;
    reset_instance(I);
    I->rtol = rtol;
    I->atol = atol;
    return fmi2OK;
}

static double output_value(const Instance *I, int kind, int a, int b)
{
    switch (kind) {
    case OUT_POSITION: return I->xq[a];
    case OUT_VELOCITY: return I->xqd[a];
    case OUT_ACCELERATION: return I->xqdd[a];
    case OUT_ANGULAR_VELOCITY: return mbs_angular_velocity(I->xq, I->xqd, a, b);
    case OUT_REACTION_FORCE: return I->RF[3 * a + b];
    case OUT_REACTION_TORQUE: return I->RT[3 * a + b];
    case OUT_FORCE: return -I->xlam[a];
    }
    return NAN;
}

fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, fmi2Real value[])
{
    Instance *I = c;
    for (size_t k = 0; k < nvr; ++k) {
        if (vr[k] >= NVR) { log_error(I, "no variable has value reference %u", vr[k]); return fmi2Error; }
        const int kind = mbs_vr_kind[vr[k]], a = mbs_vr_a[vr[k]], b = mbs_vr_b[vr[k]];
        value[k] = kind == VR_PARAMETER ? I->par[a] : kind == VR_INPUT ? I->in[a] : output_value(I, kind, a, b);
    }
    return fmi2OK;
}

fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t nvr, const fmi2Real value[])
{
    Instance *I = c;
    for (size_t k = 0; k < nvr; ++k) {
        if (vr[k] >= NVR || (mbs_vr_kind[vr[k]] != VR_PARAMETER && mbs_vr_kind[vr[k]] != VR_INPUT)) {
            log_error(I, "value reference %u is not a parameter or an input", vr[k]);
            return fmi2Error;
        }
        const int a = mbs_vr_a[vr[k]];
        if (mbs_vr_kind[vr[k]] == VR_PARAMETER) {
            const int positive = mbs_vr_b[vr[k]];     /* 1: > 0 (masses), 0: ≥ 0 */
            if (!isfinite(value[k]) || (positive ? !(value[k] > 0.0) : !(value[k] >= 0.0))) {
                log_error(I, "parameter %u: %g is not allowed (must be %s 0)", vr[k], value[k], positive ? ">" : ">=");
                return fmi2Error;
            }
            I->par[a] = value[k];
        } else {
            I->in[a] = value[k];
        }
        I->dirty = 1;
    }
    return fmi2OK;
}

fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t nvr,
                                       const fmi2Integer order[], const fmi2Real value[])
{
    Instance *I = c;
    for (size_t k = 0; k < nvr; ++k) {
        if (vr[k] >= NVR || mbs_vr_kind[vr[k]] != VR_INPUT || order[k] < 1 || order[k] > 2) {
            log_error(I, "input derivatives: value reference %u order %d (first and second derivatives of inputs)",
                      vr[k], (int)order[k]);
            return fmi2Error;
        }
        (order[k] == 1 ? I->din : I->d2in)[mbs_vr_a[vr[k]]] = value[k];
        I->dirty = 1;
    }
    return fmi2OK;
}

fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t0, fmi2Real h, fmi2Boolean noSetFMUStatePriorToCurrentPoint)
{
    Instance *I = c;
    (void)noSetFMUStatePriorToCurrentPoint;
    if (I->phase != PHASE_STEPPING) { log_error(I, "fmi2DoStep outside step mode"); return fmi2Error; }
    if (fabs(t0 - I->t) > 1e-9 * (1.0 + fabs(t0)) || !(h >= 0.0)) {
        log_error(I, "fmi2DoStep: communication point %.12g differs from the FMU time %.12g", t0, I->t);
        return fmi2Error;
    }
    I->t = t0;
    I->t_in = t0;
    /* inputs are re-anchored at every communication point (u = value + slope (t − t0)), so with inputs,
     * or after a parameter change, q̈ and λ are solved again here; otherwise the last step's hold */
    const int again = I->dirty || NIN > 0;
    I->dirty = 0;
    if ((again && settle(I)) || !integrate(I, t0 + h)) {
        I->phase = PHASE_ERROR;
        log_error(I, "the step from t = %g failed", t0);
        return fmi2Error;
    }
    return fmi2OK;
}

fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }

fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind s, fmi2Status *value)
{ (void)c; (void)s; *value = fmi2OK; return fmi2Discard; }
fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind s, fmi2Real *value)
{
    if (s == fmi2LastSuccessfulTime) { *value = ((Instance *)c)->t; return fmi2OK; }
    return fmi2Discard;
}
fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind s, fmi2Integer *value)
{ (void)c; (void)s; (void)value; return fmi2Discard; }
fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind s, fmi2Boolean *value)
{ (void)c; (void)s; (void)value; return fmi2Discard; }
fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind s, fmi2String *value)
{ (void)c; (void)s; (void)value; return fmi2Discard; }

/* The model has only Real variables; the rest of the interface is unsupported (fmi2Error). */
fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no Integer variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no Boolean variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no String variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no Integer variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no Boolean variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[])
{ (void)vr; (void)v; return n ? (log_error(c, "the FMU has no String variables"), fmi2Error) : fmi2OK; }
fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate *s) { (void)c; (void)s; return fmi2Error; }
fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate s, size_t *n)
{ (void)c; (void)s; (void)n; return fmi2Error; }
fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate s, fmi2Byte b[], size_t n)
{ (void)c; (void)s; (void)b; (void)n; return fmi2Error; }
fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte b[], size_t n, fmi2FMUstate *s)
{ (void)c; (void)s; (void)b; (void)n; return fmi2Error; }
fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference u[], size_t nu,
                                        const fmi2ValueReference z[], size_t nz, const fmi2Real du[], fmi2Real dz[])
{ (void)c; (void)u; (void)nu; (void)z; (void)nz; (void)du; (void)dz; return fmi2Error; }
fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                        const fmi2Integer order[], fmi2Real value[])
{ (void)c; (void)vr; (void)n; (void)order; (void)value; return fmi2Error; }
