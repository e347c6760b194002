/* Dormand–Prince 5(4) with step-size control and dense output (MBS Studio, solver.codegen).
 *
 * The one explicit integrator of the compiled code: the FMU (solver/fmu/fmu.c) and the step loop of
 * `simulate` (segment.c) both step with it.  It is in every kernels library's source, after
 * reduced.c (solver/codegen/build.py), so the FMU, which compiles that source, gets the same text.
 *
 *   stages, weights, error estimate   Dormand & Prince (1980); Hairer, Nørsett & Wanner, Solving
 *                                     ODE I (1993), §II.5, table 5.2 (FSAL: k7 = f(t + h, y_new))
 *   error norm                        err = sqrt(mean((e_i / sc_i)²)), sc_i = atol + rtol max(|y_i|, |y_new,i|)
 *   step-size control                 Hairer's DOPRI5 (ibid. §IV.2, PI controller, Gustafsson 1991):
 *                                     fac = err^(0.2 − 0.75 β) / err_old^β, β = 0.04, safety 0.9,
 *                                     h_new = h · clamp(0.9 / fac, 0.2, 10); after a rejection the step
 *                                     does not grow; a rejected step shrinks by max(0.2, 0.9 err^−0.17)
 *   initial step                      Hairer's HINIT (ibid. §II.4), as scipy's select_initial_step
 *   dense output                      Hairer's 4th-order continuous extension (CONTD5):
 *                                     y(t_old + θh) = r1 + θ(r2 + (1−θ)(r3 + θ(r4 + (1−θ) r5)))
 *
 * The caller owns the memory (dp_t fields point into it) and the right-hand side, a function
 * returning 0 on success or a positive code that dp_step hands back unchanged (the state is then
 * untouched and `h` holds the step that was tried, so the caller may retry smaller or give up).
 */
#include <float.h>

typedef int (*dp_rhs_t)(void *ctx, double t, const double *y, double *dy);

typedef struct {
    int n;
    double rtol, atol, hmax;      /* hmax: largest step (inf: none) */
    double t, h;                  /* time of y; the next step to try */
    double *y, *f;                /* n each: state at t and its rate f(t, y) */
    double *k;                    /* 8n: stages k2..k7, the stage argument, the error vector */
    double *rcont;                /* 5n: dense-output coefficients of the last accepted step */
    double t_old, h_old;          /* the last accepted step [t_old, t_old + h_old] */
    double err_old;               /* PI controller memory */
    int rejected_last;            /* the last attempt was rejected */
    long nfev, accepted, rejected;
} dp_t;

enum { DP_OK = 0, DP_TOO_SMALL = -1, DP_NOT_FINITE = -2 };

#define DP_BETA 0.04
#define DP_SAFE 0.9
#define DP_FAC_MIN 0.2      /* the step shrinks at most to 0.2 h … */
#define DP_FAC_MAX 10.0     /* … and grows at most to 10 h */

static double dp_norm(const dp_t *s, const double *e, const double *ya, const double *yb)
{
    double sum = 0.0;
    for (int i = 0; i < s->n; ++i) {
        const double sc = s->atol + s->rtol * fmax(fabs(ya[i]), fabs(yb ? yb[i] : ya[i]));
        sum += (e[i] / sc) * (e[i] / sc);
    }
    return sqrt(sum / (s->n > 0 ? s->n : 1));
}

/* Memory a dp_t of n unknowns needs (doubles): y, f, k (8n), rcont (5n). */
#define DP_MEMORY(n) (15 * (n))

static void dp_init(dp_t *s, int n, double *memory, double rtol, double atol, double hmax)
{
    s->n = n; s->rtol = rtol; s->atol = atol; s->hmax = hmax;
    s->y = memory; s->f = memory + n; s->k = memory + 2 * n; s->rcont = memory + 10 * n;
    s->t = s->h = s->t_old = s->h_old = 0.0;
    s->err_old = 1e-4;
    s->rejected_last = 0;
    s->nfev = s->accepted = s->rejected = 0;
}

/* Hairer's HINIT: the first step from (t, y) with rate f towards t_end (order 5 of the error estimate
 * + 1 = 5 in the exponent).  One right-hand side; returns its code (0: s->h is set). */
static int dp_initial_step(dp_t *s, dp_rhs_t rhs, void *ctx, double t_end)
{
    const int n = s->n;
    double *y1 = s->k, *f1 = s->k + n, *df = s->k + 2 * n;
    const double d0 = dp_norm(s, s->y, s->y, NULL), d1 = dp_norm(s, s->f, s->y, NULL);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > t_end - s->t) h0 = t_end - s->t;
    if (h0 > s->hmax) h0 = s->hmax;
    for (int i = 0; i < n; ++i) y1[i] = s->y[i] + h0 * s->f[i];
    ++s->nfev;
    const int code = rhs(ctx, s->t + h0, y1, f1);
    if (code) return code;
    for (int i = 0; i < n; ++i) df[i] = (f1[i] - s->f[i]) / h0;
    const double d2 = dp_norm(s, df, s->y, NULL), big = fmax(d1, d2);
    const double h1 = big <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / big, 0.2);
    s->h = fmin(fmin(100.0 * h0, h1), s->hmax);
    return 0;
}

/* One accepted step from (s->t, s->y, s->f), rejected attempts retried smaller inside; never past
 * t_end (a step that would end within 1 % of h before t_end ends on it).  DP_OK: t, y, f, the dense
 * output and the next h are updated.  Otherwise a DP_* failure or the right-hand side's code. */
static int dp_step(dp_t *s, dp_rhs_t rhs, void *ctx, double t_end)
{
    static const double c2 = 1.0 / 5, c3 = 3.0 / 10, c4 = 4.0 / 5, c5 = 8.0 / 9;
    static const double a21 = 1.0 / 5, a31 = 3.0 / 40, a32 = 9.0 / 40, a41 = 44.0 / 45, a42 = -56.0 / 15,
        a43 = 32.0 / 9, a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729,
        a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176, a65 = -5103.0 / 18656,
        b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
    static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
        e6 = 22.0 / 525, e7 = -1.0 / 40;
    static const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
        d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
        d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
    const int n = s->n;
    double *k1 = s->f, *k2 = s->k, *k3 = k2 + n, *k4 = k3 + n, *k5 = k4 + n, *k6 = k5 + n, *k7 = k6 + n,
           *w = k7 + n, *e = w + n;
    const double *y = s->y;
    for (;;) {
        double h = fmin(s->h, s->hmax);
        int last = 0;
        if (s->t + 1.01 * h >= t_end) { h = t_end - s->t; last = 1; }
        if (!(0.1 * h > fabs(s->t) * DBL_EPSILON)) return DP_TOO_SMALL;
        const double t = s->t;
        int code;
#define DP_STAGE(K, C, EXPR) do { for (int i = 0; i < n; ++i) w[i] = y[i] + h * (EXPR); \
            ++s->nfev; if ((code = rhs(ctx, t + (C) * h, w, K))) { s->h = h; return code; } } while (0)
        DP_STAGE(k2, c2, a21 * k1[i]);
        DP_STAGE(k3, c3, a31 * k1[i] + a32 * k2[i]);
        DP_STAGE(k4, c4, a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
        DP_STAGE(k5, c5, a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
        DP_STAGE(k6, 1.0, a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
        DP_STAGE(k7, 1.0, b1 * k1[i] + b3 * k3[i] + b4 * k4[i] + b5 * k5[i] + b6 * k6[i]);   /* w = y_new */
#undef DP_STAGE
        for (int i = 0; i < n; ++i)
            e[i] = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
        const double err = dp_norm(s, e, y, w);
        if (!isfinite(err)) { s->h = h; return DP_NOT_FINITE; }
        const double fac11 = pow(err, 0.2 - 0.75 * DP_BETA);
        if (err <= 1.0) {
            double fac = fac11 / pow(s->err_old, DP_BETA);
            fac = fmax(1.0 / DP_FAC_MAX, fmin(1.0 / DP_FAC_MIN, fac / DP_SAFE));
            double h_new = h / fac;
            if (s->rejected_last && h_new > h) h_new = h;
            s->err_old = fmax(err, 1e-4);
            for (int i = 0; i < n; ++i) {       /* CONTD5 coefficients, then y ← y_new, f ← k7 */
                const double dy = w[i] - y[i], bspl = h * k1[i] - dy;
                s->rcont[4 * n + i] = h * (d1 * k1[i] + d3 * k3[i] + d4 * k4[i] + d5 * k5[i] + d6 * k6[i] + d7 * k7[i]);
                s->rcont[i] = y[i];
                s->rcont[n + i] = dy;
                s->rcont[2 * n + i] = bspl;
                s->rcont[3 * n + i] = dy - h * k7[i] - bspl;
            }
            memcpy(s->y, w, sizeof(double) * n);
            memcpy(s->f, k7, sizeof(double) * n);
            s->t_old = t;
            s->h_old = h;
            s->t = last ? t_end : t + h;
            s->h = h_new;
            s->rejected_last = 0;
            ++s->accepted;
            return DP_OK;
        }
        s->h = h / fmin(1.0 / DP_FAC_MIN, fac11 / DP_SAFE);
        s->rejected_last = 1;
        ++s->rejected;
    }
}

/* The state at t in the last accepted step (dense output), into out (n). */
static void dp_dense(const dp_t *s, double t, double *out)
{
    const int n = s->n;
    const double theta = (t - s->t_old) / s->h_old, theta1 = 1.0 - theta;
    const double *r = s->rcont;
    for (int i = 0; i < n; ++i)
        out[i] = r[i] + theta * (r[n + i] + theta1 * (r[2 * n + i] + theta * (r[3 * n + i] + theta1 * r[4 * n + i])));
}
