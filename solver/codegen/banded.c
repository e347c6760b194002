/* The reduced right-hand side of many-loop models with a band factorization of the dependent block
 * (MBS Studio, solver.codegen.reduced; compiled after reduced.c into the runtime library).
 *
 * reduced.c's cg_reduced with the dense dependent basis U replaced by a sparse basis B of the same range
 * (as solver/partitioning/sparse.py does in Python): every formula there involves U only through
 * U (Φ_q U)⁻¹ and (Φ_q U)⁻ᵀ Uᵀ, which do not change when U is replaced by B = U K, K invertible:
 *
 *   LU partition:  B = U (columns of the identity: the dependent coordinates)
 *   QR, SVD:       B = Φ_q[rows](q_ref)ᵀ (U spans its range)
 *
 * so with J = Φ_q[rows] and S = J B (r × r, sparse):
 *
 *   positions      q ← q − B S⁻¹ Φ[rows] (Newton, Kim & Yoo (1997) eq. 7), started on the partition's
 *                  affine set at q_guess + V (z − Vᵀ (q_guess − q_ref))
 *   velocities     q̇ = V ż + B S⁻¹ (ν − J V ż)                                  (Kim & Yoo (1997) eq. 8)
 *   null space     N = V − B S⁻¹ J V,  c = B S⁻¹ γ, then reduced.c's tangent-space accelerations (eq. 13)
 *   multipliers    Sᵀ λ_rows = Bᵀ (Q − M q̈), then reduced.c's minimum-norm correction with
 *                  X = J_red B S⁻¹
 *   σ_min(J U)     power iteration on (B S⁻¹)ᵀ (B S⁻¹) = (J U)⁻ᵀ (J U)⁻¹ (U has orthonormal columns): the
 *                  operator of reduced.c's sigma_min_estimate, from the same start
 *   σ(J)           the conditioning read-out's estimates of σ_min(J), σ_max(J) (cg_band_row_sigma, at the
 *                  output points: power iterations on G = J Jᵀ and G⁻¹, G banded in the same order)
 *
 * The rows of J and the columns of B come in an order fixed once per partition in Python
 * (reduced.py: reverse Cuthill–McKee on the pattern of S, scipy.sparse.csgraph; Cuthill & McKee
 * (1969)), which makes S banded with kl sub- and ku super-diagonals.  S is assembled from Φ_q's
 * entries by a fixed linear map (reduced.py) and factored by Gaussian elimination with partial
 * pivoting in band storage (LAPACK's dgbtf2 / dgbtrs, Anderson et al. (1999) §5.1.3): the pivots are
 * those partial pivoting picks on the dense S, the fill stays within kl + ku super-diagonals, and a
 * factorization costs O(r kl (kl + ku)) instead of reduced.c's O(r³), a solve O(r (2 kl + ku)).
 * Products with J, B, V and M (its pattern when the system gives one: relative.c's Tᵀ M_c T, the
 * Cartesian bodies' blocks) run over their non-zeros, and the solves skip zeros, so a partition of
 * separate mechanisms (partition.qr_bases: V, and so N, block-sparse) costs O(nq) per evaluation;
 * N (nq × dof) is held dense.  Φ_q and M are read only at the positions the problem names (j_at,
 * red_at, m_at: dense row-major, or packed in their patterns by a relative library's kernels,
 * relative.c's cg_position_packed and cg_dynamics_packed), so nothing here is O(m · nq).
 */

/* The band problem of one partition (cg_banded_t of reduced.c's cg_reduced_t.band; reduced.py, _Band). */
struct cg_banded {
    int kl, ku;                   /* sub- and super-diagonals of S in the fixed order */
    const int *row;               /* r: the constraint row of S's row i (the independent rows, reordered) */
    const int *pos;               /* r: the index of S's row i in the independent rows (sigma_min_power) */
    int n_map;                    /* assembly: S[s_at[e]] += coef[e] · Φ_q[jac_at[e]] (band storage; Φ_q's
                                     buffer: dense row-major, or packed in its pattern by relative.c) */
    const int *s_at, *jac_at;
    const double *coef;
    const int *j_ptr, *j_at, *j_col;      /* J = Φ_q[row] by rows: entries j_ptr[i] … j_ptr[i+1]−1 at
                                             position j_at[e] of Φ_q's buffer (dense or packed), column j_col[e] */
    const int *b_ptr, *b_col;             /* B (nq × r) by rows (CSR), columns in the fixed order */
    const double *b_val;
    const int *m_ptr, *m_col, *m_at;      /* the pattern of the kernels' M by rows, entry e at position m_at[e]
                                             of M's buffer (dense row-major, or packed in the pattern by
                                             relative.c's cg_dynamics_packed; NULL: dense M, every entry) */
    const int *red_ptr, *red_at, *red_col;  /* Φ_q's redundant rows (s->red_rows order) by rows: entries
                                               red_ptr[k] … at position red_at[e] of Φ_q, column red_col[e] */
    const int *v_ptr, *v_col;             /* V (nq × dof) by rows (CSR): its non-zeros (s->V, sparse for a */
    const double *v_val;                  /* QR partition of separate mechanisms: partition.qr_bases) */
    int gw;                               /* sub- and super-diagonals of J Jᵀ in the fixed order (−1: too wide) */
};

#define BAND(ab, ld, kv, i, j) (ab)[(size_t)(j) * (ld) + (kv) + (i) - (j)]

/* Band storage ab (column-major, ld = 2 kl + ku + 1 rows, the first kl for the fill) of an n × n matrix
 * with kl sub- and ku super-diagonals factored in place (dgbtf2); 0 when it is singular. */
static int band_lu(int kl, int ku, int n, double *ab, int *piv)
{
    const int kv = kl + ku, ld = 2 * kl + ku + 1;
    int ju = 0;
    for (int j = 0; j < n; ++j) {
        const int km = kl < n - 1 - j ? kl : n - 1 - j;
        int p = j;
        double big = fabs(BAND(ab, ld, kv, j, j));
        for (int i = j + 1; i <= j + km; ++i)
            if (fabs(BAND(ab, ld, kv, i, j)) > big) { big = fabs(BAND(ab, ld, kv, i, j)); p = i; }
        piv[j] = p;
        if (big == 0.0 || !isfinite(big)) return 0;
        if (p + ku > ju) ju = p + ku < n - 1 ? p + ku : n - 1;
        if (p != j)
            for (int c = j; c <= ju; ++c) {
                const double t = BAND(ab, ld, kv, p, c);
                BAND(ab, ld, kv, p, c) = BAND(ab, ld, kv, j, c);
                BAND(ab, ld, kv, j, c) = t;
            }
        const double inv = 1.0 / BAND(ab, ld, kv, j, j);
        for (int i = j + 1; i <= j + km; ++i) BAND(ab, ld, kv, i, j) *= inv;
        for (int c = j + 1; c <= ju; ++c) {
            const double u = BAND(ab, ld, kv, j, c);
            if (u != 0.0)
                for (int i = j + 1; i <= j + km; ++i) BAND(ab, ld, kv, i, c) -= BAND(ab, ld, kv, i, j) * u;
        }
    }
    return 1;
}

/* x ← A⁻¹ x of band_lu's factors (dgbtrs, no transpose) */
static void band_lu_solve(int kl, int ku, int n, const double *ab, const int *piv, double *x)
{
    const int kv = kl + ku, ld = 2 * kl + ku + 1;
    for (int j = 0; j < n; ++j) {
        const int lm = kl < n - 1 - j ? kl : n - 1 - j;
        if (piv[j] != j) { const double t = x[piv[j]]; x[piv[j]] = x[j]; x[j] = t; }
        const double v = x[j];
        if (v != 0.0) for (int i = j + 1; i <= j + lm; ++i) x[i] -= BAND(ab, ld, kv, i, j) * v;
    }
    for (int j = n - 1; j >= 0; --j) {
        const double v = (x[j] /= BAND(ab, ld, kv, j, j));
        if (v != 0.0) for (int i = j - kv > 0 ? j - kv : 0; i < j; ++i) x[i] -= BAND(ab, ld, kv, i, j) * v;
    }
}

/* S assembled into band storage ab and factored in place (band_lu); 0 when S is singular. */
static int band_factor(const cg_banded_t *b, int n, const double *jac, double *ab, int *piv)
{
    memset(ab, 0, sizeof(double) * (size_t)(2 * b->kl + b->ku + 1) * n);
    for (int e = 0; e < b->n_map; ++e) ab[b->s_at[e]] += b->coef[e] * jac[b->jac_at[e]];
    return band_lu(b->kl, b->ku, n, ab, piv);
}

/* x ← S⁻¹ x */
static void band_solve(const cg_banded_t *b, int n, const double *ab, const int *piv, double *x)
{
    band_lu_solve(b->kl, b->ku, n, ab, piv, x);
}

/* x ← S⁻ᵀ x (dgbtrs, transposed: PS = LU, Sᵀ = Uᵀ Lᵀ P).  Exact zeros at either end of x are not
 * worked through (the same numbers): Uᵀ's solve starts at x's first non-zero and stops once past its
 * last one with kl + ku zeros in a row (the rest stays 0); Lᵀ's starts at the last non-zero and stops
 * below the first one once kl steps in a row left zeros (their own entry and the one swapped with it):
 * a row of separate mechanisms costs O(block) per solve. */
static void band_solve_transposed(const cg_banded_t *b, int n, const double *ab, const int *piv, double *x)
{
    const int kl = b->kl, kv = kl + b->ku, ld = 2 * kl + b->ku + 1;
    int first = 0, last = n - 1;
    while (first < n && x[first] == 0.0) ++first;
    if (first == n) return;
    while (x[last] == 0.0) --last;
    int end = first, run = 0;
    for (int j = first; j < n; ++j) {
        double v = x[j];
        for (int i = j - kv > first ? j - kv : first; i < j; ++i) v -= BAND(ab, ld, kv, i, j) * x[i];
        x[j] = v / BAND(ab, ld, kv, j, j);
        if (x[j] != 0.0) { end = j; run = 0; } else if (j > last && ++run >= kv) break;
    }
    run = 0;
    for (int j = end < n - 2 ? end : n - 2; j >= 0; --j) {
        const int lm = kl < n - 1 - j ? kl : n - 1 - j;
        double v = x[j];
        for (int i = j + 1; i <= j + lm; ++i) v -= BAND(ab, ld, kv, i, j) * x[i];
        x[j] = v;
        if (piv[j] != j) { const double t = x[piv[j]]; x[piv[j]] = x[j]; x[j] = t; }
        if (x[j] != 0.0 || x[piv[j]] != 0.0) run = 0;      /* the kl entries above j zero: so is the rest */
        else if (j < first && ++run >= kl) break;
    }
}

/* out (nq) = B x (add: out += B x) */
static void basis_times(const cg_banded_t *b, int nq, const double *x, double *out, int add)
{
    for (int k = 0; k < nq; ++k) {
        double v = add ? out[k] : 0.0;
        for (int e = b->b_ptr[k]; e < b->b_ptr[k + 1]; ++e) v += b->b_val[e] * x[b->b_col[e]];
        out[k] = v;
    }
}

/* out (r) = Bᵀ v */
static void basis_t_times(const cg_banded_t *b, int nq, int r, const double *v, double *out)
{
    memset(out, 0, sizeof(double) * r);
    for (int k = 0; k < nq; ++k) {
        const double a = v[k];
        if (a != 0.0) for (int e = b->b_ptr[k]; e < b->b_ptr[k + 1]; ++e) out[b->b_col[e]] += b->b_val[e] * a;
    }
}

/* out (r) = J x at the current Φ_q */
static void rows_dot(const cg_banded_t *b, int r, const double *jac, const double *x, double *out)
{
    for (int i = 0; i < r; ++i) {
        double v = 0.0;
        for (int e = b->j_ptr[i]; e < b->j_ptr[i + 1]; ++e) v += jac[b->j_at[e]] * x[b->j_col[e]];
        out[i] = v;
    }
}

typedef struct { const cg_banded_t *b; int nq, r; const double *ab; const int *piv; double *work; const double *jac; }
    band_lu_t;

/* reduced.c's sigma_min_power operator for σ_min(J U) (module comment): x ← S⁻ᵀ Bᵀ B S⁻¹ x */
static void band_inverse(const void *ctx, double *x)
{
    const band_lu_t *d = ctx;
    band_solve(d->b, d->r, d->ab, d->piv, x);
    basis_times(d->b, d->nq, x, d->work, 0);
    basis_t_times(d->b, d->nq, d->r, d->work, x);
    band_solve_transposed(d->b, d->r, d->ab, d->piv, x);
}

/* reduced.c's minimum_norm X row: x = S⁻ᵀ Bᵀ J_red[k]ᵀ = (J_red[k] B S⁻¹)ᵀ, J_red[k] over its pattern
 * (basis_t_times' sums: columns ascending, zeros skipped) */
static void band_dual(const void *ctx, int k, double *x)
{
    const band_lu_t *d = ctx;
    const cg_banded_t *b = d->b;
    memset(x, 0, sizeof(double) * d->r);
    for (int e = b->red_ptr[k]; e < b->red_ptr[k + 1]; ++e) {
        const double a = d->jac[b->red_at[e]];
        const int c = b->red_col[e];
        if (a != 0.0) for (int z = b->b_ptr[c]; z < b->b_ptr[c + 1]; ++z) x[b->b_col[z]] += b->b_val[z] * a;
    }
    band_solve_transposed(b, d->r, d->ab, d->piv, x);
}

/* cg_reduced with s->band set (module comment): the same levels, outputs and statuses. */
static int band_reduced(cg_reduced_t *s, const double *y, int level)
{
    const cg_banded_t *b = s->band;
    const int nq = s->nq, r = s->r, f = s->dof, ld = 2 * b->kl + b->ku + 1;
    int status = CG_OK;
    double *work = malloc(sizeof(double) * ((size_t)ld * r + (size_t)r + 3 * (size_t)nq + (size_t)nq * f + f
                                            + (size_t)r * f + 1));
    int *piv = malloc(sizeof(int) * (r + 1 + 2 * (size_t)f));
    int *lo = piv + r + 1, *hi = lo + f;     /* f: the non-zero span of each column of X */
    double *ab = work;                      /* band storage of S, factored */
    double *x = ab + (size_t)ld * r;        /* r */
    double *vec = x + r;                    /* nq */
    double *vec2 = vec + nq;                /* nq */
    double *vec3 = vec2 + nq;               /* nq */
    double *N = vec3 + nq;                  /* nq × f */
    double *d = N + (size_t)nq * f;         /* f */
    double *X = d + f;                      /* f × r: column c of S⁻¹ Φ_q V at X + c r */

    /* ---- positions: Newton on q along B ---- */
    memcpy(d, y, sizeof(double) * f);       /* d = z − Vᵀ (q_guess − q_ref) */
    for (int k = 0; k < nq; ++k) {
        const double dq = s->q[k] - s->q_ref[k];
        for (int e = b->v_ptr[k]; e < b->v_ptr[k + 1]; ++e) d[b->v_col[e]] -= b->v_val[e] * dq;
    }
    for (int k = 0; k < nq; ++k)
        for (int e = b->v_ptr[k]; e < b->v_ptr[k + 1]; ++e) s->q[k] += b->v_val[e] * d[b->v_col[e]];
    int converged = 0;
    double prev = -1.0;
    for (int it = 0; it <= s->max_iter; ++it) {
        const double err = evaluate_position(s);
        *s->err = err;
        if (isnan(err)) { status = CG_NOT_FINITE; goto done; }
        if (err < s->tol || (prev >= 0.0 && err < s->accept && err > s->stall * prev)) { converged = 1; break; }
        if (it == s->max_iter) break;
        prev = err;
        if (!band_factor(b, r, s->jac, ab, piv)) { status = CG_SINGULAR; goto done; }
        for (int i = 0; i < r; ++i) x[i] = s->phi[b->row[i]];
        band_solve(b, r, ab, piv, x);
        basis_times(b, nq, x, vec, 0);
        for (int k = 0; k < nq; ++k) s->q[k] -= vec[k];
    }
    if (!converged) { status = CG_NO_CONVERGENCE; goto done; }
    if (level < 1) goto done;

    /* ---- velocities ---- */
    if (!band_factor(b, r, s->jac, ab, piv)) { status = CG_SINGULAR; goto done; }
    const band_lu_t lu = {b, nq, r, ab, piv, vec, s->jac};
    if (SIGMA_AT(level)) *s->sigma_min = sigma_min_power(r, band_inverse, &lu, b->pos, x);
    const double *zd = y + f;
    for (int k = 0; k < nq; ++k) {
        double v = 0.0;
        for (int e = b->v_ptr[k]; e < b->v_ptr[k + 1]; ++e) v += b->v_val[e] * zd[b->v_col[e]];
        vec[k] = v;                                           /* V ż */
    }
    rows_dot(b, r, s->jac, vec, x);                           /* ν − Φ_q V ż */
    for (int i = 0; i < r; ++i) x[i] = -x[i];
    for (int n = 0; n < s->ndrv; ++n)
        for (int i = 0; i < r; ++i) if (b->row[i] == s->drv_row[n]) x[i] += s->fd[n];
    band_solve(b, r, ab, piv, x);
    memcpy(s->qd, vec, sizeof(double) * nq);
    basis_times(b, nq, x, s->qd, 1);
    /* ---- null space: N = V − B S⁻¹ Φ_q V, column by column over the non-zeros ---- */
    memset(X, 0, sizeof(double) * (size_t)r * f);
    for (int i = 0; i < r; ++i)                               /* X = (Φ_q V)ᵀ */
        for (int e = b->j_ptr[i]; e < b->j_ptr[i + 1]; ++e) {
            const double a = s->jac[b->j_at[e]];
            const int k = b->j_col[e];
            if (a != 0.0)
                for (int ev = b->v_ptr[k]; ev < b->v_ptr[k + 1]; ++ev) X[(size_t)b->v_col[ev] * r + i] += a * b->v_val[ev];
        }
    for (int c = 0; c < f; ++c) {                             /* X ← S⁻¹ X (band_solve skips zeros) */
        double *xc = X + (size_t)c * r;
        band_solve(b, r, ab, piv, xc);
        lo[c] = r;
        hi[c] = -1;
        for (int i = 0; i < r; ++i) if (xc[i] != 0.0) { if (lo[c] == r) lo[c] = i; hi[c] = i; }
    }
    memset(N, 0, sizeof(double) * (size_t)nq * f);
    double gain = 0.0;
    for (int k = 0; k < nq; ++k) {                            /* N = V − B X */
        double *nk = N + (size_t)k * f;
        for (int e = b->v_ptr[k]; e < b->v_ptr[k + 1]; ++e) nk[b->v_col[e]] = b->v_val[e];
        const int first = b->b_ptr[k], last = b->b_ptr[k + 1] - 1;
        if (last >= first)
            for (int c = 0; c < f; ++c) {
                if (b->b_col[first] > hi[c] || b->b_col[last] < lo[c]) continue;   /* B's row misses X's column */
                const double *xc = X + (size_t)c * r;
                double v = 0.0;
                for (int e = first; e <= last; ++e) v += b->b_val[e] * xc[b->b_col[e]];
                nk[c] -= v;
            }
        for (int c = 0; c < f; ++c) gain += nk[c] * nk[c];
    }
    *s->amplification = sqrt(gain);
    if (level < 2) goto done;

    /* ---- accelerations: c = B S⁻¹ γ, then the tangent-space equations ---- */
    dynamics_terms(s);
    for (int i = 0; i < r; ++i) x[i] = s->gamma[b->row[i]];
    band_solve(b, r, ab, piv, x);
    basis_times(b, nq, x, vec2, 0);
    status = tangent_accelerations(s, b->m_ptr, b->m_col, b->m_at, N, vec2, vec, vec3);
    if (status != CG_OK || level < 3) goto done;
    basis_t_times(b, nq, r, vec, x);                         /* Sᵀ λ_rows = Bᵀ (Q − M q̈) */
    band_solve_transposed(b, r, ab, piv, x);
    memset(s->lam, 0, sizeof(double) * s->m);
    for (int i = 0; i < r; ++i) s->lam[b->row[i]] = x[i];
    if (s->nred > 0 && !minimum_norm(s, b->row, band_dual, &lu, b->red_ptr, b->red_at)) status = CG_NOT_FINITE;
done:
    free(work);
    free(piv);
    return status;
}

/* reduced.c's cg_reduced_sigma on the band: S factored again from s->jac, then band_reduced's estimate */
static int band_sigma(cg_reduced_t *s)
{
    const cg_banded_t *b = s->band;
    const int nq = s->nq, r = s->r, ld = 2 * b->kl + b->ku + 1;
    double *ab = malloc(sizeof(double) * ((size_t)ld * r + (size_t)r + (size_t)nq + 1));
    int *piv = malloc(sizeof(int) * (r + 1));
    int ok = ab && piv && band_factor(b, r, s->jac, ab, piv);
    if (ok) {
        double *x = ab + (size_t)ld * r, *vec = x + r;
        const band_lu_t lu = {b, nq, r, ab, piv, vec, s->jac};
        *s->sigma_min = sigma_min_power(r, band_inverse, &lu, b->pos, x);
    } else {
        *s->sigma_min = 0.0;
    }
    free(ab);
    free(piv);
    return ok;
}

typedef struct { int w, r; const double *ab; const int *piv; double *y; } gram_t;

/* x ← G x, G = J Jᵀ in band storage (w sub- and super-diagonals, ld = 3 w + 1; not factored) */
static void gram_times(const void *ctx, double *x)
{
    const gram_t *g = ctx;
    const int w = g->w, ld = 3 * w + 1, kv = 2 * w;
    for (int i = 0; i < g->r; ++i) {
        double v = 0.0;
        for (int j = i - w > 0 ? i - w : 0; j <= i + w && j < g->r; ++j) v += BAND(g->ab, ld, kv, i, j) * x[j];
        g->y[i] = v;
    }
    memcpy(x, g->y, sizeof(double) * g->r);
}

/* x ← G⁻¹ x (G factored by band_lu) */
static void gram_inverse(const void *ctx, double *x)
{
    const gram_t *g = ctx;
    band_lu_solve(g->w, g->w, g->r, g->ab, g->piv, x);
}

/* Estimates of (σ_min, σ_max) of J = Φ_q[rows] at the current Φ_q (s->jac, read at j_at: dense, or packed
 * by a relative library's cg_position_packed) into out, as
 * solver/partitioning/singular_estimates.py row_singular_estimates gives them (the conditioning
 * read-out from partition.COMPILED_ESTIMATE_ROWS rows): reduced.c's sigma_min_power on G⁻¹ and power_growth
 * on G = J Jᵀ, from the start of the independent rows' order (b->pos: the same iterates, permuted),
 * σ_min from above (0 when G is singular), σ_max from below.  G is banded in the fixed order (gw sub-
 * and super-diagonals) and factored as S is: O(r gw²).  Returns 0 (nothing written) without a band
 * problem or when G's band is too wide.  The one estimator of these σ in C: segment.c's output rows
 * and SEG_QUALITY test, and reduced.py's CompiledReduction.conditioning (the Python loop's rows). */
int cg_band_row_sigma(const cg_reduced_t *s, double *out)
{
    const cg_banded_t *b = s->band;
    if (!b || b->gw < 0) return 0;
    const int r = s->r, w = b->gw, ld = 3 * w + 1, kv = 2 * w;
    double *ab = calloc((size_t)ld * r + 2 * (size_t)r, sizeof(double));
    int *piv = malloc(sizeof(int) * (r + 1));
    if (!ab || !piv) {                           /* out of memory: no estimate (the caller's) */
        free(ab);
        free(piv);
        return 0;
    }
    double *x = ab + (size_t)ld * r, *y = x + r;
    for (int i = 0; i < r; ++i)                  /* G = J Jᵀ within its band: sorted rows merged */
        for (int j = i; j <= i + w && j < r; ++j) {
            double v = 0.0;
            int e = b->j_ptr[i], f = b->j_ptr[j];
            while (e < b->j_ptr[i + 1] && f < b->j_ptr[j + 1]) {
                if (b->j_col[e] < b->j_col[f]) ++e;
                else if (b->j_col[e] > b->j_col[f]) ++f;
                else v += s->jac[b->j_at[e++]] * s->jac[b->j_at[f++]];
            }
            BAND(ab, ld, kv, i, j) = BAND(ab, ld, kv, j, i) = v;
        }
    const gram_t gram = {w, r, ab, piv, y};
    out[1] = sqrt(power_growth(r, gram_times, &gram, b->pos, x));                   /* √ of G's largest eigenvalue */
    out[0] = band_lu(w, w, r, ab, piv) ? sigma_min_power(r, gram_inverse, &gram, b->pos, x) : 0.0;
    free(ab);
    free(piv);
    return 1;
}
