/* The step loop of `simulate` in compiled code (MBS Studio, solver.codegen.segment).
 *
 * cg_segment advances the independent state y = [z, ż] of one partition (reduced.c, Kim & Yoo (1997)
 * eqs. 7, 8, 13) with dp_step (dopri.c, DOP853 or DOPRI5), adams_step (adams.c, LSODA's variable-order
 * Adams: integrator "adams") or bdf_step (bdf.c, variable-order BDF/NDF: integrator "bdf", and "auto"
 * and "adams" after their stiffness switch) from the last accepted step towards the end time and, at
 * every output time a step passes, writes the consistent state there: y from the dense output, then
 * one cg_reduced solve (q, q̇, q̈, λ, max |Φ|, the solve's estimate of σ_min(Φ_q[rows] U), and
 * Φ_q[rows] when asked).  Each step's (t, h) goes
 * into a buffer.  Every solve starts Newton from the last accepted state moved along its q̇ (not from
 * the last solve: a stage of a long step that will be rejected may converge to the other assembly
 * branch of a loop, and the steps after it would follow that branch) — but BDF's solves at the time of
 * the last solve (its Newton iterates and Jacobian columns at one t_{n+1}, segment_solve) start from that
 * solve, as the Python loop's (Run._guess): near a pass where Φ_q[rows] is ill-conditioned, solves from
 * the prediction differ by the position tolerance times ‖∂q/∂z‖, noise in f that BDF's contraction test
 * read as divergence; its steps crept into the pass and lost the velocities there (seeds 3156, 1022:
 * docs/validation.md); an attempt whose Newton failed so with a fresh Jacobian is tried once more with
 * every solve from the prediction (bdf.c's afresh) before its step is halved: at the rigid four-bar's
 * flattened pass (LU, 0.1763 s) the solves started from the previous iterate's did not contract (rate
 * 0.97 at h = 1.6e-9 s, where I − cJ ≈ I: each correction c (f(y⁽ⁱ⁺¹⁾) − f(y⁽ⁱ⁾)) as large as the one
 * before, f following the start carried from solve to solve) and the step collapsed; from the
 * prediction 3 of that run's 5 retries converge (2 iterations each) and it crosses the pass.  On seeds
 * 3156 and 1022 all 8 retries fail (their attempts are halved as before), so their runs are unchanged
 * — and unwraps the joint angles
 * against their prediction from the last accepted state (solver.formulations.branches.py: a solve whose
 * angle departs more than `guard` refuses the step, which is retried `shrink` times shorter; an
 * accepted step caps the next one).  Near a singular pass the steps are placed so that no stage lands
 * in its round-off band (band.c: the pass predicted from σ_min, put at the middle of the widest gap
 * between the method's stages; a stage within the band refuses the attempt).  It returns to Python (solver/analysis/segments.py), which mirrors Run._dynamic:
 *
 *   SEG_END        every output time is written
 *   SEG_BUDGET     max_steps steps or max_out output points in this call (Python stores the rows,
 *                  reports progress, checks cancel and calls again: nothing is lost or redone)
 *   SEG_STAGE      a right-hand side of a step failed (cg_status; the accepted state is unchanged);
 *                  a stage whose position Newton did not converge or whose forces or accelerations
 *                  are not finite (cg_reduced's CG_NOT_FINITE, CG_DYNAMICS_NOT_FINITE) first refuses
 *                  the step, retried `shrink` times shorter up to `stage_retries` times in a row
 *                  (step_rules.STAGE_RETRIES: a long explicit step into a stiff stop or contact, whose
 *                  trial stages run away — the iiwa on its limits reached |y| ≈ 1e186 at t = 1.87 s —
 *                  or a trial stage too far for the Newton start; a re-partition from the same state
 *                  would not help)
 *   SEG_DENSE      a right-hand side of the dense output (DOP853's extra stages) failed (cg_status;
 *                  the step stays accepted, none of its output points is written)
 *   SEG_OUTPUT     the solve at an output point failed (cg_status; the step stays accepted, the
 *                  point is not written: Python solves it itself or re-partitions from the step's start;
 *                  at the start row of a call that has not started, write_start_row: Python solves it)
 *   SEG_QUALITY    σ_min(Φ_q U) < bound · (an upper bound of σ_min(Φ_q[rows]): the smallest row norm, and
 *                  with out_cond the band estimate of cg_band_row_sigma) or ‖N‖_F > growth_bound
 *                  after a step: the cheap tests of Partition.degraded failed, Python decides with
 *                  the exact ones
 *   SEG_STALL      stall_steps accepted steps advanced less than stall_span (the STALL watchdog)
 *   SEG_TOO_SMALL  the step size fell to round-off of t (cg_status: the last refused stage's since the last
 *                  accepted step, CG_OK when none);  SEG_NOT_FINITE  the error estimate is not finite
 *                  on stage_retries shorter retries too (a refused step, as a non-finite stage)
 *   SEG_STIFF      the step size is limited by stability, not accuracy: h·ρ (dopri.c, dp_stiffness) in
 *                  [stiff_low, stiff_high] (just past the stability boundary; Adams: LSODA's step ratio
 *                  h_BDF/h_Adams of adams.c, one step past 5 switches) on stiff_steps accepted steps, a
 *                  run of stiff_reset steps outside starting the count again (Hairer's DOP853 counts, 15 and
 *                  6; stiff_steps 0: never); the step and its output points are written and the loop has
 *                  switched to BDF (bdf.c) from the accepted state: Python records the event and calls again
 *                  (step_rules.STIFF_*)
 *
 * Every rule above holds for every method but the singular-pass rule (band.c), which only the Runge–Kutta
 * pairs take (segment_start_bdf; Adams as BDF: solver/analysis/segments.py): a multistep attempt's right-hand
 * sides (corrector iterations, BDF's finite-difference Jacobian's columns) and the solve of its accepted
 * state are this loop's stages.
 */

typedef void (*cg_time_t)(double t, double *f, double *fd, double *fdd, double *u);

int cc_generalized(void *ctx, const double *q, const double *qd, double *Q);    /* contact.c */
double cc_step_cap(const void *ctx);
void cc_links(void *ctx, int *link);

/* The root of x in a union–find forest of parent links (path halving; contact.c's links too). */
static int cg_root(int *parent, int x)
{
    while (parent[x] != x) { parent[x] = parent[parent[x]]; x = parent[x]; }
    return x;
}

typedef struct {
    cg_reduced_t *s;
    cg_time_t time_fn;              /* driver f, ḟ, f̈ and force inputs u at t; NULL: the model has none */
    const double *times;            /* output times, ascending; the last is the end time */
    int n_times, next_out;          /* the next output time to write */
    double bound;                   /* SEG_QUALITY thresholds (bound 0, growth_bound inf: never) */
    double growth_bound;
    int max_steps, max_out;         /* budget of one call */
    int stall_steps;                /* watchdog: window of accepted step times (a ring, kept by the caller) */
    double stall_span;
    double *window;
    int window_n, window_pos;
    dp_t dp;
    int started, phase;             /* phase 1: the accepted step's output points are being written */
    double t_last;                  /* the last solve: q_last, qd_last at t_last */
    double *q_last, *qd_last;
    double *q_acc, *qd_acc;         /* consistent state at dp.t (the last accepted step; Newton's start) … */
    double *q_prev, *qd_prev, t_prev;   /* … and at the start of that step */
    double sigma_acc, row_norm_acc; /* σ_min(Φ_q U) and an upper bound of σ_min(Φ_q[rows]) at dp.t (the
                                       smallest row norm; with out_cond, also cg_band_row_sigma's estimate when
                                       that decides SEG_QUALITY, as Partition._sigma_min_bound) … */
    double amplification_acc;       /* … and ‖N‖_F */
    double *y_out;                  /* 2 dof: y at the output point being solved */
    int n_out, store_jac;           /* rows written in this call; 1: also Φ_q[rows] of each row (dense r × nq,
                                       or a band problem's J entries: banded.c's j_at order) */
    double *out_t, *out_q, *out_qd, *out_qdd, *out_lam, *out_viol, *out_jac;
    int n_steps;                    /* steps of this call */
    double *step_t, *step_h;
    long rhs_count;                 /* right-hand sides of this call */
    int cg_status;                  /* status of the failed cg_reduced (SEG_STAGE, SEG_OUTPUT) */
    double fail_t, *fail_y;         /* and its time and state (2 dof) */
    double *ang_acc, *ang_rate;     /* na unwrapped angles at dp.t and their rates (branches.Branches) */
    double guard, shrink;           /* branches.BRANCH_GUARD, BRANCH_SHRINK */
    long branch_refusals;           /* steps refused by the branch rule in this call */
    double *out_sigma;              /* per row: the solve's σ_min(Φ_q[rows] U) estimate (reduced.c) */
    int stage_retries;              /* step_rules.STAGE_RETRIES: a stage's failed Newton retries the step shorter */
    double stiff_low, stiff_high;   /* SEG_STIFF: h·ρ band, steps in it, steps outside it that reset the count */
    int stiff_steps, stiff_reset;
    int stiff_count, nonstiff_count;    /* the counts (kept across calls of one partition) */
    cg_band_t *band;                /* the stages kept out of a singular pass's band (band.c); NULL: never */
    /* the output rows' post-processing in C (output_tree.c's cg_tree_output or output_cartesian.c's
     * cg_cartesian_output, and its context: solver/codegen/output.py; NULL: in Python) */
    void (*k_output)(void *output, const double *q, const double *qd, const double *qdd, int row);
    void *output;
    bdf_t bdf;                      /* the BDF's history, Jacobian and LU (bdf.c; dp.method DP_BDF) */
    double stiff_h, stiff_h_rho;    /* SEG_STIFF: the last DOP853 step and its h·ρ */
    double *out_cond;               /* per row: σ_min / σ_max of Φ_q[rows] (banded.c cg_band_row_sigma; NULL: in
                                       Python, from out_jac and out_sigma; set from partition.COMPILED_ESTIMATE_ROWS) */
    adams_t adams;                  /* Adams' Nordsieck history (adams.c; dp.method DP_ADAMS) */
    /* the structure of BDF's Jacobian (segment_groups; col_cluster NULL: dense) */
    int ncl, nbody;                 /* clusters, bodies */
    const int *col_cluster;         /* per unknown of y (2 dof): its cluster (solver/codegen/segment.py clusters) */
    const int *body_cluster;        /* per body: its cluster (−1: it moves with no unknown) */
    int *cl_parent, *cl_label, *body_link;   /* work: ncl, ncl, nbody */
} cg_segment_t;

enum { SEG_END = 0, SEG_BUDGET = 1, SEG_STAGE = 2, SEG_OUTPUT = 3, SEG_QUALITY = 4, SEG_STALL = 5,
       SEG_TOO_SMALL = 6, SEG_NOT_FINITE = 7, SEG_DENSE = 8, SEG_STIFF = 9 };

/* The contact elements' step cap (contact.c, cc_step_cap) at the state of the last right-hand side;
 * INFINITY without them. */
static double segment_travel_cap(const cg_segment_t *g)
{
    return g->s->k_extra == cc_generalized ? cc_step_cap(g->s->extra) : INFINITY;
}

static int segment_groups(void *ctx, double t, const double *y, double *f, int *comp);

/* The integrator of a segment: method DP_DOP853, DP_DOPRI5, DP_ADAMS or DP_BDF, memory DP_MEMORY(2 dof)
 * doubles; bdf_memory BDF_MEMORY(2 dof) doubles and pivots 2 dof ints (a BDF, or a switch to it), jac_step
 * its Jacobian's relative difference step; adams_memory ADAMS_MEMORY(2 dof) doubles (DP_ADAMS). */
void cg_segment_init(cg_segment_t *g, int method, double *memory, double rtol, double atol, double hmax,
                     double *bdf_memory, int *pivots, double jac_step, double *adams_memory)
{
    dp_init(&g->dp, method, 2 * g->s->dof, memory, rtol, atol, hmax);
    bdf_init(&g->bdf, 2 * g->s->dof, bdf_memory, pivots, rtol, jac_step);
    if (method == DP_ADAMS) adams_init(&g->adams, 2 * g->s->dof, adams_memory);
    g->bdf.groups = segment_groups;
}

/* The solve at (t, y): Newton from the last accepted state moved along its q̇, or on BDF from the last
 * solve when it is at t and BDF is not retrying a failed Newton afresh (module comment; t_last is NaN
 * before a partition's first solve). */
static int segment_solve(cg_segment_t *g, double t, const double *y, int level)
{
    cg_reduced_t *s = g->s;
    const int nq = s->nq;
    const double dt = t - g->dp.t;
    if (g->time_fn) g->time_fn(t, s->f, s->fd, s->fdd, s->u);
    if (g->dp.method == DP_BDF && t == g->t_last && !g->bdf.afresh) memcpy(s->q, g->q_last, sizeof(double) * nq);
    else for (int k = 0; k < nq; ++k) s->q[k] = g->q_acc[k] + dt * g->qd_acc[k];
    cg_branch_predict(s, g->ang_acc, g->ang_rate, dt);
    int status = cg_reduced(s, y, level);
    if (status == CG_OK && cg_branch_departure(s, g->ang_acc, g->ang_rate, dt) > g->guard) status = CG_BRANCH;
    if (status == CG_OK) {
        memcpy(g->q_last, s->q, sizeof(double) * nq);
        memcpy(g->qd_last, s->qd, sizeof(double) * nq);
        g->t_last = t;
    } else {
        g->cg_status = status;
        g->fail_t = t;
        memcpy(g->fail_y, y, sizeof(double) * 2 * s->dof);
    }
    return status;
}

static int segment_rhs(void *ctx, double t, const double *y, double *dy)
{
    cg_segment_t *g = ctx;
    const int f = g->s->dof;
    if (cg_band_refuses(g->band, t)) return CG_BAND;
    ++g->rhs_count;
    const int status = segment_solve(g, t, y, 2);
    if (status) return status;
    for (int c = 0; c < f; ++c) { dy[c] = y[f + c]; dy[f + c] = g->s->zdd[c]; }
    return 0;
}

/* bdf.c's groups (its "structure"): the clusters of the unknowns (sets that only contact couples:
 * segment.py clusters), joined by the pairs of bodies with a contact point at (t, y) (contact.c's links,
 * recorded during one right-hand side there), numbered in order of first appearance; 0 (one dense block)
 * without clusters. */
static int segment_groups(void *ctx, double t, const double *y, double *f, int *comp)
{
    cg_segment_t *g = ctx;
    if (!g->col_cluster) return 0;
    cg_reduced_t *s = g->s;
    const int contact = s->k_extra == cc_generalized;
    if (contact) cc_links(s->extra, g->body_link);
    const int code = segment_rhs(g, t, y, f);
    if (contact) cc_links(s->extra, NULL);
    if (code) return -code;
    int *parent = g->cl_parent, *label = g->cl_label;
    for (int k = 0; k < g->ncl; ++k) { parent[k] = k; label[k] = -1; }
    /* a contact set whose root moves with no unknown (a body welded to ground: a wall) is re-rooted on a
     * member that has one, so that two bodies touching the same wall, and each other, still join */
    for (int b = 0; contact && b < g->nbody; ++b) {
        const int r = cg_root(g->body_link, b);
        if (g->body_cluster[b] >= 0 && g->body_cluster[r] < 0) g->body_link[r] = g->body_link[b] = b;
    }
    for (int b = 0; contact && b < g->nbody; ++b) {
        const int a = g->body_cluster[b], r = g->body_cluster[cg_root(g->body_link, b)];
        if (a >= 0 && r >= 0) parent[cg_root(parent, a)] = cg_root(parent, r);
    }
    int nc = 0;
    for (int i = 0; i < 2 * s->dof; ++i) {
        const int r = cg_root(parent, g->col_cluster[i]);
        if (label[r] < 0) label[r] = nc++;
        comp[i] = label[r];
    }
    return nc;
}

/* BDF's accepted state: the consistent q, q̇ at (t, y) (level 1: no accelerations, which BDF does not
 * need there; level 2 with contact elements, whose step cap remember_accepted reads from the last
 * solve), the last solve, as remember_accepted takes it. */
static int segment_accept(void *ctx, double t, const double *y)
{
    cg_segment_t *g = ctx;      /* level 2 with contact elements: the step cap is read at this state */
    return segment_solve(g, t, y, g->s->k_extra == cc_generalized ? 2 : 1);
}

/* One accepted step of the segment's method (dp_step's or bdf_step's codes).  A step placed across a
 * predicted singular pass (band.c) that reaches beyond the last output time keeps its placed size:
 * cut at t_end, the pass would fall at another fraction of it, a stage in the band (t_end on the pass:
 * the step's last stage at the pass itself), and every attempt would be refused until the step size
 * collapsed (the four-bar row N = 1 with t_end = its first pass, 0.7084500088 s).  The step ends past
 * t_end, whose output point comes from its dense output; Python ends the run at that row
 * (segments.run_segments). */
static int segment_step(cg_segment_t *g)
{
    dp_t *d = &g->dp;
    double t_end = g->times[g->n_times - 1];
    if (g->band && isfinite(g->band->h_placed) && d->t + g->band->h_placed > t_end) t_end = d->t + g->band->h_placed;
    if (d->method == DP_ADAMS)
        return adams_step(d, &g->adams, segment_rhs, segment_accept, g, t_end, DP_K(d, 16), DP_K(d, 17));
    if (d->method != DP_BDF) return dp_step(d, segment_rhs, g, t_end);
    return bdf_step(d, &g->bdf, segment_rhs, segment_accept, g, t_end, DP_K(d, 16), DP_K(d, 17));
}

/* The state at t in the last accepted step (its dense output), into out. */
static void segment_dense(const cg_segment_t *g, double t, double *out)
{
    const dp_t *d = &g->dp;
    if (d->method == DP_ADAMS) adams_dense(d, &g->adams, t, out);
    else if (d->method == DP_BDF) bdf_dense(d, &g->bdf, t, out);
    else dp_dense(d, t, out);
}

/* From the accepted state (dp.t, dp.y, dp.f) on with BDF: its first step (HINIT for order 1) and its
 * Jacobian; without the singular-pass rule (band.c): placed short before a predicted pass, BDF — whose
 * step grows only after k + 1 equal steps — crept towards the four-bar row's pass in steps of 1e-11 s
 * until its partition degraded there (25 re-partitions, no progress); without the rule it crosses the
 * passes as scipy's BDF does in the Python loop (tests/solver/test_compiled_bdf.py).  Returns a
 * right-hand side's code. */
static int segment_start_bdf(cg_segment_t *g)
{
    dp_t *d = &g->dp;
    d->method = DP_BDF;
    g->band = NULL;
    const int again = segment_rhs(g, d->t, d->y, d->f);    /* the contact step cap at the accepted state */
    if (again) return again;                                /* (the last solve may be an output point's) */
    const double cap = segment_travel_cap(g);
    const int code = dp_initial_step(d, segment_rhs, g, g->times[g->n_times - 1], 2);
    if (code) return code;
    d->h = fmin(d->h, cap);
    d->rejected_last = 0;
    return bdf_start(d, &g->bdf, segment_rhs, g);
}

/* min_i ‖Φ_q[rows[i]]‖: over the dense rows, or over the band problem's J (its rows reordered, their
 * entries by columns ascending at s->jac[j_at[e]]: the same sums without the zeros), or on tree_reduced's
 * normalization rows over the columns each row owns (col_row; the same sums without the zeros: the
 * dense loop was r · nq a step, 7 million for 1000 free bodies, more than a right-hand side). */
static double smallest_row_norm(const cg_reduced_t *s)
{
    const cg_banded_t *b = s->band;
    double low = INFINITY;
    double *sum = s->k_tree && s->r ? calloc((size_t)s->r, sizeof(double)) : NULL;
    if (sum) {
        for (int k = 0; k < s->nq; ++k) {
            const int i = s->col_row[k];
            if (i >= 0) sum[i] += s->jac[(size_t)s->rows[i] * s->nq + k] * s->jac[(size_t)s->rows[i] * s->nq + k];
        }
        for (int i = 0; i < s->r; ++i) low = fmin(low, sum[i]);
        free(sum);
        return sqrt(low);
    }
    for (int i = 0; i < s->r; ++i) {
        double sum = 0.0;
        if (b) {
            for (int e = b->j_ptr[i]; e < b->j_ptr[i + 1]; ++e) sum += s->jac[b->j_at[e]] * s->jac[b->j_at[e]];
        } else {
            const double *row = s->jac + (size_t)s->rows[i] * s->nq;
            for (int k = 0; k < s->nq; ++k) sum += row[k] * row[k];
        }
        if (sum < low) low = sum;
    }
    return sqrt(low);
}

/* The last solve (at dp.t: the start, or k7 of the step just accepted, dt after the step's start)
 * becomes the accepted state; the branch rule caps the next step. */
static void remember_accepted(cg_segment_t *g, double dt)
{
    const size_t bytes = sizeof(double) * g->s->nq;
    memcpy(g->q_acc, g->q_last, bytes);
    memcpy(g->qd_acc, g->qd_last, bytes);
    const double departure = cg_branch_departure(g->s, g->ang_acc, g->ang_rate, dt);
    cg_branch_accept(g->s, g->ang_acc, g->ang_rate, dt);
    if (dt > 0.0) g->dp.h = fmin(g->dp.h, cg_branch_step_cap(dt, departure, g->guard));
    g->dp.h = fmin(g->dp.h, segment_travel_cap(g));      /* no contact shape carried through another */
}

/* Write the output point at t (its solve just succeeded) as row n_out. */
static void write_row(cg_segment_t *g, double t)
{
    const cg_reduced_t *s = g->s;
    const int nq = s->nq, m = s->m, row = g->n_out++;
    const size_t at = (size_t)row * nq;
    g->out_t[row] = t;
    memcpy(g->out_q + at, s->q, sizeof(double) * nq);
    memcpy(g->out_qd + at, s->qd, sizeof(double) * nq);
    memcpy(g->out_qdd + at, s->qdd, sizeof(double) * nq);
    memcpy(g->out_lam + (size_t)row * m, s->lam, sizeof(double) * m);
    double viol = 0.0;
    for (int i = 0; i < m; ++i) viol = fmax(viol, fabs(s->phi[i]));
    g->out_viol[row] = viol;
    g->out_sigma[row] = *s->sigma_min;
    if (g->k_output) g->k_output(g->output, s->q, s->qd, s->qdd, row);
    double sv[2];
    if (g->out_cond) g->out_cond[row] = cg_band_row_sigma(s, sv) && sv[1] > 0.0 ? sv[0] / sv[1] : 0.0;
    if (g->store_jac && s->band) {      /* the band problem's J entries (j_at order): O(nnz) a row */
        const cg_banded_t *b = s->band;
        const int nnz = b->j_ptr[s->r];
        for (int e = 0; e < nnz; ++e) g->out_jac[(size_t)row * nnz + e] = s->jac[b->j_at[e]];
    } else if (g->store_jac) {
        for (int i = 0; i < s->r; ++i)
            memcpy(g->out_jac + ((size_t)row * s->r + i) * nq, s->jac + (size_t)s->rows[i] * nq, sizeof(double) * nq);
    }
}

/* The output point at the start of a call that has not started (the run's first row, when the caller's
 * next_out is an output time at dp.t): the consistent state solved there with λ from the caller's q_acc,
 * as the Python loop solves its start row, and written as row n_out.  0, or SEG_OUTPUT when that solve
 * failed (fail_t, fail_y; nothing written). */
static int write_start_row(cg_segment_t *g)
{
    const double t = g->dp.t;
    if (g->next_out >= g->n_times || g->times[g->next_out] > t + 1e-12 * fmax(1.0, fabs(t)) || g->n_out >= g->max_out)
        return 0;
    if (segment_solve(g, t, g->dp.y, 3)) return SEG_OUTPUT;
    write_row(g, g->times[g->next_out]);
    ++g->next_out;
    return 0;
}

/* Advance (module comment).  On the first call of a partition the caller has set dp.t, dp.y,
 * q_acc/qd_acc (the consistent start) and started = 0. */
int cg_segment(cg_segment_t *g)
{
    dp_t *d = &g->dp;
    const int nq = g->s->nq;
    g->n_out = g->n_steps = 0;
    g->rhs_count = 0;
    int newton_retries = 0;             /* stage failures refused in a row (SEG_STAGE) */
    if (!g->started) {
        g->t_last = NAN;                /* no solve of this partition yet (segment_solve) */
        if (write_start_row(g)) return SEG_OUTPUT;
        if (segment_rhs(g, d->t, d->y, d->f)) return SEG_STAGE;
        const double cap = segment_travel_cap(g);
        const int code = d->method == DP_BDF ? segment_start_bdf(g)     /* Adams: as BDF, from order 1 */
                         : dp_initial_step(d, segment_rhs, g, g->times[g->n_times - 1], d->method == DP_ADAMS ? 2 : d->method);
        if (code) return SEG_STAGE;
        d->h = fmin(d->h, cap);
        if (d->method == DP_ADAMS) adams_start(d, &g->adams);
        g->started = 1;                 /* q_acc, qd_acc, ang_acc, ang_rate: the caller's start */
        g->phase = 0;
    }
    for (;;) {
        if (g->phase == 0) {
            if (g->next_out >= g->n_times) return SEG_END;
            if (g->n_steps >= g->max_steps || g->n_out >= g->max_out) return SEG_BUDGET;
            memcpy(g->q_prev, g->q_acc, sizeof(double) * nq);
            memcpy(g->qd_prev, g->qd_acc, sizeof(double) * nq);
            g->t_prev = d->t;
            cg_band_place(g->band, d);
            if (g->band) g->band->active = 1;
            const int code = segment_step(g);
            if (g->band) g->band->active = 0;
            if (code == CG_BAND) {                 /* a stage in the band: the step placed again */
                cg_band_refused(g->band, d->h);
                d->rejected_last = 1;
                continue;
            }
            if (code == DP_TOO_SMALL) return SEG_TOO_SMALL;
            if (code == CG_BRANCH) {               /* the state is untouched: the step again, shorter */
                d->h *= g->shrink;
                d->rejected_last = 1;
                ++g->branch_refusals;
                continue;
            }
            const int trial = code == CG_NO_CONVERGENCE || code == CG_NOT_FINITE || code == CG_DYNAMICS_NOT_FINITE
                              || code == DP_NOT_FINITE;
            if (trial && newton_retries < g->stage_retries) {
                ++newton_retries;                  /* a shorter step (module comment) */
                d->h *= g->shrink;
                d->rejected_last = 1;
                continue;
            }
            if (code == DP_NOT_FINITE) return SEG_NOT_FINITE;
            if (code) return SEG_STAGE;
            newton_retries = 0;
            g->cg_status = CG_OK;                  /* a refused stage's status does not outlive the step */
            remember_accepted(g, d->t - d->t_old); /* k7 was solved at (dp.t, dp.y) */
            cg_reduced_sigma(g->s);                /* its last solve, at the new state, was a right-hand side */
            g->sigma_acc = *g->s->sigma_min;
            g->amplification_acc = *g->s->amplification;
            g->row_norm_acc = smallest_row_norm(g->s);
            double sv[2];                          /* with out_cond: an upper bound of σ_min (Partition._sigma_min_bound's) */
            if (g->out_cond && g->sigma_acc < g->bound * g->row_norm_acc && cg_band_row_sigma(g->s, sv))
                g->row_norm_acc = fmin(g->row_norm_acc, sv[0]);
            cg_band_accepted(g->band, d->t_old, d->t, g->sigma_acc, fmin(d->h, d->hmax));
            g->phase = 1;
        }
        const double reached = d->t + 1e-12 * fmax(1.0, fabs(d->t));
        if (g->next_out < g->n_times && g->times[g->next_out] <= reached && (d->method == DP_DOP853 || d->method == DP_DOPRI5)
            && dp_prepare_dense(d, segment_rhs, g))
            return SEG_DENSE;
        while (g->next_out < g->n_times && g->times[g->next_out] <= reached) {
            if (g->n_out >= g->max_out) return SEG_BUDGET;
            const double tout = g->times[g->next_out];
            segment_dense(g, tout, g->y_out);
            if (segment_solve(g, tout, g->y_out, 3)) return SEG_OUTPUT;   /* with λ */
            write_row(g, tout);
            ++g->next_out;
        }
        g->phase = 0;
        g->step_t[g->n_steps] = d->t;
        g->step_h[g->n_steps] = d->t - d->t_old;
        ++g->n_steps;
        g->window[g->window_pos] = d->t;
        g->window_pos = (g->window_pos + 1) % g->stall_steps;
        if (g->window_n < g->stall_steps) ++g->window_n;
        if (g->window_n == g->stall_steps && d->t - g->window[g->window_pos] < g->stall_span) return SEG_STALL;
        if (g->stiff_steps > 0 && d->method != DP_BDF) {
            if (d->h_rho > g->stiff_low && d->h_rho < g->stiff_high) {
                g->nonstiff_count = 0;
                if (++g->stiff_count >= g->stiff_steps) {
                    g->stiff_h = d->h_old;           /* the event's numbers, before the switch */
                    g->stiff_h_rho = d->h_rho;
                    return segment_start_bdf(g) ? SEG_STAGE : SEG_STIFF;
                }
            } else if (++g->nonstiff_count >= g->stiff_reset) {
                g->stiff_count = 0;
            }
        }
        if (g->bound > 0.0 && g->sigma_acc < g->bound * g->row_norm_acc) return SEG_QUALITY;
        if (g->amplification_acc > g->growth_bound) return SEG_QUALITY;
    }
}
