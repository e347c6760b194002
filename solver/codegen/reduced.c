/* Reduced equations of motion in compiled code (MBS Studio, solver.codegen) — Choi & Yoo (2000) §4
 * applied to the whole right-hand side, not only to the equation kernels.
 *
 * Compiled once, with dopri.c and segment.c, into the runtime library every model shares (cached by
 * its source; see build.runtime_library).  The model's library provides the kernels cg_position,
 * cg_gamma, cg_mass, cg_forces; cg_reduced calls them through the pointers of its problem struct, set
 * when a partition is bound (solver/codegen/reduced.py).  The formulation's fixed code may provide
 * faster paths, called when their pointers are set: k_tree (cg_tree_accelerations of articulated.c)
 * and k_dynamics (cg_dynamics of relative.c).
 * With a coordinate partition q = q_ref + V z + U w (Kim & Yoo (1997) §2, solver.partitioning.partition):
 *
 *   positions      Φ(q_ref + V z + U w, t) = 0 by Newton–Raphson on w            (Kim & Yoo (1997) eq. 7)
 *   velocities     (Φ_q U) ẇ = ν − Φ_q V ż,  q̇ = V ż + U ẇ                       (Kim & Yoo (1997) eq. 8)
 *   null space     N = V − U (Φ_q U)⁻¹ Φ_q V = ∂q/∂z and ‖N‖_F (Partition.amplification: when the
 *                  partition should be renewed)
 *   accelerations  c = U (Φ_q U)⁻¹ γ,  (Nᵀ M N) z̈ = Nᵀ (Q − M c),  q̈ = N z̈ + c  (Kim & Yoo (1997) eq. 13)
 *   multipliers    (Φ_q U)ᵀ λ_rows = Uᵀ (Q − M q̈)   (Φ_qᵀλ = Q − M q̈ projected on U, the redundant
 *                  rows' λ 0), then the minimum-norm λ (as least squares gives): λ − S (SᵀS)⁻¹ Sᵀ λ
 *                  with S = [−Xᵀ; I] on (independent; redundant rows) spanning {μ : Φ_qᵀμ = 0},
 *                  from J_red = X J_rows, X = (J_red U)(J_rows U)⁻¹
 *
 * over the independent constraint rows `rows`.  Joint angles from the kernels (atan2, in (−π, π])
 * are unwrapped against `ang_state` exactly as CartesianJoint.unwrap does; the step loops set that
 * reference to the prediction from the last accepted state first (cg_branch_*: the rule of
 * solver.formulations.branches.py, with its thresholds passed in).  Dense matrices are
 * row-major.  Everything is the Python path's arithmetic (solver/partitioning/partition.py); the
 * tests compare the two to round-off.  A partition of many loops (s->band set, solver/codegen/banded.py)
 * is solved by banded.c's band_reduced instead: the same steps with U replaced by a sparse basis of its
 * range and the dependent block factored in band storage, sharing tangent_accelerations, minimum_norm
 * and sigma_min_power with this file; its kernels are then the library's packed ones (relative.c's,
 * cartesian_packed.c's: k_position = cg_position_packed, k_dynamics = cg_dynamics_packed: s->jac and
 * s->M hold Φ_q and M in their patterns, reduced.py).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The dense algebra's loops at O3 (the runtime library is compiled at -O1: build.RUNTIME_FLAGS):
 * vectorized, without -ffast-math: the same operations in the same order, the same numbers. */
#define CG_HOT __attribute__((optimize("O3")))

/* The model's kernels (signatures of the generated cg_position, cg_gamma, cg_mass, cg_forces) and the
 * fixed code's faster paths: relative.c's cg_dynamics (γ, M and Q in one pass; cg_dynamics_packed of
 * relative.c and cartesian_packed.c for the band), articulated.c's
 * cg_tree_accelerations (open-tree accelerations in O(n)); returns 1, 0 when the mass matrix is singular,
 * −1 when a result is not finite). */
typedef void (*cg_position_fn)(const double *q, const double *qd, const double *par, const double *f,
                               const double *u, double *phi, double *jac, double *ang);
typedef void (*cg_kernel_fn)(const double *q, const double *qd, const double *par, const double *f,
                             const double *u, double *out);
typedef void (*cg_dynamics_fn)(const double *q, const double *qd, const double *par, const double *f,
                               const double *fdd, const double *u, double *gamma, double *M, double *Q);
typedef int (*cg_tree_fn)(const double *q, const double *qd, const double *par, const double *f, const double *u,
                          const double *tau, double *qdd);

/* Problem description and buffers, shared with Python (solver/codegen/reduced.py, ReducedLayout). */
typedef struct {
    int nq, m, r, dof, na, ndrv;
    const int *rows;          /* r independent constraint rows */
    int nred;
    const int *red_rows;      /* nred redundant rows (combinations of the independent ones) */
    const double *U, *V;      /* nq×r, nq×dof */
    const double *q_ref;      /* nq */
    const int *ang_row;       /* na rows of Φ that hold an unwrapped angle */
    const double *ang_coef;   /* na coefficients (1 for drivers, −pitch for screws) */
    double *ang_state;        /* na last unwrapped angles (in/out) */
    const int *drv_row;       /* ndrv driver rows (ν = ḟ there, 0 elsewhere) */
    const double *par, *f, *fd, *fdd, *u;   /* kernel parameters, driver f, ḟ, f̈, time inputs */
    const double *Qx;         /* nq generalized forces added to the kernel's Q (elements not generated) */
    double tol;               /* Newton tolerance on max |Φ| */
    int max_iter;
    double accept, stall;     /* … or below accept once an iteration no longer cuts it below stall × the last
                                 (round-off: partition.converged, POSITION_TOL and NEWTON_STALL) */
    /* outputs */
    double *q, *qd, *qdd, *zdd;   /* q is also the Newton start (in/out) */
    double *lam;              /* m multipliers (level 3) */
    double *phi, *jac, *ang, *gamma, *M, *Q;   /* kernel outputs at the solution */
    double *err;              /* max |Φ| at the solution */
    double *sigma_min;        /* estimate of σ_min(Φ_q[rows] U) at the solution (levels 1 and 3: SIGMA_AT) */
    double *amplification;    /* ‖N‖_F, N = ∂q/∂z, at the solution (level ≥ 1) */
    /* the kernels (model library) */
    cg_position_fn k_position;
    cg_kernel_fn k_gamma, k_mass, k_forces;
    cg_dynamics_fn k_dynamics;  /* NULL: k_gamma, k_mass, k_forces */
    cg_tree_fn k_tree;          /* NULL: not an open tree */
    /* elements evaluated by fixed code at the solved state (contact.c's cc_generalized; NULL: none):
     * k_extra(extra, q, q̇, Qe) writes their generalized forces, Qx is added to them */
    int (*k_extra)(void *extra, const double *q, const double *qd, double *Qe);
    void *extra;
    double *Qe;               /* nq (work) */
    /* the band algebra of a many-loop partition (banded.c; NULL: the dense algebra of this file) */
    const struct cg_banded *band;
    /* k_tree's partition (tree_reduced), U and V by columns (CSC: column c's entries u_row/u_val
     * [u_start[c], u_start[c + 1])), and per column of q the independent row whose Φ_q row may be
     * non-zero there (−1: none); Φ_q[rows] U is diagonal */
    const int *col_row, *u_start, *u_row, *v_start, *v_row;
    const double *u_val, *v_val;
} cg_reduced_t;

typedef struct cg_banded cg_banded_t;

/* The levels whose solve estimates σ_min(Φ_q[rows] U) (*s->sigma_min): 1 (the Python loop's step ends)
 * and 3 (output rows, the FMU's right-hand sides), not 2 — an integrator's right-hand side, where no
 * one reads it (its power iteration was ≈ 30 % of a band level-2 solve); segment.c asks
 * cg_reduced_sigma at its accepted steps instead. */
#define SIGMA_AT(level) ((level) != 2)

enum { CG_OK = 0, CG_NO_CONVERGENCE = 1, CG_SINGULAR = 2, CG_NOT_FINITE = 3, CG_MASS_SINGULAR = 4,
       CG_BRANCH = 5, /* a step loop's refusal: an angle departed from its prediction (cg_branch_*) */
       CG_DYNAMICS_NOT_FINITE = 6 /* forces or accelerations not finite (CG_NOT_FINITE: the constraints) */ };

/* LU with partial pivoting of the n×n matrix a (in place); 0 when singular. */
CG_HOT static int lu_factor(double *a, int *piv, int n)
{
    for (int k = 0; k < n; ++k) {
        int p = k;
        double big = fabs(a[k * n + k]);
        for (int i = k + 1; i < n; ++i)
            if (fabs(a[i * n + k]) > big) { big = fabs(a[i * n + k]); p = i; }
        piv[k] = p;
        if (big == 0.0 || !isfinite(big)) return 0;
        if (p != k)
            for (int j = 0; j < n; ++j) { double t = a[k * n + j]; a[k * n + j] = a[p * n + j]; a[p * n + j] = t; }
        const double inv = 1.0 / a[k * n + k];
        for (int i = k + 1; i < n; ++i) {
            const double l = (a[i * n + k] *= inv);
            if (l != 0.0)
                for (int j = k + 1; j < n; ++j) a[i * n + j] -= l * a[k * n + j];
        }
    }
    return 1;
}

/* Solve (LU) x = b in place for nrhs right-hand sides stored as columns of b (n×nrhs, row-major). */
CG_HOT static void lu_solve(const double *a, const int *piv, int n, double *b, int nrhs)
{
    for (int k = 0; k < n; ++k)
        if (piv[k] != k)
            for (int c = 0; c < nrhs; ++c) { double t = b[k * nrhs + c]; b[k * nrhs + c] = b[piv[k] * nrhs + c]; b[piv[k] * nrhs + c] = t; }
    if (nrhs == 1) {        /* the same sums as below, in the same order, as contiguous dot products */
        for (int i = 0; i < n; ++i) {
            double v = b[i];
            for (int k = 0; k < i; ++k) v -= a[i * n + k] * b[k];
            b[i] = v;
        }
        for (int i = n - 1; i >= 0; --i) {
            double v = b[i];
            for (int k = i + 1; k < n; ++k) v -= a[i * n + k] * b[k];
            b[i] = v * (1.0 / a[i * n + i]);
        }
        return;
    }
    for (int i = 0; i < n; ++i)
        for (int k = 0; k < i; ++k) {
            const double l = a[i * n + k];
            if (l != 0.0) for (int c = 0; c < nrhs; ++c) b[i * nrhs + c] -= l * b[k * nrhs + c];
        }
    for (int i = n - 1; i >= 0; --i) {
        for (int k = i + 1; k < n; ++k) {
            const double l = a[i * n + k];
            if (l != 0.0) for (int c = 0; c < nrhs; ++c) b[i * nrhs + c] -= l * b[k * nrhs + c];
        }
        const double inv = 1.0 / a[i * n + i];
        for (int c = 0; c < nrhs; ++c) b[i * nrhs + c] *= inv;
    }
}

/* Solve (LU)ᵀ x = b in place for one right-hand side: PA = LU, so Aᵀ x = b is Uᵀ Lᵀ P x = b. */
CG_HOT static void lu_solve_transposed(const double *a, const int *piv, int n, double *b)
{
    for (int i = 0; i < n; ++i) {
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= a[k * n + i] * b[k];
        b[i] = s / a[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
        b[i] = s;
    }
    for (int k = n - 1; k >= 0; --k)
        if (piv[k] != k) { double t = b[k]; b[k] = b[piv[k]]; b[piv[k]] = t; }
}

/* σ_min of A (r × r) by power iteration on (A Aᵀ)⁻¹ = A⁻ᵀ A⁻¹, SIGMA_ITERATIONS steps from a fixed
 * start: an estimate from above that converges fast exactly when it matters, when σ_min is well
 * separated from the other singular values (a dependent block going singular).  inverse(ctx, x):
 * x ← A⁻ᵀ A⁻¹ x.  start: the index of A's row i in the dense order (NULL: i), so a reordered A starts
 * from the reordered start.  x: n doubles of work.  power_growth runs the iteration with any symmetric
 * operator (‖A x‖ → A's largest eigenvalue); banded.c's cg_band_row_sigma passes G⁻¹ and G = J Jᵀ, as
 * solver/partitioning/singular_estimates.py row_singular_estimates. */
#define SIGMA_ITERATIONS 4      /* singular_estimates.SIGMA_ITERATIONS */
static double power_growth(int n, void (*apply)(const void *, double *), const void *ctx, const int *start, double *x)
{
    if (n == 0) return 1.0;
    for (int i = 0; i < n; ++i) x[i] = 1.0 + 0.1 * ((start ? start[i] : i) % 7);
    double growth = 0.0;
    for (int it = 0; it < SIGMA_ITERATIONS; ++it) {
        double norm = 0.0;
        for (int i = 0; i < n; ++i) norm += x[i] * x[i];
        norm = sqrt(norm);
        for (int i = 0; i < n; ++i) x[i] /= norm;
        apply(ctx, x);
        growth = 0.0;
        for (int i = 0; i < n; ++i) growth += x[i] * x[i];
        growth = sqrt(growth);               /* ‖A x‖ → A's largest eigenvalue */
    }
    return isfinite(growth) ? growth : INFINITY;
}

/* σ_min of A by power_growth on (A Aᵀ)⁻¹ = A⁻ᵀ A⁻¹ (inverse(ctx, x): x ← A⁻ᵀ A⁻¹ x): 1/√growth, an
 * estimate from above; 0 when the growth is not finite or positive (A singular). */
static double sigma_min_power(int n, void (*inverse)(const void *, double *), const void *ctx, const int *start,
                              double *x)
{
    if (n == 0) return 1.0;
    const double growth = power_growth(n, inverse, ctx, start, x);
    return growth > 0.0 && isfinite(growth) ? 1.0 / sqrt(growth) : 0.0;
}

typedef struct { const double *a; const int *piv; int n; } dense_lu_t;

static void dense_inverse(const void *ctx, double *x)
{
    const dense_lu_t *d = ctx;
    lu_solve(d->a, d->piv, d->n, x, 1);           /* x ← A⁻¹ x */
    lu_solve_transposed(d->a, d->piv, d->n, x);   /* x ← A⁻ᵀ x */
}

/* σ_min of the factorized A (sigma_min_power) */
static double sigma_min_estimate(const double *a, const int *piv, int n, double *x)
{
    const dense_lu_t lu = {a, piv, n};
    return sigma_min_power(n, dense_inverse, &lu, NULL, x);
}

/* Cholesky solve of the symmetric positive definite n×n a (destroyed) with b (overwritten); 0 when a
 * is singular to working precision: a pivot d ≤ n ε max_k a_kk (partition.reduced_mass_solve's test). */
CG_HOT static int cholesky_solve(double *a, int n, double *b)
{
    double largest = 0.0;
    for (int j = 0; j < n; ++j) largest = fmax(largest, a[j * n + j]);
    const double floor = n * DBL_EPSILON * largest;
    for (int j = 0; j < n; ++j) {
        double d = a[j * n + j];
        for (int k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
        if (!(d > floor)) return 0;
        d = sqrt(d);
        a[j * n + j] = d;
        for (int i = j + 1; i < n; ++i) {
            double s = a[i * n + j];
            for (int k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
            a[i * n + j] = s / d;
        }
    }
    for (int i = 0; i < n; ++i) {
        double s = b[i];
        for (int k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
        b[i] = s / a[i * n + i];
    }
    for (int i = n - 1; i >= 0; --i) {
        double s = b[i];
        for (int k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
        b[i] = s / a[i * n + i];
    }
    return 1;
}

/* out (r×ncol) = Φ_q[rows] · B (nq×ncol) */
CG_HOT static void rows_times(const cg_reduced_t *s, const double *B, int ncol, double *out)
{
    const int nq = s->nq;
    memset(out, 0, sizeof(double) * s->r * ncol);
    for (int i = 0; i < s->r; ++i) {
        const double *ji = s->jac + (size_t)s->rows[i] * nq;
        for (int k = 0; k < nq; ++k) {
            const double a = ji[k];
            if (a != 0.0) for (int c = 0; c < ncol; ++c) out[i * ncol + c] += a * B[k * ncol + c];
        }
    }
}

/* Evaluate Φ, Φ_q and the raw angles at s->q; unwrap the angles into Φ; return max |Φ| (NaN if not finite). */
static double evaluate_position(cg_reduced_t *s)
{
    s->k_position(s->q, s->qd, s->par, s->f, s->u, s->phi, s->jac, s->ang);
    const double two_pi = 6.283185307179586;
    for (int n = 0; n < s->na; ++n) {
        const double raw = s->ang[n];
        const double unwrapped = raw + two_pi * nearbyint((s->ang_state[n] - raw) / two_pi);
        s->ang_state[n] = unwrapped;
        s->phi[s->ang_row[n]] += s->ang_coef[n] * (unwrapped - raw);
    }
    double err = 0.0;
    for (int i = 0; i < s->m; ++i) {
        const double a = fabs(s->phi[i]);
        if (!isfinite(a)) return NAN;
        if (a > err) err = a;
    }
    return err;
}

/* The branch rule of solver.formulations.branches.py for the step loops (segment.c, fmu.c): the reference
 * of each unwrapped angle before an evaluation dt after the last accepted state (angles acc, rates
 * rate) is its prediction acc + rate·dt … */
static void cg_branch_predict(cg_reduced_t *s, const double *acc, const double *rate, double dt)
{
    for (int n = 0; n < s->na; ++n) s->ang_state[n] = acc[n] + rate[n] * dt;
}

/* … the evaluation departed max |θ − prediction| from it … */
static double cg_branch_departure(const cg_reduced_t *s, const double *acc, const double *rate, double dt)
{
    double worst = 0.0;
    for (int n = 0; n < s->na; ++n) worst = fmax(worst, fabs(s->ang_state[n] - (acc[n] + rate[n] * dt)));
    return worst;
}

/* … and an evaluation dt after the accepted state becomes the accepted state (rates: the secant). */
static void cg_branch_accept(const cg_reduced_t *s, double *acc, double *rate, double dt)
{
    for (int n = 0; n < s->na; ++n) {
        if (dt > 0.0) rate[n] = (s->ang_state[n] - acc[n]) / dt;
        acc[n] = s->ang_state[n];
    }
}

/* The longest next step after an accepted step h whose angles departed `departure` (branches.step_cap). */
static double cg_branch_step_cap(double h, double departure, double guard)
{
    return departure > 0.0 ? h * sqrt(guard / (2.0 * departure)) : INFINITY;
}

/* Make s->lam (zero on the redundant rows) the minimum-norm multipliers.  rows: the constraint row of
 * each of the r multipliers λ_rows; dual(ctx, k, x) writes x = (J_red[k] U (Φ_q[rows] U)⁻¹)ᵀ (r) for
 * the redundant row s->red_rows[k].
 * A redundant row whose Φ_q row is zero (the out-of-plane equations of a planar loop) has X = 0: it
 * only adds an identity block to SᵀS and a zero to Sᵀλ, so only the other rows enter the solve.
 * red_ptr, red_at (NULL: the dense row): by redundant row, where its entries that can be non-zero are in
 * s->jac (entries red_ptr[k] … red_ptr[k+1]−1).
 * Returns 0 if SᵀS is not positive definite (cannot happen for finite input). */
static int minimum_norm(cg_reduced_t *s, const int *rows, void (*dual)(const void *, int, double *),
                        const void *ctx, const int *red_ptr, const int *red_at)
{
    const int r = s->r, nq = s->nq;
    int *live = malloc(sizeof(int) * ((size_t)s->nred + 1));
    int d = 0;
    for (int k = 0; k < s->nred; ++k) {       /* the redundant rows with a non-zero Φ_q row */
        int nonzero = 0;
        if (red_ptr)
            for (int e = red_ptr[k]; e < red_ptr[k + 1] && !nonzero; ++e) nonzero = s->jac[red_at[e]] != 0.0;
        else
            for (int c = 0; c < nq && !nonzero; ++c) nonzero = s->jac[(size_t)s->red_rows[k] * nq + c] != 0.0;
        if (nonzero) live[d++] = k;
    }
    double *X = malloc(sizeof(double) * ((size_t)d * r + (size_t)d * d + d + r + 1));
    double *StS = X + (size_t)d * r, *y = StS + (size_t)d * d, *acc = y + d;
    int *nz = malloc(sizeof(int) * ((size_t)d * r + d + 1)), *nz_ptr = nz + (size_t)d * r;
    /* X by rows and the positions of its non-zeros (X is as sparse as the loops are apart: a row of
     * independent mechanisms gives a few non-zeros per row): the sums below skip only exact zeros */
    nz_ptr[0] = 0;
    for (int k = 0; k < d; ++k) {
        double *xk = X + (size_t)k * r;
        dual(ctx, live[k], xk);
        int n = nz_ptr[k];
        for (int i = 0; i < r; ++i) if (xk[i] != 0.0) nz[n++] = i;
        nz_ptr[k + 1] = n;
    }
    for (int k = 0; k < d; ++k) {             /* SᵀS = X Xᵀ + I,  Sᵀλ = −X λ_rows */
        const double *xk = X + (size_t)k * r;
        double v = 0.0;
        for (int e = nz_ptr[k]; e < nz_ptr[k + 1]; ++e) v -= xk[nz[e]] * s->lam[rows[nz[e]]];
        y[k] = v;
        for (int l = 0; l < d; ++l) {
            const double *xl = X + (size_t)l * r;
            double w = k == l ? 1.0 : 0.0;
            for (int e = nz_ptr[k]; e < nz_ptr[k + 1]; ++e) w += xk[nz[e]] * xl[nz[e]];
            StS[k * d + l] = w;
        }
    }
    const int ok = cholesky_solve(StS, d, y);
    if (ok) {                                 /* λ −= S y */
        memset(acc, 0, sizeof(double) * r);
        for (int k = 0; k < d; ++k)
            for (int e = nz_ptr[k]; e < nz_ptr[k + 1]; ++e) acc[nz[e]] += X[(size_t)k * r + nz[e]] * y[k];
        for (int i = 0; i < r; ++i) s->lam[rows[i]] += acc[i];
        for (int k = 0; k < d; ++k) s->lam[s->red_rows[live[k]]] -= y[k];
    }
    free(nz);
    free(X);
    free(live);
    return ok;
}

typedef struct { const cg_reduced_t *s; const double *A; const int *piv; } dense_dual_t;

/* minimum_norm's dual of the dense algebra: x = A⁻ᵀ (J_red[k] U)ᵀ, A = Φ_q[rows] U factorized */
static void dense_dual(const void *ctx, int k, double *x)
{
    const dense_dual_t *d = ctx;
    const cg_reduced_t *s = d->s;
    const int r = s->r, nq = s->nq;
    const double *jk = s->jac + (size_t)s->red_rows[k] * nq;
    for (int i = 0; i < r; ++i) x[i] = 0.0;
    for (int c = 0; c < nq; ++c) {
        const double a = jk[c];
        if (a != 0.0) for (int i = 0; i < r; ++i) x[i] += a * s->U[c * r + i];
    }
    lu_solve_transposed(d->A, d->piv, r, x);
}

/* The generalized forces of the elements outside the kernels at the solved (q, q̇): Qx (set by the
 * caller), plus those of k_extra when it is set. */
static const double *applied(cg_reduced_t *s)
{
    if (!s->k_extra) return s->Qx;
    s->k_extra(s->extra, s->q, s->qd, s->Qe);
    for (int k = 0; k < s->nq; ++k) s->Qe[k] += s->Qx[k];
    return s->Qe;
}

/* γ, M and Q at the solved (q, q̇), Q with the applied forces of the elements outside the kernels. */
static void dynamics_terms(cg_reduced_t *s)
{
    if (s->k_dynamics) {                      /* relative.c: the three in one pass over the tree map */
        s->k_dynamics(s->q, s->qd, s->par, s->f, s->fdd, s->u, s->gamma, s->M, s->Q);
    } else {
        s->k_gamma(s->q, s->qd, s->par, s->fdd, s->u, s->gamma);
        s->k_mass(s->q, s->qd, s->par, s->f, s->u, s->M);
        s->k_forces(s->q, s->qd, s->par, s->f, s->u, s->Q);
    }
    const double *Qa = applied(s);
    for (int k = 0; k < s->nq; ++k) s->Q[k] += Qa[k];
}

/* out = v − M x over the entries of M that can be non-zero: row k's columns m_col[m_ptr[k] …
 * m_ptr[k+1]−1], ascending, entry e at s->M[m_at[e]] (M dense row-major, or packed in that pattern:
 * relative.c's cg_dynamics_packed; the sums of the dense product without its structural zeros: the
 * same numbers), or every column of the dense M when m_ptr is NULL.  0 when some result is not finite. */
CG_HOT static int minus_mass_times(const cg_reduced_t *s, const int *m_ptr, const int *m_col, const int *m_at,
                            const double *v, const double *x, double *out)
{
    const int nq = s->nq;
    int finite = 1;
    for (int k = 0; k < nq; ++k) {
        double a = v[k];
        if (m_ptr)
            for (int e = m_ptr[k]; e < m_ptr[k + 1]; ++e) a -= s->M[m_at[e]] * x[m_col[e]];
        else
            for (int l = 0; l < nq; ++l) a -= s->M[(size_t)k * nq + l] * x[l];
        finite &= isfinite(a) != 0;
        out[k] = a;
    }
    return finite;
}

/* The tangent-space accelerations (Kim & Yoo (1997) eq. 13) from the null-space basis N (nq × dof)
 * and c (nq, the particular solution of Φ_q c = γ): (Nᵀ M N) z̈ = Nᵀ (Q − M c), q̈ = N z̈ + c; then
 * res = Q − M q̈ (nq, the multipliers' right-hand side).  M's pattern (m_ptr, m_col, m_at; NULL: dense)
 * as in minus_mass_times.  work: nq doubles.  Returns a CG_* status. */
CG_HOT static int tangent_accelerations(cg_reduced_t *s, const int *m_ptr, const int *m_col, const int *m_at,
                                 const double *N, const double *c, double *res, double *work)
{
    const int nq = s->nq, f = s->dof;
    double *vec = work;
    if (!minus_mass_times(s, m_ptr, m_col, m_at, s->Q, c, vec)) return CG_DYNAMICS_NOT_FINITE;  /* vec = Q − M c */
    double *Mh = malloc(sizeof(double) * ((size_t)f * f + f + (size_t)nq * f + 1));
    double *rhs = Mh + (size_t)f * f, *MN = rhs + f;
    for (int a = 0; a < f; ++a) {                             /* rhs = Nᵀ vec, Mh = Nᵀ M N */
        double v = 0.0;
        for (int k = 0; k < nq; ++k) v += N[k * f + a] * vec[k];
        rhs[a] = v;
    }
    memset(MN, 0, sizeof(double) * (size_t)nq * f);
    for (int k = 0; k < nq; ++k) {
        const int lo = m_ptr ? m_ptr[k] : 0, hi = m_ptr ? m_ptr[k + 1] : nq;
        for (int e = lo; e < hi; ++e) {
            const int l = m_ptr ? m_col[e] : e;
            const double mkl = s->M[m_ptr ? (size_t)m_at[e] : (size_t)k * nq + l];
            if (mkl != 0.0) for (int b = 0; b < f; ++b) MN[k * f + b] += mkl * N[l * f + b];
        }
    }
    memset(Mh, 0, sizeof(double) * (size_t)f * f);           /* k outermost: the same sums, rows contiguous */
    for (int k = 0; k < nq; ++k) {
        const double *nk = N + (size_t)k * f, *mk = MN + (size_t)k * f;
        for (int a = 0; a < f; ++a) {
            const double na = nk[a];
            if (na != 0.0) for (int b = 0; b < f; ++b) Mh[a * f + b] += na * mk[b];
        }
    }
    int status = CG_OK;
    if (f > 0 && !cholesky_solve(Mh, f, rhs)) { status = CG_MASS_SINGULAR; goto done; }
    for (int a = 0; a < f; ++a) s->zdd[a] = rhs[a];
    for (int k = 0; k < nq; ++k) {
        double v = c[k];
        for (int a = 0; a < f; ++a) v += N[k * f + a] * rhs[a];
        if (!isfinite(v)) { status = CG_DYNAMICS_NOT_FINITE; goto done; }
        s->qdd[k] = v;
    }
    minus_mass_times(s, m_ptr, m_col, m_at, s->Q, s->qdd, res);   /* res = Q − M q̈ (not finite: λ's) */
done:
    free(Mh);
    return status;
}

static int band_reduced(cg_reduced_t *s, const double *y, int level);     /* banded.c */
static int band_sigma(cg_reduced_t *s);                                  /* banded.c */

enum { TREE_STACK = 512 };      /* tree_reduced's work on the stack up to this many doubles (4 KB; the 7-DOF arm needs 15): no
                                   malloc per right-hand side */

/* An open tree (articulated.c): its only constraint rows are Euler-parameter normalizations, each on
 * the columns of one joint, and the partition (any LU or QR one; reduced.py checks it) keeps them
 * apart: U's column i lies in row i's columns, so A = Φ_q[rows] U is diagonal, and U, V are sparse
 * (CSC).  Then each step below costs O(nq + non-zeros of U, V), not O(nq² dof):
 *   positions      q = q_ref + V z + U w, Newton w_i −= Φ_i / A_ii (the dense Newton's iterates)
 *   velocities     ẇ_i = −(Φ_q V ż)_i / A_ii (no driver rows),  σ_min(A) = min |A_ii|
 *   ‖N‖_F²         = dof + ‖A⁻¹ Φ_q V‖_F² ([V U] orthonormal: VᵀV = I, VᵀU = 0, UᵀU = I)
 *   accelerations  q̈ of the articulated-body recursion (k_tree, the normalizations' γ inside), z̈ = Vᵀq̈
 *                  (VᵀN = I, Vᵀc = 0); λ = 0 (articulated.c: the normalizations carry no load)
 * The generalized forces Qx of the elements not generated, and k_extra's, enter as τ. */
static int tree_reduced(cg_reduced_t *s, const double *y, int level)
{
    const int nq = s->nq, r = s->r, f = s->dof;
    const size_t need = 3 * (size_t)r + 2 * (size_t)nq + 1;
    double stack[TREE_STACK];
    double *work = need <= TREE_STACK ? stack : malloc(sizeof(double) * need);
    double *w = work, *diag = w + r, *acc = diag + r, *base = acc + r, *vec = base + nq;
    int status = CG_OK;
    for (int k = 0; k < nq; ++k) base[k] = s->q_ref[k];
    for (int c = 0; c < f; ++c)
        for (int z = s->v_start[c]; z < s->v_start[c + 1]; ++z) base[s->v_row[z]] += s->v_val[z] * y[c];
    for (int i = 0; i < r; ++i) {
        double v = 0.0;
        for (int z = s->u_start[i]; z < s->u_start[i + 1]; ++z) v += s->u_val[z] * (s->q[s->u_row[z]] - s->q_ref[s->u_row[z]]);
        w[i] = v;
    }
    int converged = 0;
    double prev = -1.0;
    for (int it = 0; it <= s->max_iter; ++it) {
        memcpy(s->q, base, sizeof(double) * nq);
        for (int i = 0; i < r; ++i)
            for (int z = s->u_start[i]; z < s->u_start[i + 1]; ++z) s->q[s->u_row[z]] += s->u_val[z] * w[i];
        const double err = evaluate_position(s);
        *s->err = err;
        if (isnan(err)) { status = CG_NOT_FINITE; goto done; }
        if (err < s->tol || (prev >= 0.0 && err < s->accept && err > s->stall * prev)) { converged = 1; break; }
        if (it == s->max_iter) break;
        prev = err;
        for (int i = 0; i < r; ++i) {
            double a = 0.0;
            for (int z = s->u_start[i]; z < s->u_start[i + 1]; ++z)
                a += s->jac[(size_t)s->rows[i] * nq + s->u_row[z]] * s->u_val[z];
            if (a == 0.0 || !isfinite(a)) { status = CG_SINGULAR; goto done; }
            w[i] -= s->phi[s->rows[i]] * (1.0 / a);
        }
    }
    if (!converged) { status = CG_NO_CONVERGENCE; goto done; }
    *s->sigma_min = 1.0;
    *s->amplification = sqrt((double)f);
    if (level < 1) goto done;
    double low = INFINITY;
    for (int i = 0; i < r; ++i) {
        double a = 0.0;
        for (int z = s->u_start[i]; z < s->u_start[i + 1]; ++z)
            a += s->jac[(size_t)s->rows[i] * nq + s->u_row[z]] * s->u_val[z];
        if (a == 0.0 || !isfinite(a)) { status = CG_SINGULAR; goto done; }
        diag[i] = a;
        acc[i] = 0.0;
        low = fmin(low, fabs(a));
    }
    if (r) *s->sigma_min = low;
    memset(vec, 0, sizeof(double) * nq);                       /* V ż */
    for (int c = 0; c < f; ++c)
        for (int z = s->v_start[c]; z < s->v_start[c + 1]; ++z) vec[s->v_row[z]] += s->v_val[z] * y[f + c];
    for (int k = 0; k < nq; ++k)                                /* Φ_q V ż */
        if (s->col_row[k] >= 0) acc[s->col_row[k]] += s->jac[(size_t)s->rows[s->col_row[k]] * nq + k] * vec[k];
    memcpy(s->qd, vec, sizeof(double) * nq);
    for (int i = 0; i < r; ++i) {
        const double wd = -acc[i] * (1.0 / diag[i]);
        for (int z = s->u_start[i]; z < s->u_start[i + 1]; ++z) s->qd[s->u_row[z]] += s->u_val[z] * wd;
        acc[i] = 0.0;
    }
    double gain = f;                                            /* ‖N‖_F²: column by column of Φ_q V */
    for (int c = 0; c < f; ++c) {
        for (int z = s->v_start[c]; z < s->v_start[c + 1]; ++z) {
            const int k = s->v_row[z], i = s->col_row[k];
            if (i >= 0) acc[i] += s->jac[(size_t)s->rows[i] * nq + k] * s->v_val[z];
        }
        for (int z = s->v_start[c]; z < s->v_start[c + 1]; ++z) {
            const int i = s->col_row[s->v_row[z]];
            if (i >= 0) { const double x = acc[i] / diag[i]; gain += x * x; acc[i] = 0.0; }
        }
    }
    *s->amplification = sqrt(gain);
    if (level < 2) goto done;
    const int tree = s->k_tree(s->q, s->qd, s->par, s->f, s->u, applied(s), s->qdd);
    if (tree <= 0) { status = tree < 0 ? CG_DYNAMICS_NOT_FINITE : CG_MASS_SINGULAR; goto done; }
    for (int c = 0; c < f; ++c) {
        double v = 0.0;
        for (int z = s->v_start[c]; z < s->v_start[c + 1]; ++z) v += s->v_val[z] * s->qdd[s->v_row[z]];
        s->zdd[c] = v;
    }
    memset(s->lam, 0, sizeof(double) * s->m);
done:
    if (work != stack) free(work);
    return status;
}

/* level 0: positions (q, Φ, Φ_q); 1: + velocities q̇; 2: + accelerations q̈, z̈ (needs y[dof:]);
 * 3: + multipliers λ (the output rows and the FMU's accepted states: an integrator's right-hand side
 * needs only z̈, and the minimum-norm λ of redundant rows costs more than the rest of a many-loop solve).
 * y = [z, ż].  Returns a CG_* status. */
CG_HOT int cg_reduced(cg_reduced_t *s, const double *y, int level)
{
    if (s->k_tree) return tree_reduced(s, y, level);
    if (s->band) return band_reduced(s, y, level);
    const int nq = s->nq, r = s->r, f = s->dof;
    int status = CG_OK;
    double *work = malloc(sizeof(double) * ((size_t)r * r + (size_t)r * (f + 1) + 4 * (size_t)nq
                                            + (size_t)nq * f + r + 1));
    int *piv = malloc(sizeof(int) * (r + 1));
    double *A = work;                       /* r×r  Φ_q[rows] U, factorized */
    double *B = A + (size_t)r * r;          /* r×(f+1)  right-hand sides */
    double *base = B + (size_t)r * (f + 1); /* nq */
    double *vec = base + nq;                /* nq */
    double *vec2 = vec + nq;                /* nq */
    double *vec3 = vec2 + nq;               /* nq */
    double *N = vec3 + nq;                  /* nq×f */
    double *w = N + (size_t)nq * f;         /* r */

    /* ---- positions: Newton on w ---- */
    for (int k = 0; k < nq; ++k) {
        double b = s->q_ref[k];
        for (int c = 0; c < f; ++c) b += s->V[k * f + c] * y[c];
        base[k] = b;
    }
    for (int i = 0; i < r; ++i) w[i] = 0.0;
    for (int k = 0; k < nq; ++k) {
        const double d = s->q[k] - s->q_ref[k];
        for (int i = 0; i < r; ++i) w[i] += s->U[k * r + i] * d;
    }
    int converged = 0;
    double prev = -1.0;
    for (int it = 0; it <= s->max_iter; ++it) {
        for (int k = 0; k < nq; ++k) {
            double v = base[k];
            for (int i = 0; i < r; ++i) v += s->U[k * r + i] * w[i];
            s->q[k] = v;
        }
        const double err = evaluate_position(s);
        *s->err = err;
        if (isnan(err)) { status = CG_NOT_FINITE; goto done; }
        if (err < s->tol || (prev >= 0.0 && err < s->accept && err > s->stall * prev)) { converged = 1; break; }
        if (it == s->max_iter) break;
        prev = err;
        rows_times(s, s->U, r, A);
        if (!lu_factor(A, piv, r)) { status = CG_SINGULAR; goto done; }
        for (int i = 0; i < r; ++i) B[i] = s->phi[s->rows[i]];
        lu_solve(A, piv, r, B, 1);
        for (int i = 0; i < r; ++i) w[i] -= B[i];
    }
    if (!converged) { status = CG_NO_CONVERGENCE; goto done; }
    if (level < 1) goto done;

    /* ---- velocities ---- */
    rows_times(s, s->U, r, A);
    if (!lu_factor(A, piv, r)) { status = CG_SINGULAR; goto done; }
    if (SIGMA_AT(level)) *s->sigma_min = sigma_min_estimate(A, piv, r, vec);
    const double *zd = y + f;
    for (int k = 0; k < nq; ++k) {
        double v = 0.0;
        for (int c = 0; c < f; ++c) v += s->V[k * f + c] * zd[c];
        vec[k] = v;                                           /* V ż */
    }
    rows_times(s, vec, 1, B);                                 /* Φ_q V ż */
    for (int i = 0; i < r; ++i) B[i] = -B[i];
    for (int n = 0; n < s->ndrv; ++n)                         /* + ν (ḟ on driver rows) */
        for (int i = 0; i < r; ++i) if (s->rows[i] == s->drv_row[n]) B[i] += s->fd[n];
    lu_solve(A, piv, r, B, 1);
    for (int k = 0; k < nq; ++k) {
        double v = vec[k];
        for (int i = 0; i < r; ++i) v += s->U[k * r + i] * B[i];
        s->qd[k] = v;
    }
    /* ---- null space: N = V − U A⁻¹ Φ_q V (B[:, :f]) ---- */
    rows_times(s, s->V, f, B);
    lu_solve(A, piv, r, B, f);
    double gain = 0.0;
    for (int k = 0; k < nq; ++k)
        for (int col = 0; col < f; ++col) {
            double v = s->V[k * f + col];
            for (int i = 0; i < r; ++i) {
                const double u_ki = s->U[k * r + i];
                if (u_ki != 0.0) v -= u_ki * B[i * f + col];
            }
            N[k * f + col] = v;
            gain += v * v;
        }
    *s->amplification = sqrt(gain);
    if (level < 2) goto done;

    /* ---- accelerations ---- */
    dynamics_terms(s);
    for (int i = 0; i < r; ++i) w[i] = s->gamma[s->rows[i]];
    lu_solve(A, piv, r, w, 1);                                /* c = U A⁻¹ γ */
    for (int k = 0; k < nq; ++k) {
        double c = 0.0;
        for (int i = 0; i < r; ++i) {
            const double u_ki = s->U[k * r + i];
            if (u_ki != 0.0) c += u_ki * w[i];
        }
        vec2[k] = c;
    }
    status = tangent_accelerations(s, NULL, NULL, NULL, N, vec2, vec, vec3);
    if (status != CG_OK || level < 3) goto done;
    for (int i = 0; i < r; ++i) {                             /* B = Uᵀ (Q − M q̈), then (Φ_q U)ᵀ λ_rows = B */
        double v = 0.0;
        for (int k = 0; k < nq; ++k) v += s->U[k * r + i] * vec[k];
        B[i] = v;
    }
    lu_solve_transposed(A, piv, r, B);
    memset(s->lam, 0, sizeof(double) * s->m);
    for (int i = 0; i < r; ++i) s->lam[s->rows[i]] = B[i];
    if (s->nred > 0) {
        const dense_dual_t dual = {s, A, piv};
        if (!minimum_norm(s, s->rows, dense_dual, &dual, NULL, NULL)) status = CG_NOT_FINITE;
    }
done:
    free(work);
    free(piv);
    return status;
}

/* σ_min(Φ_q[rows] U) at the last solved state into *s->sigma_min, estimated as a level-1 or level-3
 * solve does (SIGMA_AT), from s->jac: for a caller that reads it after a level-2 solve (segment.c at an
 * accepted step, whose last right-hand side was solved at the new state).  The same factorization
 * of the same Φ_q, so the same number.  Returns 0 when the block is singular (σ_min 0). */
int cg_reduced_sigma(cg_reduced_t *s)
{
    if (s->k_tree) return *s->sigma_min > 0.0;     /* tree_reduced's diagonal, set at every level */
    if (s->band) return band_sigma(s);
    const int r = s->r;
    double *A = malloc(sizeof(double) * ((size_t)r * r + (size_t)r + 1));
    int *piv = malloc(sizeof(int) * (r + 1));
    int ok = A && piv;
    if (ok) {
        rows_times(s, s->U, r, A);
        ok = lu_factor(A, piv, r);
    }
    *s->sigma_min = ok ? sigma_min_estimate(A, piv, r, A + (size_t)r * r) : 0.0;
    free(A);
    free(piv);
    return ok;
}
