/* The compiled step loop's rule at a singular pass (MBS Studio, solver.analysis.band_step; read by
 * segment.c, in the runtime library after dopri.c).
 *
 * Within a round-off band around a singular configuration (σ_min(Φ_q U) → 0) the right-hand side
 * carries round-off amplified by 1/σ_min (velocities) and more (accelerations; the position
 * Newton's bound too), so a stage that lands there brings noise into the step: the embedded error
 * estimate weighs it differently from the solution and accepts a wrong step (the four-bar row
 * N = 40 at rtol 1e-10: a DOP853 stage 4e-4 s from a pass, 1.7e-6 m) or refuses every step (the
 * step size collapses).  So the loop keeps its stages out of the band, as the Python loop's step
 * over does (band_step.py):
 *
 *   pass      σ_min of the last two accepted steps extrapolated linearly to zero,
 *             t_pass = t2 + σ2 (t2 − t1) / (σ1 − σ2) when σ1 > σ2 > 0 (band_step.pass_time);
 *             width  = clear · h, h the step proposed when the pass is first predicted, capped by
 *             max_step (the step the loop takes: a width from the uncapped proposal refused every
 *             capped crossing, 25 refusals on the four-bar row with max_step = 0.005)
 *   place     before each attempt from t with proposed h, D = t_pass − t: when D ≤ at·h the step
 *             is shortened so that the pass falls at the fraction `at` of it (the middle of the
 *             widest gap between the method's stage nodes, dense output included:
 *             band_step.crossing_fraction), h = D/at; when at·h < D ≤ (1 + at) h, this step and the
 *             crossing one are of equal size, h = D/(1 + at) (this one ends at·h before the pass);
 *             never longer than proposed, and the crossing step at least at/(1 + at) of a step the
 *             controller proposed (its nearest stages 0.133 of it from the pass for DOP853)
 *   refuse    an attempt's stage within `width` of t_pass returns CG_BAND (the step is placed again
 *             from the tried size); the refusal of an attempt as placed (placed again, it would be
 *             the same attempt), `tries` refusals in a row, or a step starting inside the band drop
 *             the prediction (the run goes on as without the rule)
 *   crossed   an accepted step that contains t_pass clears the history: a new pass needs two
 *             accepted steps with falling σ_min again
 *
 * The thresholds (at, clear, tries) come from solver/analysis/band_step.py through
 * solver/codegen/segment.py; cg_band_nodes gives Python the stage nodes `at` is computed from.
 * Python passes a band only for QR and SVD partitions (band_step.BAND_PARTITIONS: there σ_min → 0
 * means Φ_q itself is singular, not a poor LU dependent set).
 */

enum { CG_BAND = 16 };      /* a stage's refusal by the band rule (never returned to Python) */

typedef struct {
    double at, clear;           /* band_step: the pass's place in a crossing step; band half-width / h */
    int tries;                  /* refusals in a row before the prediction is dropped */
    int active;                 /* 1 while dp_step attempts a step (dense output and outputs exempt) */
    int n_hist, refused;        /* accepted (t, σ_min) kept (0–2); refusals in a row */
    double t1, s1, t2, s2;      /* the last two accepted steps' ends and σ_min estimates */
    double t_pass, width;       /* the predicted pass (NAN: none) and the band's half-width */
    double h_placed;            /* the size the last placement gave the step (NAN: not placed) */
    long placed, refusals;      /* steps placed and stages refused (diagnostics, this partition) */
} cg_band_t;

/* The stage nodes of a method (fractions of its step, dense-output stages included) into out (at
 * least 16); returns how many. */
int cg_band_nodes(int method, double *out)
{
    if (method == DP_DOP853) {
        for (int i = 0; i < 16; ++i) out[i] = dop853_c[i];
        return 16;
    }
    for (int i = 0; i < 7; ++i) out[i] = dopri5_c[i];
    return 7;
}

/* A stage at t of the step being attempted refused (1) or not. */
static int cg_band_refuses(const cg_band_t *b, double t)
{
    return b && b->active && isfinite(b->t_pass) && fabs(t - b->t_pass) < b->width;
}

static void cg_band_drop(cg_band_t *b)
{
    b->t_pass = NAN;
    b->refused = 0;
}

/* The next attempt's step size d->h from d->t (module comment: place). */
static void cg_band_place(cg_band_t *b, dp_t *d)
{
    if (!b) return;
    b->h_placed = NAN;
    if (!isfinite(b->t_pass)) return;
    const double h = fmin(d->h, d->hmax), D = b->t_pass - d->t;
    if (D > (1.0 + b->at) * h) return;                 /* beyond this step and the next */
    if (D < b->width) { cg_band_drop(b); return; }     /* the step starts inside the band */
    d->h = b->h_placed = D <= b->at * h ? D / b->at : D / (1.0 + b->at);
    ++b->placed;
}

/* A refused attempt of size h (CG_BAND; the loop places the step again from h).  Placed again from
 * the size a placement gave it, the attempt would be the same one, refused at the same stage: the
 * prediction is dropped at once.  An attempt the error test shortened after its placement is placed
 * again, up to `tries` refusals in a row. */
static void cg_band_refused(cg_band_t *b, double h)
{
    ++b->refusals;
    if (h == b->h_placed || ++b->refused > b->tries) cg_band_drop(b);
}

/* After the accepted step [t_old, t] with σ_min estimate sigma at t and next proposed step h. */
static void cg_band_accepted(cg_band_t *b, double t_old, double t, double sigma, double h)
{
    if (!b) return;
    b->refused = 0;
    if (isfinite(b->t_pass) && t_old < b->t_pass && b->t_pass <= t) {    /* crossed */
        b->n_hist = 0;
        cg_band_drop(b);
        return;
    }
    b->t1 = b->t2; b->s1 = b->s2;
    b->t2 = t; b->s2 = sigma;
    if (b->n_hist < 2) ++b->n_hist;
    if (b->n_hist < 2 || !(b->s1 > b->s2 && b->s2 > 0.0) || !(b->t2 > b->t1)) {
        cg_band_drop(b);
        return;
    }
    const double t_pass = b->t2 + b->s2 * (b->t2 - b->t1) / (b->s1 - b->s2);
    if (!isfinite(b->t_pass)) b->width = b->clear * h;   /* a new pass: its band's half-width */
    b->t_pass = t_pass;
}
