/* Variable-order, variable-step Adams–Moulton in Nordsieck form, stepped in compiled code (MBS Studio,
 * solver.codegen; in the runtime library after bdf.c, whose accept callback it shares, and before band.c).
 *
 * The method of integrator "adams" in the compiled step loop (segment.c): the non-stiff half of LSODA
 * (Petzold (1983), "Automatic selection of methods for solving stiff and nonstiff systems of ordinary
 * differential equations", SIAM J. Sci. Stat. Comput. 4(1); Hindmarsh's ODEPACK, subroutines STODA and
 * CFODE, the code scipy's LSODA wraps), so that the compiled loop and the Python loop (scipy LSODA)
 * take the same kind of steps:
 *
 *   history     the Nordsieck array z_j = h^j y^(j)(t_n)/j!, j = 0 … q (order q ≤ 12), at the step h
 *               it is scaled for (a new h rescales it, z_j ← ρ^j z_j, ρ = h_new/h)
 *   predictor   z⁽⁰⁾ = z P (P the Pascal matrix: Taylor's series to t_n + h)
 *   corrector   functional iteration on the Adams–Moulton formula of order q (CFODE's l vector):
 *               e ← h f(t_{n+1}, y) − z⁽⁰⁾_1, y = z⁽⁰⁾_0 + l_0 e, at most 3 iterations and never fewer
 *               than 2 (LSODA: the second gives the Lipschitz estimate below); converged when
 *               ‖Δe‖ min(1, 1.5 c_rate)/(τ_2(q) · 0.5/(q + 2)) ≤ 1, c_rate the contraction estimate;
 *               a divergence (‖Δe‖ > 2 ‖Δe_prev‖) or 3 iterations refuse the step with h/4 (within the
 *               stability region below; growth ≤ 2 on the next change); ‖·‖ LSODA's weighted max norm
 *               (DMNORM), weights rtol |y_n| + atol; round-off: ‖Δe‖ ≤ 100 ε ‖z⁽⁰⁾_0‖ (PNORM, of the prediction)
 *   error       dsm = ‖e‖/τ_2(q) ≤ 1 accepts; z ← z⁽⁰⁾ + l e; a refusal, as the corrector's, limits the
 *               growth of the next change to 2 (STODA's RMAX = 2 at label 500, 10 again after a change)
 *   step, order STODA's rules: after q + 1 steps at one h (or a refused step) the step ratios for the
 *               orders q − 1, q, q + 1 (1/(1.3 d_dn^(1/q)), 1/(1.2 dsm^(1/(q+1))), 1/(1.4 d_up^(1/(q+2))),
 *               d_dn = ‖z_q‖/τ_1(q), d_up = ‖e − e_prev‖/τ_3(q)), the largest taken when it grows h by
 *               10 % or more (the growth ≤ 10, 10⁴ on the first change); each limited by the stability
 *               region of the order, h L ≤ σ(q) (STODA's SM1; L the Lipschitz estimate
 *               max ‖Δe_m‖/‖Δe_{m−1}‖/(h l_0) of the corrector iterations); a second refusal in a row
 *               ≤ 0.2, a third restarts at order 1 with h/10
 *   stiffness   LSODA's switch test on every step after the first 20 of a run at order ≤ 5: the step
 *               Adams could take, h_A = h min(1/(1.2 dsm^(1/(q+1))), σ(q)/(h L)), and the one BDF of the
 *               same order could take with this error, h_B = h/(1.2 (dsm c_A(q)/c_B(q))^(1/(q+1)))
 *               (c the error constants, CFODE's CM1, CM2); h_B/h_A is left in dp_t.h_rho (2·5 when the
 *               error is round-off and the step was held by stability), and the step loop switches to
 *               bdf.c when it reaches 5 (LSODA's RATIO: segment.c's stiffness count with one step,
 *               step_rules.ADAMS_SWITCH).  LSODA also switches back to Adams; this loop does not
 *               ("auto"'s one-way switch).
 *   dense       y(t) = Σ_{j ≤ q} z_j ((t − t_n)/h)^j (LSODA's INTDY)
 *
 * The caller's interface is bdf.c's: a new step size is applied to z lazily, at the next attempt
 * (adams_step compares dp_t.h with the h z is at), so the step loop may shorten dp_t.h between steps;
 * an accepted step ends with the caller's `accept` at (t_{n+1}, y_{n+1}); a right-hand side or
 * `accept` that fails returns its code with the accepted state untouched and dp_t.h the step tried.
 */

#define ADAMS_MAX_ORDER 12
#define ADAMS_HISTORY (ADAMS_MAX_ORDER + 1)
#define ADAMS_MAXCOR 3
#define ADAMS_RATIO 5.0         /* LSODA's RATIO: BDF's step that much longer → stiff */
#define ADAMS_SWITCH_ORDER 5    /* LSODA's MXORDS: no switch test above it */
#define ADAMS_SWITCH_AFTER 20   /* LSODA's ICOUNT: steps before the first switch test */

enum { DP_ADAMS = 2 };      /* dp_t.method of Adams (dopri.c: DP_DOPRI5 = 5, DP_DOP853 = 8; bdf.c: DP_BDF = 1) */

/* The memory an adams_t of n unknowns needs (doubles): z and its copy before the prediction (13 n
 * each), e, e of the previous step, weights, the iterate (n each), and the coefficient tables. */
#define ADAMS_COEFFICIENTS (ADAMS_HISTORY * (ADAMS_HISTORY + 1) + 3 * ADAMS_HISTORY + ADAMS_HISTORY)
#define ADAMS_MEMORY(n) ((2 * ADAMS_HISTORY + 4) * (n) + ADAMS_COEFFICIENTS)

typedef struct {
    int order;                  /* q */
    int wait;                   /* STODA's IALTH: steps until the next step/order choice */
    int order_used;             /* q of the last accepted step (the dense output's) */
    int count;                  /* steps until the first switch test (ICOUNT) */
    int held;                   /* the last h was cut to the stability region (IRFLAG) */
    double h_z;                 /* the step z is scaled for */
    double rmax;                /* largest growth of the next change */
    double crate, pdest, pdlast;    /* contraction estimate; Lipschitz estimates (this choice's, last) */
    double *z, *z_old, *e, *e_prev, *ewt, *work;
    double *el;                 /* ADAMS_HISTORY × (ADAMS_HISTORY + 1): l of order q at el[q·14 + j] */
    double *tesco;              /* ADAMS_HISTORY × 3: τ_1, τ_2, τ_3 of order q at tesco[3 q + i] */
    double *cm1;                /* Adams' error constants c_A(q) (CFODE's CM1) */
} adams_t;

/* σ(q): the stability region of order q along the negative real axis (LSODA's SM1). */
static const double adams_sm1[ADAMS_HISTORY] = {0.0, 0.5, 0.575, 0.55, 0.45, 0.35, 0.25, 0.2, 0.15, 0.1, 0.075,
                                                0.05, 0.025};

/* CFODE's Adams coefficients (METH = 1) into a->el, a->tesco, a->cm1 (index q = 1 … 12). */
static void adams_coefficients(adams_t *a)
{
    double pc[ADAMS_HISTORY + 1] = {1.0};
    double *el = a->el, *ts = a->tesco;
    const int w = ADAMS_HISTORY + 1;
    el[1 * w + 0] = 1.0;
    el[1 * w + 1] = 1.0;
    ts[3 * 1 + 0] = 0.0;
    ts[3 * 1 + 1] = 2.0;
    ts[3 * 2 + 0] = 1.0;
    ts[3 * ADAMS_MAX_ORDER + 2] = 0.0;
    double rqfac = 1.0;
    for (int q = 2; q <= ADAMS_MAX_ORDER; ++q) {
        /* pc: the coefficients of p(x) = (x + 1)(x + 2) … (x + q − 1) */
        const double rq1fac = rqfac;
        rqfac /= q;
        const int qm1 = q - 1;
        pc[q - 1] = 0.0;
        for (int i = q - 1; i >= 1; --i) pc[i] = pc[i - 1] + qm1 * pc[i];
        pc[0] = qm1 * pc[0];
        /* ∫_{−1}^0 p(x) dx and ∫_{−1}^0 x p(x) dx */
        double pint = pc[0], xpin = pc[0] / 2.0, tsign = 1.0;
        for (int i = 2; i <= q; ++i) {
            tsign = -tsign;
            pint += tsign * pc[i - 1] / i;
            xpin += tsign * pc[i - 1] / (i + 1);
        }
        el[q * w + 0] = pint * rq1fac;
        el[q * w + 1] = 1.0;
        for (int i = 2; i <= q; ++i) el[q * w + i] = rq1fac * pc[i - 1] / i;
        const double ragq = 1.0 / (rqfac * xpin);
        ts[3 * q + 1] = ragq;
        if (q < ADAMS_MAX_ORDER) ts[3 * (q + 1) + 0] = ragq * rqfac / (q + 1);
        ts[3 * (q - 1) + 2] = ragq;
    }
    for (int q = 1; q <= ADAMS_MAX_ORDER; ++q) a->cm1[q] = ts[3 * q + 1] * el[q * w + q];
}

/* BDF's error constants c_B(q) = (q + 1)/q! (CFODE's METH = 2: CM2). */
static double adams_cm2(int q)
{
    double f = 1.0;
    for (int i = 2; i <= q; ++i) f *= i;
    return (q + 1) / f;
}

#define ADAMS_Z(a, j, n) ((a)->z + (size_t)(j) * (n))
#define ADAMS_EL(a, q) ((a)->el + (size_t)(q) * (ADAMS_HISTORY + 1))

static void adams_init(adams_t *a, int n, double *memory)
{
    a->z = memory;
    a->z_old = a->z + (size_t)ADAMS_HISTORY * n;
    a->e = a->z_old + (size_t)ADAMS_HISTORY * n;
    a->e_prev = a->e + n;
    a->ewt = a->e_prev + n;
    a->work = a->ewt + n;
    a->el = a->work + n;
    a->tesco = a->el + ADAMS_HISTORY * (ADAMS_HISTORY + 1);
    a->cm1 = a->tesco + 3 * ADAMS_HISTORY;
    adams_coefficients(a);
    a->order = a->order_used = 1;
}

/* LSODA's weighted max norm of x (weights 1/ewt). */
static double adams_norm(const double *x, const double *ewt, int n)
{
    double v = 0.0;
    for (int i = 0; i < n; ++i) v = fmax(v, fabs(x[i]) / ewt[i]);
    return v;
}

/* Start at (s->t, s->y, s->f) with the first step s->h: order 1, z = [y, h f]. */
static void adams_start(dp_t *s, adams_t *a)
{
    const int n = s->n;
    memcpy(ADAMS_Z(a, 0, n), s->y, sizeof(double) * n);
    for (int i = 0; i < n; ++i) ADAMS_Z(a, 1, n)[i] = s->h * s->f[i];
    a->h_z = s->h;
    a->order = a->order_used = 1;
    a->wait = 2;
    a->count = ADAMS_SWITCH_AFTER;
    a->held = 0;
    a->rmax = 1e4;
    a->crate = 0.7;
    a->pdest = a->pdlast = 0.0;
    s->h_rho = 0.0;
}

/* z rescaled from its step h_z to h (z_j ← (h/h_z)^j z_j). */
static void adams_rescale(adams_t *a, int n, double h)
{
    const double rho = h / a->h_z;
    double r = 1.0;
    for (int j = 1; j <= a->order; ++j) {
        r *= rho;
        double *zj = ADAMS_Z(a, j, n);
        for (int i = 0; i < n; ++i) zj[i] *= r;
    }
    a->h_z = h;
    a->wait = a->order + 1;
}

/* The growth ρ limited to the stability region of order q (STODA's label 170 for METH = 1). */
static double adams_stable(adams_t *a, double h, double rho, int q)
{
    const double pdh = fmax(fabs(h) * a->pdlast, 1e-6);
    a->held = rho * pdh * 1.00001 >= adams_sm1[q];
    return a->held ? adams_sm1[q] / pdh : rho;
}

/* The step/order choice after an accepted step (refused = 0: the error dsm) or a refused one (refused =
 * the refusals in a row): STODA's labels 520–625.  Sets a->order (z_{q+1} from e on an increase) and
 * returns the growth of h (1: no change). */
static double adams_choose(adams_t *a, int n, double h, double dsm, int refused)
{
    const int q = a->order, L = q + 1;
    const double *ts = a->tesco + 3 * q;
    double rhup = 0.0;
    if (!refused && L <= ADAMS_MAX_ORDER) {
        for (int i = 0; i < n; ++i) a->work[i] = a->e[i] - a->e_prev[i];
        const double dup = adams_norm(a->work, a->ewt, n) / ts[2];
        rhup = 1.0 / (1.4 * pow(dup, 1.0 / (L + 1)) + 1.4e-6);
    }
    double rhsm = 1.0 / (1.2 * pow(dsm, 1.0 / L) + 1.2e-6), rhdn = 0.0;
    if (q > 1) {
        const double ddn = adams_norm(ADAMS_Z(a, q, n), a->ewt, n) / ts[0];
        rhdn = 1.0 / (1.3 * pow(ddn, 1.0 / q) + 1.3e-6);
    }
    const double pdh = fmax(fabs(h) * a->pdlast, 1e-6);
    if (L <= ADAMS_MAX_ORDER) rhup = fmin(rhup, adams_sm1[L] / pdh);
    rhsm = fmin(rhsm, adams_sm1[q] / pdh);
    if (q > 1) rhdn = fmin(rhdn, adams_sm1[q - 1] / pdh);
    a->pdest = 0.0;
    int new_q = q;
    double rh = rhsm;
    if (rhsm < rhup && rhup > rhdn) {
        if (rhup < 1.1) { a->wait = 3; return 1.0; }
        const double r = ADAMS_EL(a, q)[q] / L;          /* z_{q+1} of the higher order (STODA: EL(L)/L) */
        for (int i = 0; i < n; ++i) ADAMS_Z(a, L, n)[i] = a->e[i] * r;
        a->order = L;
        a->wait = L + 1;
        return rhup;
    }
    if (rhsm < rhdn) {                                  /* (rhsm < rhup ≤ rhdn, or rhup ≤ rhsm < rhdn) */
        new_q = q - 1;
        rh = rhdn;
        if (refused && rh > 1.0) rh = 1.0;
    }
    const int stable_bound = rh * pdh * 1.00001 >= adams_sm1[new_q];
    if (!refused && rh < 1.1 && !stable_bound) { a->wait = 3; return 1.0; }
    if (refused >= 2) rh = fmin(rh, 0.2);
    a->order = new_q;
    a->wait = new_q + 1;
    return rh;
}

/* LSODA's switch test after an accepted step (module comment): h_B/h_A into s->h_rho (0: not tested). */
static void adams_stiffness(dp_t *s, adams_t *a, double h, double dsm, double pnorm)
{
    const int q = a->order_used;
    s->h_rho = 0.0;
    if (--a->count >= 0 || q > ADAMS_SWITCH_ORDER) return;
    if (!(dsm > 100.0 * pnorm * DBL_EPSILON && a->pdest != 0.0)) {
        if (a->held) s->h_rho = 2.0 * ADAMS_RATIO;      /* round-off, h held by stability: LSODA switches */
        return;
    }
    const double exsm = 1.0 / (q + 1);
    double rh1 = 1.0 / (1.2 * pow(dsm, exsm) + 1.2e-6);
    const double pdh = a->pdlast * fabs(h);
    if (pdh * rh1 > 1e-5) rh1 = fmin(rh1, adams_sm1[q] / pdh);
    const double dm2 = dsm * (a->cm1[q] / adams_cm2(q));
    const double rh2 = 1.0 / (1.2 * pow(dm2, exsm) + 1.2e-6);
    s->h_rho = rh2 / rh1;
}

/* One accepted step from (s->t, s->y) (refused attempts retried smaller inside), never past t_end (a
 * step ending within 1 % of h before it ends on it, as dp_step).  DP_OK: t, y, t_old, h_old, h_rho and
 * the next h are updated; otherwise DP_TOO_SMALL, DP_NOT_FINITE or a right-hand side's or accept's
 * code (s->h the step tried, z as before the attempt).  y_new, f_new: n each of work. */
static int adams_step(dp_t *s, adams_t *a, dp_rhs_t rhs, bdf_accept_t accept, void *ctx, double t_end, double *y_new,
                      double *f_new)
{
    const int n = s->n;
    const size_t bytes = sizeof(double) * n;
    int refused = 0;                    /* error-test refusals in a row (STODA's −KFLAG) */
    for (;;) {
        double h = fmin(s->h, s->hmax);
        int last = 0;
        if (s->t + 1.01 * h >= t_end) { h = t_end - s->t; last = 1; }
        if (!(0.1 * h > fabs(s->t) * DBL_EPSILON)) return DP_TOO_SMALL;
        if (h != a->h_z) adams_rescale(a, n, h);
        const int q = a->order;
        const double *el = ADAMS_EL(a, q), *ts = a->tesco + 3 * q, t_new = last ? t_end : s->t + h;
        const double conit = 0.5 / (q + 2);
        memcpy(a->z_old, a->z, (size_t)(q + 1) * bytes);
        for (int i = 0; i < n; ++i) a->ewt[i] = s->rtol * fabs(a->z[i]) + s->atol;
        for (int jb = 1; jb <= q; ++jb)                  /* the predictor: z P */
            for (int j = q - jb; j < q; ++j) {
                double *zj = ADAMS_Z(a, j, n);
                const double *zj1 = ADAMS_Z(a, j + 1, n);
                for (int i = 0; i < n; ++i) zj[i] += zj1[i];
            }
        const double pnorm = adams_norm(a->z, a->ewt, n);    /* of the prediction (STODA's PNORM) */
        memcpy(y_new, a->z, bytes);
        memset(a->e, 0, bytes);
        double del = 0.0, delp = 0.0, rate = 0.0;
        int converged = 0;
        for (int m = 0;; ++m) {
            ++s->nfev;
            const int code = rhs(ctx, t_new, y_new, f_new);
            if (code) {
                memcpy(a->z, a->z_old, (size_t)(q + 1) * bytes);
                s->h = h;
                return code;
            }
            const double *z1 = ADAMS_Z(a, 1, n);
            for (int i = 0; i < n; ++i) {
                f_new[i] = h * f_new[i] - z1[i];
                a->work[i] = f_new[i] - a->e[i];
            }
            del = adams_norm(a->work, a->ewt, n);
            for (int i = 0; i < n; ++i) {
                y_new[i] = a->z[i] + el[0] * f_new[i];
                a->e[i] = f_new[i];
            }
            if (!isfinite(del)) break;
            if (del <= 100.0 * pnorm * DBL_EPSILON) { converged = 1; break; }
            if (m > 0) {
                const double rm = del <= 1024.0 * delp ? del / delp : 1024.0;
                rate = fmax(rate, rm);
                a->crate = fmax(0.2 * a->crate, rm);
                if (del * fmin(1.0, 1.5 * a->crate) / (ts[1] * conit) <= 1.0) {
                    a->pdest = fmax(a->pdest, rate / fabs(h * el[0]));
                    if (a->pdest != 0.0) a->pdlast = a->pdest;
                    converged = 1;
                    break;
                }
            }
            if (m + 1 == ADAMS_MAXCOR || (m >= 1 && del > 2.0 * delp)) break;
            delp = del;
        }
        if (!converged) {                   /* refused: h/4, the next growth ≤ 2 (STODA's label 410) */
            memcpy(a->z, a->z_old, (size_t)(q + 1) * bytes);
            if (!isfinite(del)) { s->h = h; return DP_NOT_FINITE; }
            a->rmax = 2.0;
            s->h = h * adams_stable(a, h, 0.25, a->order);
            s->rejected_last = 1;
            ++s->rejected;
            continue;
        }
        const double dsm = adams_norm(a->e, a->ewt, n) / ts[1];
        if (!isfinite(dsm)) { memcpy(a->z, a->z_old, (size_t)(q + 1) * bytes); s->h = h; return DP_NOT_FINITE; }
        if (dsm > 1.0) {                    /* refused (STODA's label 500) */
            memcpy(a->z, a->z_old, (size_t)(q + 1) * bytes);
            a->rmax = 2.0;                  /* the next change grows h at most 2× (STODA's label 500) */
            ++refused;
            s->rejected_last = 1;
            ++s->rejected;
            if (refused >= 3) {             /* order 1 with h/10 and z_1 = h f(t_n, y_n) (label 640) */
                ++s->nfev;
                const int code = rhs(ctx, s->t, a->z, f_new);
                if (code) { s->h = h; return code; }
                a->order = 1;
                a->h_z = 0.1 * h;
                for (int i = 0; i < n; ++i) ADAMS_Z(a, 1, n)[i] = a->h_z * f_new[i];
                a->wait = 5;
                s->h = a->h_z;
                continue;
            }
            s->h = h * adams_stable(a, h, fmin(adams_choose(a, n, h, dsm, refused), a->rmax), a->order);
            continue;
        }
        const int code = accept(ctx, t_new, y_new);     /* module comment */
        if (code) {
            memcpy(a->z, a->z_old, (size_t)(q + 1) * bytes);
            s->h = h;
            return code;
        }
        for (int j = 0; j <= q; ++j) {                   /* z ← z⁽⁰⁾ + l e */
            double *zj = ADAMS_Z(a, j, n);
            for (int i = 0; i < n; ++i) zj[i] += el[j] * a->e[i];
        }
        a->order_used = q;
        s->t_old = s->t;
        s->h_old = h;
        s->t = t_new;
        memcpy(s->y, y_new, bytes);
        s->h = h;
        s->rejected_last = 0;
        ++s->accepted;
        adams_stiffness(s, a, h, dsm, pnorm);
        if (--a->wait == 0) {
            const double rho = adams_choose(a, n, h, dsm, 0);
            if (rho != 1.0) {
                s->h = h * adams_stable(a, h, fmin(rho, a->rmax), a->order);
                a->rmax = 10.0;
            }
        } else if (a->wait == 1 && q < ADAMS_MAX_ORDER) {
            memcpy(a->e_prev, a->e, bytes);              /* e for the order increase test */
        }
        return DP_OK;
    }
}

/* The state at t in the last accepted step, into out (n): z's polynomial of the step's order. */
static void adams_dense(const dp_t *s, const adams_t *a, double t, double *out)
{
    const int n = s->n;
    const double x = (t - s->t) / a->h_z;
    memcpy(out, ADAMS_Z(a, a->order_used, n), sizeof(double) * n);
    for (int j = a->order_used - 1; j >= 0; --j) {
        const double *zj = ADAMS_Z(a, j, n);
        for (int i = 0; i < n; ++i) out[i] = out[i] * x + zj[i];
    }
}
