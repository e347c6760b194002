/* Variable-order BDF/NDF with quasi-constant step size, stepped in compiled code (MBS Studio,
 * solver.codegen; in the runtime library after dopri.c, whose dp_t it shares, and before band.c).
 *
 * The implicit method of the compiled step loop (segment.c): integrator "bdf", and "auto" once its
 * stiffness test fires (step_rules.STIFF_*).  The algorithm of Shampine & Reichelt (1997), "The MATLAB
 * ODE suite", SIAM J. Sci. Comput. 18(1), §2 (ode15s), as scipy's solve_ivp BDF implements it (the same
 * constants, step and order rules, so the two agree step for step up to round-off and the Jacobian):
 *
 *   history     the modified divided differences D_j = ∇^j y_n, j = 0 … k+2, at the constant spacing h
 *               (the "quasi-constant step size": a new h rescales them, D ← (R U)ᵀ D with
 *               R_ij = Π_{r ≤ i} M_rj(ρ), M_rj = (r − 1 − ρ j)/r, U = R(1), ρ = h_new/h; Shampine &
 *               Reichelt eq. 2.3 and their §2.3)
 *   NDF formula Σ_{j=1..k} γ_j ∇^j y_{n+1} − κ γ_k (y_{n+1} − y⁽⁰⁾_{n+1}) = h f(t_{n+1}, y_{n+1}),
 *               γ_j = Σ_{i ≤ j} 1/i, κ = (0, −0.1850, −1/9, −0.0823, −0.0415) for orders 1 … 5 (0 at
 *               order 5); with α_k = (1 − κ) γ_k the corrector is
 *               (I − c J) Δ = c f(y) − ψ − d,  c = h/α_k,  ψ = Σ_{j=1..k} γ_j D_j / α_k,
 *               d = y − y⁽⁰⁾, y⁽⁰⁾ = Σ_{j ≤ k} D_j (the predictor)
 *   Newton      at most BDF_NEWTON_MAXITER simplified iterations with the LU of (I − c J) (reduced.c
 *               lu_factor); stopped when the contraction rate ρ_N ≥ 1 or ρ_N^(4−i)/(1 − ρ_N)‖Δ‖ > tol,
 *               converged when ρ_N/(1 − ρ_N)‖Δ‖ < tol, tol = max(10 ε/rtol, min(0.03, √rtol)), ‖·‖ the
 *               RMS norm scaled by atol + rtol |y⁽⁰⁾|
 *   Jacobian    J = ∂f/∂y by forward differences of the caller's right-hand side, steps
 *               jac_step·max(1, |y_k|) (the Python loop's Run._jacobian rule, step_rules.JACOBIAN_STEP),
 *               evaluated at the start and again (at t_{n+1}, y⁽⁰⁾, reusing the first Newton iterate's
 *               f) only when Newton fails with a J that is not fresh; a failure with a fresh J is tried
 *               once more with `afresh` set (the caller's right-hand side then starts its inner solves
 *               without its state from the last evaluation: segment.c segment_solve), and halves h if
 *               that fails too
 *   structure   the caller's `groups` (optional) splits the unknowns at (t, y) into components that no
 *               equation couples (f_i of a component depends on that component's y only: bodies in no
 *               contact with each other, segment.c): J is then block diagonal under that permutation,
 *               so one difference quotient perturbs the k-th unknown of every component at once (Curtis,
 *               Powell & Reid (1974), "On the estimation of sparse Jacobian matrices", J. Inst. Math.
 *               Appl. 13: columns of structurally orthogonal groups; the largest component's size in
 *               right-hand sides, not n) and I − cJ is factored and solved block by block.  Without it
 *               (or one component) J is the dense n × n of the same differences, in the same order
 *   error       err = ‖C_k d‖, C_k = κ γ_k + 1/(k + 1); err > 1 refuses the step, h ← h max(0.2,
 *               s err^(−1/(k+1))), s = 0.9 (2·4 + 1)/(2·4 + n_iter)
 *   order       after k + 1 steps of equal size: the norms of C_{k−1} D_k and C_{k+1} D_{k+2} beside err,
 *               the order of the largest err_j^(−1/(j+1)) taken, h ← h min(10, s · that factor)
 *   dense       y(t) = D_0 + Σ_{j=1..k} D_j Π_{i<j} (t − (t_n − i h)) / ((i + 1) h) (the interpolant
 *               through the back points, order k)
 *
 * A new step size is applied to D lazily, at the next attempt (bdf_step compares dp_t.h with the h D is
 * at), so the step loop may shorten dp_t.h between steps and on refusals exactly as it does for
 * DOP853.  An accepted step ends with the caller's `accept` at (t_{n+1}, y_{n+1}) (segment.c: the
 * consistent positions and velocities there, its accepted state, as DOP853's FSAL stage gives it; the
 * method needs no rate there, so dp_t.f is not kept after the start).  A right-hand side or `accept`
 * that fails returns its code with the accepted state untouched and dp_t.h the step tried, as dp_step
 * does.
 */

#define BDF_MAX_ORDER 5
#define BDF_NEWTON_MAXITER 4
#define BDF_MIN_FACTOR 0.2
#define BDF_MAX_FACTOR 10.0
#define BDF_HISTORY (BDF_MAX_ORDER + 3)

enum { DP_BDF = 1 };        /* dp_t.method of a BDF (dopri.c has DP_DOPRI5 = 5, DP_DOP853 = 8) */

/* The memory a bdf_t of n unknowns needs (doubles; the pivots are n ints apart): D, J, LU, work. */
#define BDF_MEMORY(n) ((BDF_HISTORY + 7) * (n) + 2 * (n) * (n))

/* The components of the unknowns at (t, y) (module comment, "structure"): comp[i] in 0 … returned − 1,
 * f: n of work (the hook may evaluate the right-hand side there); 0 for one dense block, −code when
 * its right-hand side fails. */
typedef int (*bdf_groups_t)(void *ctx, double t, const double *y, double *f, int *comp);

typedef struct {
    int order, n_equal_steps;   /* order k; steps taken at the spacing h_D */
    int jac_fresh;              /* J was evaluated within this step (a Newton failure then halves h) */
    int lu_valid;
    double h_D;                 /* the spacing D is at */
    double c_lu;                /* c = h/α_k that LU holds I − c J for */
    double newton_tol, jac_step;
    double *D;                  /* BDF_HISTORY × n */
    double *J, *LU;             /* n × n, row-major */
    int *piv;
    double *w;                  /* 7n: predictor, ψ, d, Δ (and the Newton iterate), scale, f at the predictor,
                                   a component's part of Δ */
    long njev, nlu;
    bdf_groups_t groups;        /* the structure of J (NULL: dense); with comp, cstart, cidx (n, n + 1, n ints) */
    int *comp, *cstart, *cidx;  /* and bstart (n + 1) the caller's: per component its unknowns cidx[cstart[c] …], */
    long long *bstart;          /* ascending, and its blocks of J and LU at bstart[c] (size², row-major) */
    int ncomp, csize;           /* components (1: dense) and the largest one's size */
    int afresh;                 /* 1 during the Newton retried afresh (bdf_step): the caller's right-hand side
                                   starts its inner solves without its last solve (segment.c segment_solve) */
} bdf_t;

static const double bdf_kappa[BDF_MAX_ORDER + 1] = {0.0, -0.1850, -1.0 / 9.0, -0.0823, -0.0415, 0.0};

static double bdf_gamma(int k)
{
    double g = 0.0;
    for (int i = 1; i <= k; ++i) g += 1.0 / i;
    return g;
}

static double bdf_alpha(int k) { return (1.0 - bdf_kappa[k]) * bdf_gamma(k); }

static double bdf_error_const(int k) { return bdf_kappa[k] * bdf_gamma(k) + 1.0 / (k + 1); }

#define BDF_D(b, j, n) ((b)->D + (size_t)(j) * (n))

static void bdf_init(bdf_t *b, int n, double *memory, int *piv, double rtol, double jac_step)
{
    b->D = memory;
    b->J = memory + (size_t)BDF_HISTORY * n;
    b->LU = b->J + (size_t)n * n;
    b->w = b->LU + (size_t)n * n;
    b->piv = piv;
    b->jac_step = jac_step;
    b->newton_tol = fmax(10.0 * DBL_EPSILON / rtol, fmin(0.03, sqrt(rtol)));
    b->order = 1;
    b->n_equal_steps = b->jac_fresh = b->lu_valid = b->afresh = 0;
    b->h_D = b->c_lu = 0.0;
    b->njev = b->nlu = 0;
    b->groups = NULL;
    b->comp = b->cstart = b->cidx = NULL;
    b->bstart = NULL;
    b->ncomp = 1;
    b->csize = n;
}

/* Component c's k-th unknown, its size and the offset of its blocks in J and LU (one dense block without
 * a structure). */
static int bdf_col(const bdf_t *b, int c, int k) { return b->ncomp > 1 ? b->cidx[b->cstart[c] + k] : k; }
static int bdf_size(const bdf_t *b, int c) { return b->ncomp > 1 ? b->cstart[c + 1] - b->cstart[c] : b->csize; }
static size_t bdf_block(const bdf_t *b, int c) { return b->ncomp > 1 ? (size_t)b->bstart[c] : 0; }

/* The components at (t, y) from the caller's groups (module comment), f: n of work.  Returns the
 * right-hand side's code. */
static int bdf_structure(dp_t *s, bdf_t *b, void *ctx, double t, const double *y, double *f)
{
    const int n = s->n;
    const int nc = b->groups && b->comp ? b->groups(ctx, t, y, f, b->comp) : 0;
    if (nc < 0) return -nc;
    b->ncomp = nc > 1 ? nc : 1;
    b->csize = n;
    if (b->ncomp == 1) return 0;
    for (int c = 0; c <= nc; ++c) b->cstart[c] = 0;
    for (int i = 0; i < n; ++i) ++b->cstart[b->comp[i] + 1];
    b->bstart[0] = 0;
    b->csize = 0;
    for (int c = 0; c < nc; ++c) {
        const int size = b->cstart[c + 1];
        b->csize = size > b->csize ? size : b->csize;
        b->bstart[c + 1] = b->bstart[c] + (long long)size * size;
        b->cstart[c + 1] += b->cstart[c];
    }
    for (int i = 0; i < n; ++i) b->cidx[b->cstart[b->comp[i]]++] = i;    /* ascending within each component */
    for (int c = nc; c > 0; --c) b->cstart[c] = b->cstart[c - 1];
    b->cstart[0] = 0;
    return 0;
}

/* R(k, ρ) of Shampine & Reichelt (module comment) into r ((k+1)², row-major). */
static void bdf_compute_R(int k, double factor, double *r)
{
    const int m = k + 1;
    for (int j = 0; j < m; ++j) r[j] = 1.0;
    for (int i = 1; i < m; ++i)
        for (int j = 0; j < m; ++j)
            r[i * m + j] = r[(i - 1) * m + j] * (j == 0 ? 0.0 : (i - 1 - factor * j) / i);
}

/* D_0 … D_k at spacing h_D rescaled to spacing factor·h_D: D ← (R U)ᵀ D (scipy's change_D). */
static void bdf_change_D(bdf_t *b, int n, double factor)
{
    const int k = b->order, m = k + 1;
    double R[36], U[36], RU[36], row[BDF_MAX_ORDER + 1];
    bdf_compute_R(k, factor, R);
    bdf_compute_R(k, 1.0, U);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) {
            double s = 0.0;
            for (int l = 0; l < m; ++l) s += R[i * m + l] * U[l * m + j];
            RU[i * m + j] = s;
        }
    for (int c = 0; c < n; ++c) {
        for (int j = 0; j < m; ++j) {
            double s = 0.0;
            for (int i = 0; i < m; ++i) s += RU[i * m + j] * BDF_D(b, i, n)[c];
            row[j] = s;
        }
        for (int j = 0; j < m; ++j) BDF_D(b, j, n)[c] = row[j];
    }
}

/* The RMS norm of c·x weighted by scale (scipy's norm(c x / scale) / √n). */
static double bdf_norm(double c, const double *x, const double *scale, int n)
{
    double sum = 0.0;
    for (int i = 0; i < n; ++i) sum += (c * x[i] / scale[i]) * (c * x[i] / scale[i]);
    return sqrt(sum / (n > 0 ? n : 1));
}

/* J = ∂f/∂y at (t, y) by forward differences from f0 = f(t, y) (evaluated into f0 first when
 * `have_f0` is 0); y_work, f_work: n each.  Returns the right-hand side's code. */
static int bdf_jacobian(dp_t *s, bdf_t *b, dp_rhs_t rhs, void *ctx, double t, const double *y, double *f0,
                        int have_f0, double *y_work, double *f_work)
{
    const int n = s->n;
    if (!have_f0) {
        ++s->nfev;
        const int code = rhs(ctx, t, y, f0);
        if (code) return code;
    }
    const int structure = bdf_structure(s, b, ctx, t, y, f_work);
    if (structure) return structure;
    memcpy(y_work, y, sizeof(double) * n);
    for (int k = 0; k < b->csize; ++k) {       /* the k-th unknown of every component at once */
        for (int c = 0; c < b->ncomp; ++c) {
            if (k >= bdf_size(b, c)) continue;
            const int j = bdf_col(b, c, k);
            y_work[j] = y[j] + b->jac_step * fmax(1.0, fabs(y[j]));
        }
        ++s->nfev;
        const int code = rhs(ctx, t, y_work, f_work);
        if (code) return code;
        for (int c = 0; c < b->ncomp; ++c) {
            const int size = bdf_size(b, c);
            if (k >= size) continue;
            const int j = bdf_col(b, c, k);
            const double step = y_work[j] - y[j];
            double *J = b->J + bdf_block(b, c);
            for (int r = 0; r < size; ++r) {
                const int i = bdf_col(b, c, r);
                J[(size_t)r * size + k] = (f_work[i] - f0[i]) / step;
            }
            y_work[j] = y[j];
        }
    }
    ++b->njev;
    b->jac_fresh = 1;
    b->lu_valid = 0;
    return 0;
}

/* LU of I − c J, block by block; 0 when a block is singular. */
static int bdf_factor(bdf_t *b, double c)
{
    for (int k = 0; k < b->ncomp; ++k) {
        const int size = bdf_size(b, k);
        const double *J = b->J + bdf_block(b, k);
        double *LU = b->LU + bdf_block(b, k);
        for (int i = 0; i < size; ++i)
            for (int j = 0; j < size; ++j) LU[(size_t)i * size + j] = (i == j) - c * J[(size_t)i * size + j];
        if (!lu_factor(LU, b->piv + (b->ncomp > 1 ? b->cstart[k] : 0), size)) return 0;
    }
    return 1;
}

/* x ← (I − c J)⁻¹ x from bdf_factor's blocks (each component's part through w[6]). */
static void bdf_solve(const bdf_t *b, int n, double *x)
{
    if (b->ncomp == 1) {
        lu_solve(b->LU, b->piv, n, x, 1);
        return;
    }
    double *part = b->w + 6 * n;
    for (int c = 0; c < b->ncomp; ++c) {
        const int size = bdf_size(b, c);
        for (int r = 0; r < size; ++r) part[r] = x[bdf_col(b, c, r)];
        lu_solve(b->LU + bdf_block(b, c), b->piv + b->cstart[c], size, part, 1);
        for (int r = 0; r < size; ++r) x[bdf_col(b, c, r)] = part[r];
    }
}

/* Start at (s->t, s->y, s->f) with the first step s->h: order 1, D = [y, h f], J at the start (n
 * right-hand sides).  Returns the right-hand side's code. */
static int bdf_start(dp_t *s, bdf_t *b, dp_rhs_t rhs, void *ctx)
{
    const int n = s->n;
    for (int j = 0; j < BDF_HISTORY; ++j) memset(BDF_D(b, j, n), 0, sizeof(double) * n);
    memcpy(BDF_D(b, 0, n), s->y, sizeof(double) * n);
    for (int i = 0; i < n; ++i) BDF_D(b, 1, n)[i] = s->h * s->f[i];
    b->h_D = s->h;
    b->order = 1;
    b->n_equal_steps = 0;
    s->h_rho = 0.0;
    return bdf_jacobian(s, b, rhs, ctx, s->t, s->y, s->f, 1, b->w + 3 * n, b->w + 5 * n);
}

/* The simplified Newton iterations of one attempt (module comment) from the predictor w[0] with ψ
 * w[1]: the corrected state into y_new, d into w[2], the iterations into *n_iter.  Returns 1 when
 * converged, 0 when not, or −code of a failed right-hand side. */
static int bdf_newton(dp_t *s, bdf_t *b, dp_rhs_t rhs, void *ctx, double t_new, double c, double *y_new,
                      double *f, int *n_iter, int *have_f_predict)
{
    const int n = s->n;
    const double *predict = b->w, *psi = b->w + n, *scale = b->w + 4 * n;
    double *d = b->w + 2 * n, *dy = b->w + 3 * n, *f_predict = b->w + 5 * n;
    double dy_norm_old = -1.0;
    memcpy(y_new, predict, sizeof(double) * n);
    memset(d, 0, sizeof(double) * n);
    for (int k = 0; k < BDF_NEWTON_MAXITER; ++k) {
        *n_iter = k + 1;
        ++s->nfev;
        const int code = rhs(ctx, t_new, y_new, f);
        if (code) return -code;
        if (k == 0) { memcpy(f_predict, f, sizeof(double) * n); *have_f_predict = 1; }
        int finite = 1;
        for (int i = 0; i < n; ++i) finite &= isfinite(f[i]);
        if (!finite) return 0;
        for (int i = 0; i < n; ++i) dy[i] = c * f[i] - psi[i] - d[i];
        bdf_solve(b, n, dy);
        const double dy_norm = bdf_norm(1.0, dy, scale, n);
        const double rate = dy_norm_old >= 0.0 ? dy_norm / dy_norm_old : -1.0;
        if (rate >= 0.0 && (rate >= 1.0 || pow(rate, BDF_NEWTON_MAXITER - k) / (1.0 - rate) * dy_norm > b->newton_tol))
            return 0;
        for (int i = 0; i < n; ++i) { y_new[i] += dy[i]; d[i] += dy[i]; }
        if (dy_norm == 0.0 || (rate >= 0.0 && rate / (1.0 - rate) * dy_norm < b->newton_tol)) return 1;
        dy_norm_old = dy_norm;
    }
    return 0;
}

typedef int (*bdf_accept_t)(void *ctx, double t, const double *y);

/* One accepted step from (s->t, s->y) (refused attempts retried smaller inside), never past t_end (a
 * step ending within 1 % of h before it ends on it, as dp_step).  DP_OK: t, y, t_old, h_old and the
 * next h are updated; otherwise DP_TOO_SMALL, DP_NOT_FINITE or a right-hand side's or accept's code
 * (s->h the step tried).  y_new, f_new: 2n of work (the caller's: the stage arrays of dp_t). */
static int bdf_step(dp_t *s, bdf_t *b, dp_rhs_t rhs, bdf_accept_t accept, void *ctx, double t_end, double *y_new,
                    double *f_new)
{
    const int n = s->n;
    double *predict = b->w, *psi = b->w + n, *d = b->w + 2 * n, *scale = b->w + 4 * n;
    b->jac_fresh = 0;
    for (;;) {
        double h = fmin(s->h, s->hmax);
        int last = 0;
        if (s->t + 1.01 * h >= t_end) { h = t_end - s->t; last = 1; }
        if (!(0.1 * h > fabs(s->t) * DBL_EPSILON)) return DP_TOO_SMALL;
        if (h != b->h_D) {
            bdf_change_D(b, n, h / b->h_D);
            b->h_D = h;
            b->n_equal_steps = 0;
        }
        const int k = b->order;
        const double alpha = bdf_alpha(k), c = h / alpha, t_new = last ? t_end : s->t + h;
        for (int i = 0; i < n; ++i) {
            double yp = 0.0, ps = 0.0;
            for (int j = 0; j <= k; ++j) yp += BDF_D(b, j, n)[i];
            for (int j = 1; j <= k; ++j) ps += bdf_gamma(j) * BDF_D(b, j, n)[i];
            predict[i] = yp;
            psi[i] = ps / alpha;
            scale[i] = s->atol + s->rtol * fabs(yp);
        }
        int converged = 0, n_iter = 0, have_f_predict = 0;
        for (;;) {
            if (!b->lu_valid || c != b->c_lu) {
                ++b->nlu;
                b->lu_valid = bdf_factor(b, c);
                b->c_lu = c;
            }
            const int result = b->lu_valid ? bdf_newton(s, b, rhs, ctx, t_new, c, y_new, f_new, &n_iter, &have_f_predict) : 0;
            if (result < 0) { s->h = h; return -result; }
            converged = result;
            if (converged || b->jac_fresh) break;
            /* J anew at the predictor, from the first iterate's f there (w[5]); y_new, f_new as work */
            const int code = bdf_jacobian(s, b, rhs, ctx, t_new, predict, b->w + 5 * n, have_f_predict, y_new, f_new);
            if (code) { s->h = h; return code; }
        }
        if (!converged && b->lu_valid) {      /* failed with a fresh J: once more, inner solves afresh */
            b->afresh = 1;
            const int result = bdf_newton(s, b, rhs, ctx, t_new, c, y_new, f_new, &n_iter, &have_f_predict);
            b->afresh = 0;
            if (result < 0) { s->h = h; return -result; }
            converged = result;
        }
        if (!converged) {
            s->h = 0.5 * h;
            s->rejected_last = 1;
            ++s->rejected;
            continue;
        }
        const double safety = 0.9 * (2 * BDF_NEWTON_MAXITER + 1) / (2 * BDF_NEWTON_MAXITER + n_iter);
        for (int i = 0; i < n; ++i) scale[i] = s->atol + s->rtol * fabs(y_new[i]);
        const double err = bdf_norm(bdf_error_const(k), d, scale, n);
        if (!isfinite(err)) { s->h = h; return DP_NOT_FINITE; }
        if (err > 1.0) {
            s->h = h * fmax(BDF_MIN_FACTOR, safety * pow(err, -1.0 / (k + 1)));
            s->rejected_last = 1;
            ++s->rejected;
            continue;
        }
        const int code = accept(ctx, t_new, y_new);       /* module comment */
        if (code) { s->h = h; return code; }
        ++b->n_equal_steps;
        /* D^{j+1} y_{n+1} = D^j y_{n+1} − D^j y_n: d is D^{k+1} y_{n+1} */
        double *Dk1 = BDF_D(b, k + 1, n), *Dk2 = BDF_D(b, k + 2, n);
        for (int i = 0; i < n; ++i) { Dk2[i] = d[i] - Dk1[i]; Dk1[i] = d[i]; }
        for (int j = k; j >= 0; --j) {
            double *Dj = BDF_D(b, j, n), *Dj1 = BDF_D(b, j + 1, n);
            for (int i = 0; i < n; ++i) Dj[i] += Dj1[i];
        }
        s->t_old = s->t;
        s->h_old = h;
        s->t = t_new;
        memcpy(s->y, y_new, sizeof(double) * n);
        s->h = h;
        s->rejected_last = 0;
        ++s->accepted;
        if (b->n_equal_steps < k + 1) return DP_OK;
        /* the order: k − 1, k or k + 1, whichever allows the longest step */
        double factors[3];
        for (int o = -1; o <= 1; ++o) {
            const int kk = k + o;
            double norm = INFINITY;
            if (o == 0) norm = err;
            else if (kk >= 1 && kk <= BDF_MAX_ORDER) {
                norm = bdf_norm(bdf_error_const(kk), BDF_D(b, o < 0 ? k : k + 2, n), scale, n);
            }
            factors[o + 1] = norm == 0.0 ? INFINITY : pow(norm, -1.0 / (k + o + 1));
        }
        int best = 0;
        for (int o = 1; o < 3; ++o) if (factors[o] > factors[best]) best = o;
        b->order = k + best - 1;
        s->h = h * fmin(BDF_MAX_FACTOR, safety * factors[best]);
        b->n_equal_steps = 0;
        b->lu_valid = 0;
        return DP_OK;
    }
}

/* The state at t in the last accepted step, into out (n): the interpolant of D at its spacing h_D. */
static void bdf_dense(const dp_t *s, const bdf_t *b, double t, double *out)
{
    const int n = s->n;
    memcpy(out, BDF_D(b, 0, n), sizeof(double) * n);
    double p = 1.0;
    for (int j = 1; j <= b->order; ++j) {
        p *= (t - (s->t - (j - 1) * b->h_D)) / (j * b->h_D);
        const double *Dj = BDF_D(b, j, n);
        for (int i = 0; i < n; ++i) out[i] += p * Dj[i];
    }
}
