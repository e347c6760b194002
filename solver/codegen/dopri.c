/* Explicit Runge–Kutta pairs with step-size control and dense output (MBS Studio, solver.codegen).
 *
 * The one explicit integrator of the compiled code: the FMU (solver/fmu/fmu.c) and the step loop of
 * `simulate` (segment.c) both step with it.  It is in the runtime library's source, after reduced.c
 * (solver/codegen/build.py, runtime_source), which the FMU compiles too: both get the same text.
 * Two tableaus behind one interface (dp_init chooses):
 *
 *   DP_DOPRI5   Dormand–Prince 5(4) (Dormand & Prince 1980; Hairer, Nørsett & Wanner, Solving ODE I
 *               (1993), §II.5, table 5.2; FSAL: k7 = f(t + h, y_new)); dense output: Hairer's
 *               4th-order continuous extension (CONTD5)
 *               y(t_old + θh) = r1 + θ(r2 + (1−θ)(r3 + θ(r4 + (1−θ) r5)))
 *   DP_DOP853   Dormand–Prince 8(5,3) (Prince & Dormand 1981; Hairer, Nørsett & Wanner, §II.10,
 *               their DOP853; coefficients as in scipy's dop853_coefficients); dense output of
 *               order 7 from three more stages, evaluated only for steps that hold output points
 *               (dp_prepare_dense)
 *
 *   error norm          DOPRI5: err = sqrt(mean((e_i / sc_i)²)), sc_i = atol + rtol max(|y_i|, |y_new,i|);
 *                       DOP853: |h| ‖e5‖² / sqrt(n (‖e5‖² + 0.01 ‖e3‖²)) (Hairer's DOP853)
 *   step-size control   Hairer's (ibid. §IV.2, PI controller of Gustafsson 1991 for DOPRI5):
 *                       fac = err^(1/q − 0.75 β) / err_old^β, h_new = h · clamp(0.9 / fac, fac_min, fac_max);
 *                       DOPRI5 q = 5, β = 0.04, [0.2, 10]; DOP853 q = 8, β = 0, [1/3, 6]; after a
 *                       rejection the step does not grow; a rejected step shrinks by
 *                       max(fac_min, 0.9 err^(−1/q + 0.75 β))
 *   initial step        Hairer's HINIT (ibid. §II.4), as scipy's select_initial_step
 *   stiffness           Hairer's test of DOPRI5/DOP853 (Hairer & Wanner, Solving ODE II (1996), §IV.2;
 *                       their codes' IASTI/NONSTI counts): the last two stages are both at t + h, so
 *                       h·ρ ≈ h ‖f(y_new) − f(g)‖ / ‖y_new − g‖ (g: the argument of the last stage before
 *                       y_new) estimates h times the dominant eigenvalue of ∂f/∂y; near the stability
 *                       boundary (≈ 6.1 DOP853, ≈ 3.25 DOPRI5) on many accepted steps the step size is
 *                       limited by stability, not accuracy (the caller counts: segment.c)
 *
 * The caller owns the memory (dp_t fields point into it) and the right-hand side, a function
 * returning 0 on success or a positive code that dp_step hands back unchanged (the state is then
 * untouched and `h` holds the step that was tried, so the caller may retry smaller or give up).
 * An accepted step also leaves h_rho, its stiffness estimate.
 */
#include <float.h>

typedef int (*dp_rhs_t)(void *ctx, double t, const double *y, double *dy);

enum { DP_DOPRI5 = 5, DP_DOP853 = 8 };

typedef struct {
    int n, method;
    double rtol, atol, hmax;      /* hmax: largest step (inf: none) */
    double t, h;                  /* time of y; the next step to try */
    double *y, *f;                /* n each: state at t and its rate f(t, y) */
    double *k;                    /* 18n: stages K0 (= f at the step start) … K15, the stage argument, the error */
    double *rcont;                /* 8n: dense-output coefficients of the last accepted step */
    double t_old, h_old;          /* the last accepted step [t_old, t_old + h_old] */
    double err_old;               /* PI controller memory */
    int rejected_last;            /* the last attempt was rejected */
    int dense_ready;              /* rcont holds the last accepted step's dense output */
    long nfev, accepted, rejected;
    double h_rho;                 /* stiffness estimate h·ρ of the last accepted step (dp_stiffness) */
} dp_t;

enum { DP_OK = 0, DP_TOO_SMALL = -1, DP_NOT_FINITE = -2 };

/* Memory a dp_t of n unknowns needs (doubles): y, f, k (18n), rcont (8n). */
#define DP_MEMORY(n) (28 * (n))
#define DP_SAFE 0.9

/* DOP853 tableau (Hairer's; scipy's dop853_coefficients): nodes, A (16×16 row-major, rows 12–15 the
 * FSAL and dense-output stages), weights, the 3rd- and 5th-order error weights, dense-output D (4×16) */
static const double dop853_c[] = {
    0.0, 0.05260015195876773, 0.0789002279381516, 0.1183503419072274,
    0.2816496580927726, 0.3333333333333333, 0.25, 0.3076923076923077,
    0.6512820512820513, 0.6, 0.8571428571428571, 1.0,
    1.0, 0.1, 0.2, 0.7777777777777778};
static const double dop853_a[] = {
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.05260015195876773, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0197250569845379, 0.0591751709536137, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.02958758547680685, 0.0, 0.08876275643042054, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.2413651341592667, 0.0, -0.8845494793282861, 0.924834003261792,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.037037037037037035, 0.0, 0.0, 0.17082860872947386,
    0.12546768756682242, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.037109375, 0.0, 0.0, 0.17025221101954405,
    0.06021653898045596, -0.017578125, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.03709200011850479, 0.0, 0.0, 0.17038392571223998,
    0.10726203044637328, -0.015319437748624402, 0.008273789163814023, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.6241109587160757, 0.0, 0.0, -3.3608926294469414,
    -0.868219346841726, 27.59209969944671, 20.154067550477894, -43.48988418106996,
    0.0, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.47766253643826434, 0.0, 0.0, -2.4881146199716677,
    -0.590290826836843, 21.230051448181193, 15.279233632882423, -33.28821096898486,
    -0.020331201708508627, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    -0.9371424300859873, 0.0, 0.0, 5.186372428844064,
    1.0914373489967295, -8.149787010746927, -18.52006565999696, 22.739487099350505,
    2.4936055526796523, -3.0467644718982196, 0.0, 0.0,
    0.0, 0.0, 0.0, 0.0,
    2.273310147516538, 0.0, 0.0, -10.53449546673725,
    -2.0008720582248625, -17.9589318631188, 27.94888452941996, -2.8589982771350235,
    -8.87285693353063, 12.360567175794303, 0.6433927460157636, 0.0,
    0.0, 0.0, 0.0, 0.0,
    0.054293734116568765, 0.0, 0.0, 0.0,
    0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585,
    0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259,
    0.0, 0.0, 0.0, 0.0,
    0.056167502283047954, 0.0, 0.0, 0.0,
    0.0, 0.0, 0.25350021021662483, -0.2462390374708025,
    -0.12419142326381637, 0.15329179827876568, 0.00820105229563469, 0.007567897660545699,
    -0.008298, 0.0, 0.0, 0.0,
    0.03183464816350214, 0.0, 0.0, 0.0,
    0.0, 0.028300909672366776, 0.053541988307438566, -0.05492374857139099,
    0.0, 0.0, -0.00010834732869724932, 0.0003825710908356584,
    -0.00034046500868740456, 0.1413124436746325, 0.0, 0.0,
    -0.42889630158379194, 0.0, 0.0, 0.0,
    0.0, -4.697621415361164, 7.683421196062599, 4.06898981839711,
    0.3567271874552811, 0.0, 0.0, 0.0,
    -0.0013990241651590145, 2.9475147891527724, -9.15095847217987, 0.0};
static const double dop853_b[] = {
    0.054293734116568765, 0.0, 0.0, 0.0,
    0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585,
    0.3111643669578199, -0.1521609496625161, 0.20136540080403034, 0.04471061572777259};
static const double dop853_e3[] = {
    -0.18980075407240762, 0.0, 0.0, 0.0,
    0.0, 4.450312892752409, 1.8915178993145003, -5.801203960010585,
    -0.4226823213237919, -0.1521609496625161, 0.20136540080403034, 0.02265179219836082,
    0.0};
static const double dop853_e5[] = {
    0.01312004499419488, 0.0, 0.0, 0.0,
    0.0, -1.2251564463762044, -0.4957589496572502, 1.6643771824549864,
    -0.35032884874997366, 0.3341791187130175, 0.08192320648511571, -0.022355307863886294,
    0.0};
static const double dop853_d[] = {
    -8.428938276109013, 0.0, 0.0, 0.0,
    0.0, 0.5667149535193777, -3.0689499459498917, 2.38466765651207,
    2.117034582445028, -0.871391583777973, 2.2404374302607883, 0.6315787787694688,
    -0.08899033645133331, 18.148505520854727, -9.194632392478356, -4.436036387594894,
    10.427508642579134, 0.0, 0.0, 0.0,
    0.0, 242.28349177525817, 165.20045171727028, -374.5467547226902,
    -22.113666853125306, 7.733432668472264, -30.674084731089398, -9.332130526430229,
    15.697238121770845, -31.139403219565178, -9.35292435884448, 35.81684148639408,
    19.985053242002433, 0.0, 0.0, 0.0,
    0.0, -387.0373087493518, -189.17813819516758, 527.8081592054236,
    -11.57390253995963, 6.8812326946963, -1.0006050966910838, 0.7777137798053443,
    -2.778205752353508, -60.19669523126412, 84.32040550667716, 11.99229113618279,
    -25.69393346270375, 0.0, 0.0, 0.0,
    0.0, -154.18974869023643, -231.5293791760455, 357.6391179106141,
    93.40532418362432, -37.45832313645163, 104.0996495089623, 29.8402934266605,
    -43.53345659001114, 96.32455395918828, -39.17726167561544, -149.72683625798564};

#define DP_K(s, j) ((s)->k + (size_t)(j) * (s)->n)

static double dp_rms(const dp_t *s, const double *e, const double *ya, const double *yb)
{
    double sum = 0.0;
    for (int i = 0; i < s->n; ++i) {
        const double sc = s->atol + s->rtol * fmax(fabs(ya[i]), fabs(yb ? yb[i] : ya[i]));
        sum += (e[i] / sc) * (e[i] / sc);
    }
    return sqrt(sum / (s->n > 0 ? s->n : 1));
}

static void dp_init(dp_t *s, int method, int n, double *memory, double rtol, double atol, double hmax)
{
    s->n = n; s->method = method; s->rtol = rtol; s->atol = atol; s->hmax = hmax;
    s->y = memory; s->f = memory + n; s->k = memory + 2 * n; s->rcont = memory + 20 * n;
    s->t = s->h = s->t_old = s->h_old = 0.0;
    s->err_old = 1e-4;
    s->rejected_last = s->dense_ready = 0;
    s->nfev = s->accepted = s->rejected = 0;
    s->h_rho = 0.0;
}

/* Hairer's HINIT: the first step from (t, y) with rate f towards t_end for a method whose local error
 * is O(h^order) (DOP853: 8, DOPRI5: 5, BDF starting at order 1: 2, as scipy's select_initial_step).
 * One right-hand side; returns its code (0: s->h is set). */
static int dp_initial_step(dp_t *s, dp_rhs_t rhs, void *ctx, double t_end, int order)
{
    const int n = s->n;
    double *y1 = DP_K(s, 1), *f1 = DP_K(s, 2), *df = DP_K(s, 3);
    const double d0 = dp_rms(s, s->y, s->y, NULL), d1 = dp_rms(s, s->f, s->y, NULL);
    double h0 = (d0 < 1e-5 || d1 < 1e-5) ? 1e-6 : 0.01 * d0 / d1;
    if (h0 > t_end - s->t) h0 = t_end - s->t;
    if (h0 > s->hmax) h0 = s->hmax;
    for (int i = 0; i < n; ++i) y1[i] = s->y[i] + h0 * s->f[i];
    ++s->nfev;
    const int code = rhs(ctx, s->t + h0, y1, f1);
    if (code) return code;
    for (int i = 0; i < n; ++i) df[i] = (f1[i] - s->f[i]) / h0;
    const double d2 = dp_rms(s, df, s->y, NULL), big = fmax(d1, d2);
    const double h1 = big <= 1e-15 ? fmax(1e-6, h0 * 1e-3) : pow(0.01 / big, 1.0 / order);
    s->h = fmin(fmin(100.0 * h0, h1), s->hmax);
    return 0;
}

/* DOPRI5's nodes (the FSAL stage k7 at 1 too) */
static const double dopri5_c[] = {0.0, 1.0 / 5, 3.0 / 10, 4.0 / 5, 8.0 / 9, 1.0, 1.0};

/* DOPRI5 attempt of step h: stages K1..K6 (K6 = f(t + h, y_new)), y_new into the stage argument, *err. */
static int dopri5_attempt(dp_t *s, dp_rhs_t rhs, void *ctx, double h, double *err)
{
    const double c2 = dopri5_c[1], c3 = dopri5_c[2], c4 = dopri5_c[3], c5 = dopri5_c[4];
    static const double a21 = 1.0 / 5, a31 = 3.0 / 40, a32 = 9.0 / 40, a41 = 44.0 / 45, a42 = -56.0 / 15,
        a43 = 32.0 / 9, a51 = 19372.0 / 6561, a52 = -25360.0 / 2187, a53 = 64448.0 / 6561, a54 = -212.0 / 729,
        a61 = 9017.0 / 3168, a62 = -355.0 / 33, a63 = 46732.0 / 5247, a64 = 49.0 / 176, a65 = -5103.0 / 18656,
        b1 = 35.0 / 384, b3 = 500.0 / 1113, b4 = 125.0 / 192, b5 = -2187.0 / 6784, b6 = 11.0 / 84;
    static const double e1 = 71.0 / 57600, e3 = -71.0 / 16695, e4 = 71.0 / 1920, e5 = -17253.0 / 339200,
        e6 = 22.0 / 525, e7 = -1.0 / 40;
    const int n = s->n;
    const double *y = s->y, t = s->t;
    double *k1 = DP_K(s, 0), *k2 = DP_K(s, 1), *k3 = DP_K(s, 2), *k4 = DP_K(s, 3), *k5 = DP_K(s, 4),
           *k6 = DP_K(s, 5), *k7 = DP_K(s, 6), *w = DP_K(s, 16), *e = DP_K(s, 17);
    int code;
#define DP_STAGE(K, C, EXPR) do { for (int i = 0; i < n; ++i) w[i] = y[i] + h * (EXPR); \
        ++s->nfev; if ((code = rhs(ctx, t + (C) * h, w, K))) return code; } while (0)
    DP_STAGE(k2, c2, a21 * k1[i]);
    DP_STAGE(k3, c3, a31 * k1[i] + a32 * k2[i]);
    DP_STAGE(k4, c4, a41 * k1[i] + a42 * k2[i] + a43 * k3[i]);
    DP_STAGE(k5, c5, a51 * k1[i] + a52 * k2[i] + a53 * k3[i] + a54 * k4[i]);
    DP_STAGE(k6, 1.0, a61 * k1[i] + a62 * k2[i] + a63 * k3[i] + a64 * k4[i] + a65 * k5[i]);
    memcpy(DP_K(s, 13), w, sizeof(double) * n);       /* the stage argument g of dp_stiffness */
    DP_STAGE(k7, 1.0, b1 * k1[i] + b3 * k3[i] + b4 * k4[i] + b5 * k5[i] + b6 * k6[i]);   /* w = y_new */
#undef DP_STAGE
    for (int i = 0; i < n; ++i)
        e[i] = h * (e1 * k1[i] + e3 * k3[i] + e4 * k4[i] + e5 * k5[i] + e6 * k6[i] + e7 * k7[i]);
    *err = dp_rms(s, e, y, w);
    return 0;
}

/* CONTD5 coefficients of the accepted DOPRI5 step (y still the old state, w the new one) */
static void dopri5_dense(dp_t *s, double h)
{
    static const double d1 = -12715105075.0 / 11282082432.0, d3 = 87487479700.0 / 32700410799.0,
        d4 = -10690763975.0 / 1880347072.0, d5 = 701980252875.0 / 199316789632.0,
        d6 = -1453857185.0 / 822651844.0, d7 = 69997945.0 / 29380423.0;
    const int n = s->n;
    const double *y = s->y, *w = DP_K(s, 16), *k1 = DP_K(s, 0), *k3 = DP_K(s, 2), *k4 = DP_K(s, 3),
                 *k5 = DP_K(s, 4), *k6 = DP_K(s, 5), *k7 = DP_K(s, 6);
    double *r = s->rcont;
    for (int i = 0; i < n; ++i) {
        const double dy = w[i] - y[i], bspl = h * k1[i] - dy;
        r[i] = y[i];
        r[n + i] = dy;
        r[2 * n + i] = bspl;
        r[3 * n + i] = dy - h * k7[i] - bspl;
        r[4 * n + i] = h * (d1 * k1[i] + d3 * k3[i] + d4 * k4[i] + d5 * k5[i] + d6 * k6[i] + d7 * k7[i]);
    }
    s->dense_ready = 1;
}

/* w = y + h Σ_{j<stages} a[j] K_j */
static void dp_combine(const dp_t *s, const double *y, double h, const double *a, int stages, double *w)
{
    const int n = s->n;
    for (int i = 0; i < n; ++i) w[i] = 0.0;
    for (int j = 0; j < stages; ++j) {
        if (a[j] == 0.0) continue;
        const double *kj = DP_K(s, j);
        for (int i = 0; i < n; ++i) w[i] += a[j] * kj[i];
    }
    for (int i = 0; i < n; ++i) w[i] = y[i] + h * w[i];
}

/* DOP853 attempt of step h: stages K1..K11, y_new into the stage argument, K12 = f(t + h, y_new), *err. */
static int dop853_attempt(dp_t *s, dp_rhs_t rhs, void *ctx, double h, double *err)
{
    const int n = s->n;
    double *w = DP_K(s, 16);
    int code;
    for (int st = 1; st < 12; ++st) {
        dp_combine(s, s->y, h, dop853_a + 16 * st, st, w);
        ++s->nfev;
        if ((code = rhs(ctx, s->t + dop853_c[st] * h, w, DP_K(s, st)))) return code;
    }
    memcpy(DP_K(s, 13), w, sizeof(double) * n);       /* stage 12's argument g (c = 1): dp_stiffness */
    dp_combine(s, s->y, h, dop853_b, 12, w);
    ++s->nfev;
    if ((code = rhs(ctx, s->t + h, w, DP_K(s, 12)))) return code;
    double sum5 = 0.0, sum3 = 0.0;
    for (int i = 0; i < n; ++i) {
        double e5 = 0.0, e3 = 0.0;
        for (int j = 0; j < 13; ++j) {
            const double kji = DP_K(s, j)[i];
            e5 += dop853_e5[j] * kji;
            e3 += dop853_e3[j] * kji;
        }
        const double sc = s->atol + s->rtol * fmax(fabs(s->y[i]), fabs(w[i]));
        sum5 += (e5 / sc) * (e5 / sc);
        sum3 += (e3 / sc) * (e3 / sc);
    }
    const double deno = sum5 + 0.01 * sum3;
    *err = deno > 0.0 ? fabs(h) * sum5 / sqrt(deno * (n > 0 ? n : 1)) : 0.0;
    return 0;
}

/* h·ρ of the step h just accepted (module comment): the new state in the stage argument, the last
 * stage before it (argument in K13, rate K11 for DOP853, K5 for DOPRI5) and the rate at the new
 * state (K12, K6). */
static double dp_stiffness(const dp_t *s, double h)
{
    const int dop853 = s->method == DP_DOP853;
    const double *w = DP_K(s, 16), *g = DP_K(s, 13), *fg = DP_K(s, dop853 ? 11 : 5), *fw = DP_K(s, dop853 ? 12 : 6);
    double num = 0.0, den = 0.0;
    for (int i = 0; i < s->n; ++i) {
        num += (fw[i] - fg[i]) * (fw[i] - fg[i]);
        den += (w[i] - g[i]) * (w[i] - g[i]);
    }
    return den > 0.0 ? fabs(h) * sqrt(num / den) : 0.0;
}

/* One accepted step from (s->t, s->y, s->f), rejected attempts retried smaller inside; never past
 * t_end (a step that would end within 1 % of h before t_end ends on it).  DP_OK: t, y, f and the
 * next h are updated (and DOPRI5's dense output).  Otherwise a DP_* failure or the right-hand
 * side's code. */
static int dp_step(dp_t *s, dp_rhs_t rhs, void *ctx, double t_end)
{
    const int n = s->n, dop853 = s->method == DP_DOP853;
    const double q = s->method, beta = dop853 ? 0.0 : 0.04;
    const double fac_min = dop853 ? 1.0 / 3.0 : 0.2, fac_max = dop853 ? 6.0 : 10.0;
    double *w = DP_K(s, 16);
    for (;;) {
        double h = fmin(s->h, s->hmax), err = 0.0;
        int last = 0;
        if (s->t + 1.01 * h >= t_end) { h = t_end - s->t; last = 1; }
        if (!(0.1 * h > fabs(s->t) * DBL_EPSILON)) return DP_TOO_SMALL;
        memcpy(DP_K(s, 0), s->f, sizeof(double) * n);
        const int code = dop853 ? dop853_attempt(s, rhs, ctx, h, &err) : dopri5_attempt(s, rhs, ctx, h, &err);
        if (code) { s->h = h; return code; }
        if (!isfinite(err)) { s->h = h; return DP_NOT_FINITE; }
        const double fac11 = pow(err, 1.0 / q - 0.75 * beta);
        if (err <= 1.0) {
            double fac = fac11 / pow(s->err_old, beta);
            fac = fmax(1.0 / fac_max, fmin(1.0 / fac_min, fac / DP_SAFE));
            double h_new = h / fac;
            if (s->rejected_last && h_new > h) h_new = h;
            s->err_old = fmax(err, 1e-4);
            s->h_rho = dp_stiffness(s, h);
            s->dense_ready = 0;
            if (dop853) memcpy(s->rcont + 7 * n, s->y, sizeof(double) * n);    /* y_old, for dp_prepare_dense */
            else dopri5_dense(s, h);
            memcpy(s->y, w, sizeof(double) * n);
            memcpy(s->f, DP_K(s, dop853 ? 12 : 6), sizeof(double) * n);
            s->t_old = s->t;
            s->h_old = h;
            s->t = last ? t_end : s->t + h;
            s->h = h_new;
            s->rejected_last = 0;
            ++s->accepted;
            return DP_OK;
        }
        s->h = h / fmin(1.0 / fac_min, fac11 / DP_SAFE);
        s->rejected_last = 1;
        ++s->rejected;
    }
}

/* The dense output of the last accepted step, before the first dp_dense in it: nothing for DOPRI5;
 * DOP853's three more stages and its seven coefficient vectors.  Returns a right-hand side's code. */
static int dp_prepare_dense(dp_t *s, dp_rhs_t rhs, void *ctx)
{
    if (s->dense_ready) return 0;
    const int n = s->n;
    const double h = s->h_old, *y_old = s->rcont + 7 * n, *f_old = DP_K(s, 0);
    double *w = DP_K(s, 16), *F = s->rcont;
    for (int st = 13; st < 16; ++st) {
        dp_combine(s, y_old, h, dop853_a + 16 * st, st, w);
        ++s->nfev;
        const int code = rhs(ctx, s->t_old + dop853_c[st] * h, w, DP_K(s, st));
        if (code) return code;
    }
    for (int i = 0; i < n; ++i) {
        const double dy = s->y[i] - y_old[i];
        F[i] = dy;
        F[n + i] = h * f_old[i] - dy;
        F[2 * n + i] = 2.0 * dy - h * (s->f[i] + f_old[i]);
    }
    for (int r = 0; r < 4; ++r) {
        double *Fr = F + (size_t)(3 + r) * n;
        for (int i = 0; i < n; ++i) Fr[i] = 0.0;
        for (int j = 0; j < 16; ++j) {
            const double d = dop853_d[16 * r + j];
            if (d == 0.0) continue;
            const double *kj = DP_K(s, j);
            for (int i = 0; i < n; ++i) Fr[i] += d * kj[i];
        }
        for (int i = 0; i < n; ++i) Fr[i] *= h;
    }
    s->dense_ready = 1;
    return 0;
}

/* The state at t in the last accepted step (dense output; after dp_prepare_dense), into out (n). */
static void dp_dense(const dp_t *s, double t, double *out)
{
    const int n = s->n;
    const double x = (t - s->t_old) / s->h_old, x1 = 1.0 - x;
    const double *r = s->rcont;
    if (s->method == DP_DOP853) {           /* y_old + x(F0 + (1−x)(F1 + x(F2 + (1−x)(F3 + x(F4 + (1−x)(F5 + x F6)))))) */
        for (int i = 0; i < n; ++i) {
            double v = 0.0;
            for (int m = 6; m >= 0; --m) v = (v + r[(size_t)m * n + i]) * ((6 - m) % 2 == 0 ? x : x1);
            out[i] = r[7 * (size_t)n + i] + v;
        }
        return;
    }
    for (int i = 0; i < n; ++i)
        out[i] = r[i] + x * (r[n + i] + x1 * (r[2 * n + i] + x * (r[3 * n + i] + x1 * r[4 * n + i])));
}
