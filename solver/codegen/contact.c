/* Compliant contact in compiled code (MBS Studio, solver.contact): the generalized forces of all of a
 * model's contact elements, and of the stops of its tree joints, at (q, q̇), called by cg_reduced at
 * each right-hand side (its k_extra).
 *
 * The same arithmetic as the Python evaluator (solver/contact/element.py, geometry.py, laws.py; the
 * tests compare the two to round-off): the broad phase (broadphase.c: sort and sweep over the shapes'
 * bounding spheres) lists the elements that may touch, each keeps its bounding-volume test (spheres
 * about the shapes' centres, a plane's half-space), then the closed-form contact points (P, n, δ) of its
 * shape pair, and at each point, with u = V_j − V_i the velocity of body j's material point over body i's,
 *
 *   δ̇ = −n·u,  f_n = max(0, k δ^e + c(δ) δ̇),  v_t = u − (n·u) n,  s = |v_t|,
 *   F = f_n n − μ(s) f_n v_t / s     (on body j at P, −F on body i)
 *
 * c(δ) = c_max STEP(δ; 0, 0, d_max, 1) (Adams IMPACT) or λ δ^e (Hunt & Crossley (1975)), μ(s) the
 * Adams stick–slip law (solver/math/friction.py).  Body frames come from q: the Cartesian
 * coordinates [r ; p] per body (mode CC_CARTESIAN: A(p), ω = 2 A L(p) ṗ), an open tree's map
 * (CC_TREE: the model library's cgt_edges) or a relative tree map with cut joints (CC_RELATIVE: its
 * cgt_velocity, q_c and T = ∂q_c/∂q); the wrenches map to Q as [F ; 2 Lᵀ Aᵀ T] per body (Haug
 * eq. 11.2.22), by the model library's cg_tree_generalized (B_eᵀ Σ_subtree Ŵ), or as Tᵀ Q_c (over
 * T's non-zeros: a body's rows in the columns of its path from the root, solver/codegen/tree.py
 * body_columns; each Q entry summed over the rows in ascending order, as the dense product).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { CC_CARTESIAN = 0, CC_TREE = 1, CC_RELATIVE = 2 };
/* shape kinds (solver/contact/compiled.py KINDS) */
enum { SH_PLANE = 0, SH_SPHERE = 1, SH_BOX = 2, SH_CYLINDER = 3, SH_CAPSULE = 4, SH_MESH = 5 };
/* pairs (solver/contact/geometry.py PAIRS, in its order; the first shape is the pair's first kind) */
enum { PR_PLANE_SPHERE = 0, PR_SPHERE_SPHERE, PR_BOX_SPHERE, PR_PLANE_BOX, PR_PLANE_CAPSULE, PR_CAPSULE_SPHERE,
       PR_PLANE_CYLINDER, PR_PLANE_MESH };
enum { CS_SIZE = 12 };   /* a shape: centre (3), axis (3), radius, half (3: a box's half edges; else [half, 0, 0]), bound,
                           thickness (geometry.Shape.thickness) */
enum { CL_SIZE = 9 };    /* a law: k, e, c_max or λ, hunt_crossley (1/0), d_max, μ_s, μ_d, v_s, v_d */
enum { ST_SIZE = 9 };    /* a stop: lower, upper, has lower (1/0), has upper, k, e, c_max, d, push only (1/0) */
enum { SP_SIZE = 4 };    /* a rotational spring-damper: k, c, θ₀, preload */

typedef void (*cc_edges_fn)(const double *q, const double *qd, double *qc, double *qdc, double *A, double *w,
                            double *B, double *D);
typedef void (*cc_generalized_fn)(const double *qc, const double *B, const double *Fx, const double *Tx, double *Q);
typedef void (*cc_velocity_fn)(const double *q, const double *qd, double *qc, double *T, double *qdc, double *tdqd);

/* Shared with Python (solver/codegen/contact.py (_Contact), same fields, same order). */
typedef struct {
    int nb, ne, nq, mode;
    const int *bi, *bj;       /* per element: bodies (−1: ground) */
    const int *pair, *swap;   /* per element: pair kind; 1 when its first shape is side j */
    const double *shape;      /* per element: side i then side j, CS_SIZE each (body axes) */
    const double *law;        /* per element: CL_SIZE */
    const int *vstart, *vcount;   /* per element and side: its mesh vertices in verts (3 each) */
    const double *verts;
    cc_edges_fn edges;        /* CC_TREE */
    cc_generalized_fn generalized;
    cc_velocity_fn velocity;  /* CC_RELATIVE: the tree map's cgt_velocity */
    double *r, *A, *v, *w, *F, *T;      /* work: per body frames and wrenches (nb × 3, 9, 3, 3, 3, 3) */
    double *qc, *qdc, *B, *D;           /* work, CC_TREE: cgt_edges outputs (CC_RELATIVE: q_c, q̇_c) */
    double *Tm, *tdqd, *Qc;             /* work, CC_RELATIVE: T = ∂q_c/∂q (7 nb × nq), Ṫq̇, Q_c */
    long points;              /* contact points of the last evaluation */
    double energy;            /* their elastic energy Σ k δ^(e+1)/(e+1) */
    int nst;                  /* joint stops */
    const int *st_col;        /* per stop: its column of q */
    const double *st_par;     /* per stop: ST_SIZE */
    int nsp;                  /* rotational spring-dampers */
    const int *sp_col;        /* per spring: its column of q */
    const double *sp_par;     /* per spring: SP_SIZE */
    cb_sweep_t *sweep;        /* the broad phase (broadphase.c) over the ne elements */
    int *cand;                /* work: the elements it keeps (ne) */
    const int *path_start, *path_col;   /* CC_RELATIVE: per body the columns of its path (T's non-zeros), CSR */
    int ng;                   /* contact groups (solver/contact/group.py): every pair of their members */
    const double *glaw;       /* per group: CL_SIZE */
    const int *mgroup, *mbody, *mkind;  /* per member: its group, body, shape kind (SH_*) */
    const double *mshape;     /* per member: CS_SIZE (body axes) */
    const int *gstart;        /* per group: its members mgroup[gstart[g] … gstart[g + 1] − 1], in its order */
    const int *kpair, *kswap; /* per shape kinds (a, b): 6 a + b → pair kind PR_* (−1: none), 1 when b comes first */
    int *link;                /* NULL, or nb parent links that each contact point between two bodies joins
                                 (segment.c cg_root; cc_links: the structure of BDF's Jacobian) */
} cc_contact_t;

/* One pair of shapes in contact: its bodies and law (an element's, or a group's for two members). */
typedef struct { int bi, bj; const double *law; } cc_pair_t;

typedef struct { double c[3], a[3], A[9]; const double *s; const double *verts; int nv; } cc_placed_t;

static const double CC_EYE[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
static const double CC_ZERO[3] = {0, 0, 0};

static double cc_dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void cc_mul(const double *A, const double *x, double *y)     /* y = A x */
{
    for (int i = 0; i < 3; ++i) y[i] = A[3 * i] * x[0] + A[3 * i + 1] * x[1] + A[3 * i + 2] * x[2];
}

static void cc_tmul(const double *A, const double *x, double *y)    /* y = Aᵀ x */
{
    for (int i = 0; i < 3; ++i) y[i] = A[i] * x[0] + A[3 + i] * x[1] + A[6 + i] * x[2];
}

/* A(p) (row-major) and L(p) (3 × 4, row-major) of unit Euler parameters p
 * (solver.math.rotations.rotation_matrix, L_matrix); also output_cartesian.c's, later in the unit. */
static void cc_euler_frame(const double *p, double *A, double *L)
{
    const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
    A[0] = e0 * e0 + e1 * e1 - e2 * e2 - e3 * e3; A[1] = 2 * (e1 * e2 - e0 * e3); A[2] = 2 * (e1 * e3 + e0 * e2);
    A[3] = 2 * (e1 * e2 + e0 * e3); A[4] = e0 * e0 - e1 * e1 + e2 * e2 - e3 * e3; A[5] = 2 * (e2 * e3 - e0 * e1);
    A[6] = 2 * (e1 * e3 - e0 * e2); A[7] = 2 * (e2 * e3 + e0 * e1); A[8] = e0 * e0 - e1 * e1 - e2 * e2 + e3 * e3;
    const double Lm[12] = {-e1, e0, e3, -e2, -e2, -e3, e0, e1, -e3, e2, -e1, e0};
    memcpy(L, Lm, sizeof Lm);
}

static void cc_cross(const double *a, const double *b, double *c)
{
    c[0] = a[1] * b[2] - a[2] * b[1];
    c[1] = a[2] * b[0] - a[0] * b[2];
    c[2] = a[0] * b[1] - a[1] * b[0];
}

static double cc_step(double x, double x0, double h0, double x1, double h1)   /* Adams STEP */
{
    double s = (x - x0) / (x1 - x0);
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    return h0 + (h1 - h0) * s * s * (3.0 - 2.0 * s);
}

/* The body frame of b (ground: the origin at rest). */
static void cc_frame(const cc_contact_t *c, int b, const double **r, const double **A, const double **v,
                     const double **w)
{
    if (b < 0) { *r = CC_ZERO; *A = CC_EYE; *v = CC_ZERO; *w = CC_ZERO; return; }
    *r = c->r + 3 * b; *A = c->A + 9 * b; *v = c->v + 3 * b; *w = c->w + 3 * b;
}

/* The shape s (CS_SIZE, body axes; nv mesh vertices at verts) on body b. */
static void cc_place_shape(const cc_contact_t *c, const double *s, int b, const double *verts, int nv, cc_placed_t *p)
{
    const double *r, *A, *v, *w;
    cc_frame(c, b, &r, &A, &v, &w);
    p->s = s;
    cc_mul(A, p->s, p->c);
    for (int i = 0; i < 3; ++i) p->c[i] += r[i];
    cc_mul(A, p->s + 3, p->a);
    memcpy(p->A, A, sizeof p->A);
    p->verts = verts;
    p->nv = nv;
}

static void cc_place(const cc_contact_t *c, int e, int side, int b, cc_placed_t *p)
{
    cc_place_shape(c, c->shape + CS_SIZE * (2 * e + side), b, c->verts + 3 * c->vstart[2 * e + side],
                   c->vcount[2 * e + side], p);
}

/* Force at one contact point (P, n from the pair's first shape into its second, δ); sign −1 when
 * the first shape is side j (the normal from i into j is then −n). */
static void cc_point(cc_contact_t *c, const cc_pair_t *e, const double *P, const double *n_pair, double delta,
                     double sign)
{
    const double *L = e->law;
    const double n[3] = {sign * n_pair[0], sign * n_pair[1], sign * n_pair[2]};
    const int b[2] = {e->bi, e->bj};
    double u[3] = {0, 0, 0};
    for (int s = 0; s < 2; ++s) {
        const double *r, *A, *v, *w;
        cc_frame(c, b[s], &r, &A, &v, &w);
        const double d[3] = {P[0] - r[0], P[1] - r[1], P[2] - r[2]};
        double wd[3];
        cc_cross(w, d, wd);
        const double sgn = s ? 1.0 : -1.0;
        for (int i = 0; i < 3; ++i) u[i] += sgn * (v[i] + wd[i]);
    }
    const double un = cc_dot(n, u);
    const double spring = L[0] * pow(delta, L[1]);
    c->energy += spring * delta / (L[1] + 1.0);
    const double damping = L[2] * (L[3] != 0.0 ? pow(delta, L[1]) : cc_step(delta, 0.0, 0.0, L[4], 1.0));
    double fn = spring - damping * un;
    if (fn < 0.0) fn = 0.0;
    double vt[3];
    for (int i = 0; i < 3; ++i) vt[i] = u[i] - un * n[i];
    const double speed = sqrt(cc_dot(vt, vt));
    double per = 0.0;                            /* μ(s) f_n / s */
    if (speed > 0.0 && fn > 0.0) {
        const double mu = speed < L[7] ? cc_step(speed, -L[7], -L[5], L[7], L[5])
                                       : cc_step(speed, L[7], L[5], L[8], L[6]);
        per = mu * fn / speed;
    }
    double F[3];
    for (int i = 0; i < 3; ++i) F[i] = fn * n[i] - per * vt[i];
    for (int s = 0; s < 2; ++s) {
        if (b[s] < 0) continue;
        const double sgn = s ? 1.0 : -1.0, *r = c->r + 3 * b[s];
        const double d[3] = {P[0] - r[0], P[1] - r[1], P[2] - r[2]};
        double t[3];
        cc_cross(d, F, t);
        for (int i = 0; i < 3; ++i) {
            c->F[3 * b[s] + i] += sgn * F[i];
            c->T[3 * b[s] + i] += sgn * t[i];
        }
    }
    ++c->points;
    if (c->link && b[0] >= 0 && b[1] >= 0) c->link[cg_root(c->link, b[0])] = cg_root(c->link, b[1]);
}

/* Record in link (nb parent links, reset here to one set per body) the bodies each contact point of the
 * next evaluations joins; NULL: stop recording. */
void cc_links(void *ctx, int *link)
{
    cc_contact_t *c = ctx;
    c->link = link;
    for (int b = 0; link && b < c->nb; ++b) link[b] = b;
}

/* A round surface at centre ce, radius R, touching along n with penetration δ: the midpoint. */
static void cc_round(cc_contact_t *c, const cc_pair_t *e, double sg, const double *ce, const double *n, double R, double delta)
{
    const double P[3] = {ce[0] - (R - 0.5 * delta) * n[0], ce[1] - (R - 0.5 * delta) * n[1],
                         ce[2] - (R - 0.5 * delta) * n[2]};
    cc_point(c, e, P, n, delta, sg);
}

static void cc_plane_sphere(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const double *ce, double R)
{
    const double d[3] = {ce[0] - pl->c[0], ce[1] - pl->c[1], ce[2] - pl->c[2]};
    const double delta = R - cc_dot(pl->a, d);
    if (delta > 0.0) cc_round(c, e, sg, ce, pl->a, R, delta);
}

static void cc_spheres(cc_contact_t *c, const cc_pair_t *e, double sg, const double *ci, double ri, const double *cj, double rj)
{
    const double d[3] = {cj[0] - ci[0], cj[1] - ci[1], cj[2] - ci[2]};
    const double length = sqrt(cc_dot(d, d));
    const double delta = ri + rj - length;
    if (delta <= 0.0 || length == 0.0) return;
    const double n[3] = {d[0] / length, d[1] / length, d[2] / length};
    cc_round(c, e, sg, cj, n, rj, delta);
}

static void cc_box_sphere(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *bx, const cc_placed_t *sp)
{
    const double *h = bx->s + 7, *A = bx->A, R = sp->s[6];
    const double g[3] = {sp->c[0] - bx->c[0], sp->c[1] - bx->c[1], sp->c[2] - bx->c[2]};
    double x[3], d[3], n[3], delta;
    for (int i = 0; i < 3; ++i) {
        x[i] = A[i] * g[0] + A[3 + i] * g[1] + A[6 + i] * g[2];            /* Aᵀ g */
        d[i] = x[i] - (x[i] < -h[i] ? -h[i] : (x[i] > h[i] ? h[i] : x[i]));
    }
    const double length = sqrt(cc_dot(d, d));
    if (length > 0.0) {
        delta = R - length;
        const double dl[3] = {d[0] / length, d[1] / length, d[2] / length};
        cc_mul(A, dl, n);
    } else {                                   /* centre inside: out through the face of least depth */
        int k = 0;
        for (int i = 1; i < 3; ++i)
            if (h[i] - fabs(x[i]) < h[k] - fabs(x[k])) k = i;
        delta = R + h[k] - fabs(x[k]);
        const double s = x[k] >= 0.0 ? 1.0 : -1.0;
        for (int i = 0; i < 3; ++i) n[i] = A[3 * i + k] * s;
    }
    if (delta > 0.0) cc_round(c, e, sg, sp->c, n, R, delta);
}

/* Each point below the plane: a contact point δ = n·(p_plane − x), P = x + δ/2 n. */
static void cc_below(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const double *x)
{
    const double g[3] = {pl->c[0] - x[0], pl->c[1] - x[1], pl->c[2] - x[2]};
    const double delta = cc_dot(g, pl->a);
    if (delta <= 0.0) return;
    const double P[3] = {x[0] + 0.5 * delta * pl->a[0], x[1] + 0.5 * delta * pl->a[1], x[2] + 0.5 * delta * pl->a[2]};
    cc_point(c, e, P, pl->a, delta, sg);
}

static void cc_at(const cc_placed_t *s, const double *local, double *x)    /* x = c + A local */
{
    cc_mul(s->A, local, x);
    for (int i = 0; i < 3; ++i) x[i] += s->c[i];
}

static void cc_plane_box(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const cc_placed_t *bx)
{
    const double *h = bx->s + 7;
    for (int k = 0; k < 8; ++k) {             /* geometry.CORNERS order: x slowest */
        const double local[3] = {(k & 4 ? 1 : -1) * h[0], (k & 2 ? 1 : -1) * h[1], (k & 1 ? 1 : -1) * h[2]};
        double x[3];
        cc_at(bx, local, x);
        cc_below(c, e, sg, pl, x);
    }
}

static void cc_plane_mesh(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const cc_placed_t *ms)
{
    for (int k = 0; k < ms->nv; ++k) {
        double x[3];
        cc_at(ms, ms->verts + 3 * k, x);
        cc_below(c, e, sg, pl, x);
    }
}

static void cc_end(const cc_placed_t *s, double side, double *x)
{
    for (int i = 0; i < 3; ++i) x[i] = s->c[i] + side * s->s[7] * s->a[i];
}

static void cc_plane_capsule(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const cc_placed_t *cp)
{
    for (int k = 0; k < 2; ++k) {
        double x[3];
        cc_end(cp, k ? 1.0 : -1.0, x);
        cc_plane_sphere(c, e, sg, pl, x, cp->s[6]);
    }
}

static void cc_capsule_sphere(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *cp, const cc_placed_t *sp)
{
    const double g[3] = {sp->c[0] - cp->c[0], sp->c[1] - cp->c[1], sp->c[2] - cp->c[2]};
    const double half = cp->s[7];
    double s = cc_dot(g, cp->a);
    s = s < -half ? -half : (s > half ? half : s);
    const double x[3] = {cp->c[0] + s * cp->a[0], cp->c[1] + s * cp->a[1], cp->c[2] + s * cp->a[2]};
    cc_spheres(c, e, sg, x, cp->s[6], sp->c, sp->s[6]);
}

static void cc_plane_cylinder(cc_contact_t *c, const cc_pair_t *e, double sg, const cc_placed_t *pl, const cc_placed_t *cy)
{
    const double *n = pl->a, *a = cy->a, R = cy->s[6];
    const double na = cc_dot(n, a);
    double u[3], v[3];
    for (int i = 0; i < 3; ++i) u[i] = n[i] - na * a[i];
    const double size = sqrt(cc_dot(u, u));
    if (size > 1e-9) {
        for (int i = 0; i < 3; ++i) u[i] = -u[i] / size;
    } else {                                   /* standing on an end: the body axis least along a */
        int k = 0;
        for (int i = 1; i < 3; ++i)
            if (fabs(cy->A[3 * 0 + i] * a[0] + cy->A[3 * 1 + i] * a[1] + cy->A[3 * 2 + i] * a[2])
                < fabs(cy->A[3 * 0 + k] * a[0] + cy->A[3 * 1 + k] * a[1] + cy->A[3 * 2 + k] * a[2])) k = i;
        const double col[3] = {cy->A[k], cy->A[3 + k], cy->A[6 + k]};
        cc_cross(a, col, u);
        const double l = sqrt(cc_dot(u, u));
        for (int i = 0; i < 3; ++i) u[i] /= l;
    }
    cc_cross(a, u, v);
    for (int end = 0; end < 2; ++end) {
        double x0[3];
        cc_end(cy, end ? 1.0 : -1.0, x0);
        for (int k = 0; k < 4; ++k) {          /* u, v, −u, −v */
            const double *d = k % 2 ? v : u, s = k < 2 ? R : -R;
            const double x[3] = {x0[0] + s * d[0], x0[1] + s * d[1], x0[2] + s * d[2]};
            cc_below(c, e, sg, pl, x);
        }
    }
}

/* May the shapes of element e touch?  Bounding spheres about the centres, or a plane's half-space. */
static int cc_near(const cc_placed_t *p0, const cc_placed_t *p1)
{
    const double R0 = p0->s[10], R1 = p1->s[10];
    const double d[3] = {p1->c[0] - p0->c[0], p1->c[1] - p0->c[1], p1->c[2] - p0->c[2]};
    if (isinf(R0)) return cc_dot(p0->a, d) <= R1;
    if (isinf(R1)) return -cc_dot(p1->a, d) <= R0;
    return cc_dot(d, d) <= (R0 + R1) * (R0 + R1);
}

/* The elements whose bounding volumes overlap (cc_near), ascending, into out (ne): the broad phase's
 * sweep (broadphase.c) and the exact test of each element it lists.  Returns their count. */
int cc_candidates(cc_contact_t *c, int *out)
{
    const int k = cb_candidates(c->sweep, c->r, c->A, out);
    int n = 0;
    for (int i = 0; i < k; ++i) {
        const int e = out[i];
        cc_placed_t pi, pj;
        cc_place(c, e, 0, c->bi[e], &pi);
        cc_place(c, e, 1, c->bj[e], &pj);
        if (cc_near(&pi, &pj)) out[n++] = e;
    }
    return n;
}

/* The contact points of a pair of placed shapes (pair kind code; sw: its first shape is side j) and
 * their forces. */
static void cc_shapes(cc_contact_t *c, const cc_pair_t *e, int code, int sw, const cc_placed_t *pi,
                      const cc_placed_t *pj)
{
    const cc_placed_t *a = sw ? pj : pi, *b = sw ? pi : pj;
    const double sg = sw ? -1.0 : 1.0;
    switch (code) {
    case PR_PLANE_SPHERE: cc_plane_sphere(c, e, sg, a, b->c, b->s[6]); break;
    case PR_SPHERE_SPHERE: cc_spheres(c, e, sg, a->c, a->s[6], b->c, b->s[6]); break;
    case PR_BOX_SPHERE: cc_box_sphere(c, e, sg, a, b); break;
    case PR_PLANE_BOX: cc_plane_box(c, e, sg, a, b); break;
    case PR_PLANE_CAPSULE: cc_plane_capsule(c, e, sg, a, b); break;
    case PR_CAPSULE_SPHERE: cc_capsule_sphere(c, e, sg, a, b); break;
    case PR_PLANE_CYLINDER: cc_plane_cylinder(c, e, sg, a, b); break;
    case PR_PLANE_MESH: cc_plane_mesh(c, e, sg, a, b); break;
    }
}

/* The contact points of element e (a candidate) and their forces. */
static void cc_element(cc_contact_t *c, int e)
{
    cc_placed_t pi, pj;
    cc_place(c, e, 0, c->bi[e], &pi);
    cc_place(c, e, 1, c->bj[e], &pj);
    const cc_pair_t pe = {c->bi[e], c->bj[e], c->law + CL_SIZE * e};
    cc_shapes(c, &pe, c->pair[e], c->swap[e], &pi, &pj);
}

/* The group pairs of two proxies whose bounding spheres overlap (broadphase.c's pair callback): each
 * member of proxy p with each member of proxy q in the same group, the one listed first as side i. */
static void cc_group_pairs(void *ctx, int p, int q)
{
    cc_contact_t *c = ctx;
    const cb_sweep_t *s = c->sweep;
    for (int i = s->pm_start[p]; i < s->pm_start[p + 1]; ++i)
        for (int j = s->pm_start[q]; j < s->pm_start[q + 1]; ++j) {
            int a = s->pm_list[i], b = s->pm_list[j];
            if (c->mgroup[a] != c->mgroup[b]) continue;
            if (a > b) { const int t = a; a = b; b = t; }
            const int code = c->kpair[6 * c->mkind[a] + c->mkind[b]];
            if (code < 0) continue;
            cc_placed_t pi, pj;
            cc_place_shape(c, c->mshape + CS_SIZE * a, c->mbody[a], NULL, 0, &pi);
            cc_place_shape(c, c->mshape + CS_SIZE * b, c->mbody[b], NULL, 0, &pj);
            const cc_pair_t pe = {c->mbody[a], c->mbody[b], c->glaw + CL_SIZE * c->mgroup[a]};
            cc_shapes(c, &pe, code, c->kswap[6 * c->mkind[a] + c->mkind[b]], &pi, &pj);
        }
}

/* Body wrenches (c->F, c->T) of all elements at the frames c->r, A, v, w. */
void cc_wrenches(cc_contact_t *c)
{
    memset(c->F, 0, sizeof(double) * 3 * c->nb);
    memset(c->T, 0, sizeof(double) * 3 * c->nb);
    c->points = 0;
    c->energy = 0.0;
    c->sweep->pair = c->ng ? cc_group_pairs : NULL;    /* the groups' pairs, evaluated as the sweep finds them */
    c->sweep->ctx = c;
    const int n = c->ne || c->ng ? cc_candidates(c, c->cand) : 0;
    c->sweep->pair = NULL;
    for (int i = 0; i < n; ++i) cc_element(c, c->cand[i]);
}

/* (g + w)/s of two finite shapes si on body bi and sj on body bj (cc_step_cap); INFINITY when they
 * do not approach. */
static double cc_advance(const cc_contact_t *c, int bi, const double *si, int bj, const double *sj)
{
    double oi[3], oj[3], ui[3], uj[3];
    const double *ri, *Ai, *vi, *wi, *rj, *Aj, *vj, *wj;
    cc_frame(c, bi, &ri, &Ai, &vi, &wi);
    cc_frame(c, bj, &rj, &Aj, &vj, &wj);
    cc_mul(Ai, si, oi);
    cc_mul(Aj, sj, oj);
    cc_cross(wi, oi, ui);
    cc_cross(wj, oj, uj);
    double d[3], dv[3];
    for (int k = 0; k < 3; ++k) { d[k] = rj[k] + oj[k] - ri[k] - oi[k]; dv[k] = vj[k] + uj[k] - vi[k] - ui[k]; }
    const double gap = fmax(sqrt(cc_dot(d, d)) - si[10] - sj[10], 0.0);
    const double speed = sqrt(cc_dot(dv, dv)) + sqrt(cc_dot(wi, wi)) * si[10] + sqrt(cc_dot(wj, wj)) * sj[10];
    return speed > 0.0 ? (gap + fmin(si[11], sj[11])) / speed : INFINITY;
}

typedef struct { double key; int m; } cc_keyed_t;

static int cc_by_key(const void *a, const void *b)
{
    const double x = ((const cc_keyed_t *)a)->key, y = ((const cc_keyed_t *)b)->key;
    return (x > y) - (x < y);
}

/* The least (g + w)/s over the pairs of the members mb … me − 1 of one group, without visiting every
 * pair.  Each member's speed bound S = |v_c| + |ω| R (|v_cb − v_ca| + |ω_a| R_a + |ω_b| R_b ≤ S_a + S_b).
 * C0, the least over the pairs adjacent along the axis of the centres' largest spread, bounds the
 * answer from above (they are pairs); a pair below C0 has g < C0 s ≤ C0 (S_a + S_b), so its spheres
 * grown to R + C0 S overlap: a sort and sweep of those spheres finds every such pair, and cc_advance
 * of each (the members in the group's order, the arithmetic of the pair elements) gives the least
 * exactly.  O(n log n + pairs found); every pair when C0 is infinite (no adjacent pair approaches). */
static double cc_group_cap(const cc_contact_t *c, int mb, int me)
{
    const int n = me - mb;
    if (n < 2) return INFINITY;
    double *x = malloc(sizeof(double) * 5 * (size_t)n);
    cc_keyed_t *sorted = malloc(sizeof(cc_keyed_t) * (size_t)n);
    if (!x || !sorted) {                       /* no room for the sweep: every pair */
        free(x);
        free(sorted);
        double all = INFINITY;
        for (int a = mb; a < me; ++a)
            for (int b = a + 1; b < me; ++b)
                all = fmin(all, cc_advance(c, c->mbody[a], c->mshape + CS_SIZE * a, c->mbody[b], c->mshape + CS_SIZE * b));
        return all;
    }
    double *speed = x + 3 * (size_t)n, *reach = speed + n, mean[3] = {0, 0, 0}, square[3] = {0, 0, 0};
    for (int k = 0; k < n; ++k) {
        const int a = mb + k;
        const double *s = c->mshape + CS_SIZE * a, *r, *A, *v, *w;
        cc_frame(c, c->mbody[a], &r, &A, &v, &w);
        double o[3], u[3];
        cc_mul(A, s, o);
        cc_cross(w, o, u);
        const double vc[3] = {v[0] + u[0], v[1] + u[1], v[2] + u[2]};
        speed[k] = sqrt(cc_dot(vc, vc)) + sqrt(cc_dot(w, w)) * s[10];
        for (int i = 0; i < 3; ++i) {
            x[3 * k + i] = r[i] + o[i];
            mean[i] += x[3 * k + i];
            square[i] += x[3 * k + i] * x[3 * k + i];
        }
    }
    int axis = 0;
    for (int i = 1; i < 3; ++i)
        if (square[i] - mean[i] * mean[i] / n > square[axis] - mean[axis] * mean[axis] / n) axis = i;
    for (int k = 0; k < n; ++k) { sorted[k].key = x[3 * k + axis]; sorted[k].m = k; }
    qsort(sorted, n, sizeof *sorted, cc_by_key);
    double cap = INFINITY;
    for (int k = 0; k + 1 < n; ++k) {
        const int a = mb + (sorted[k].m < sorted[k + 1].m ? sorted[k].m : sorted[k + 1].m);
        const int b = mb + (sorted[k].m < sorted[k + 1].m ? sorted[k + 1].m : sorted[k].m);
        cap = fmin(cap, cc_advance(c, c->mbody[a], c->mshape + CS_SIZE * a, c->mbody[b], c->mshape + CS_SIZE * b));
    }
    const double grow = isinf(cap) ? 0.0 : cap;
    for (int k = 0; k < n; ++k) {
        reach[k] = isinf(cap) ? INFINITY : c->mshape[CS_SIZE * (mb + k) + 10] + grow * speed[k];
        sorted[k].key = x[3 * k + axis] - reach[k];
        sorted[k].m = k;
    }
    qsort(sorted, n, sizeof *sorted, cc_by_key);
    for (int i = 0; i < n; ++i) {
        const int p = sorted[i].m;
        const double hi = x[3 * p + axis] + reach[p];
        for (int j = i + 1; j < n && sorted[j].key <= hi; ++j) {
            const int q = sorted[j].m;
            const double d[3] = {x[3 * q] - x[3 * p], x[3 * q + 1] - x[3 * p + 1], x[3 * q + 2] - x[3 * p + 2]};
            const double both = reach[p] + reach[q];
            if (!isinf(both) && cc_dot(d, d) > both * both * (1.0 + 1e-12)) continue;
            const int a = mb + (p < q ? p : q), b = mb + (p < q ? q : p);
            cap = fmin(cap, cc_advance(c, c->mbody[a], c->mshape + CS_SIZE * a, c->mbody[b], c->mshape + CS_SIZE * b));
        }
    }
    free(x);
    free(sorted);
    return cap;
}

/* The largest next step that cannot carry a finite shape through another, from the frames of the
 * last cc_generalized (ContactSet.step_cap, Mirtich (1996) conservative advancement): the least over
 * the elements of two finite shapes, and over the pairs of each group's members, of (g + w)/s, g the
 * bounding spheres' gap, w the thinner shape's thickness, s = |v_cj − v_ci| + |ω_i| R_i + |ω_j| R_j.
 * INFINITY when none approaches. */
double cc_step_cap(const void *ctx)
{
    const cc_contact_t *c = ctx;
    double cap = INFINITY;
    for (int e = 0; e < c->ne; ++e) {
        const double *si = c->shape + CS_SIZE * 2 * e, *sj = si + CS_SIZE;
        if (isinf(si[10]) || isinf(sj[10])) continue;
        cap = fmin(cap, cc_advance(c, c->bi[e], si, c->bj[e], sj));
    }
    for (int g = 0; g < c->ng; ++g) cap = fmin(cap, cc_group_cap(c, c->gstart[g], c->gstart[g + 1]));
    return cap;
}

/* The wrenches (F, T: n × nb × 3) and elastic energy (V: n) of the contact elements at n stacked
 * body states (r, v, w: n × nb × 3, A: n × nb × 9), for the recorder's post-processing; c is the
 * caller's copy of a struct (its frame and wrench pointers are moved over the states). */
void cc_states(cc_contact_t *c, int n, double *r, double *A, double *v, double *w, double *F, double *T, double *V)
{
    const int nb = c->nb;
    for (int k = 0; k < n; ++k) {
        c->r = r + 3 * nb * k; c->A = A + 9 * nb * k; c->v = v + 3 * nb * k; c->w = w + 3 * nb * k;
        c->F = F + 3 * nb * k; c->T = T + 3 * nb * k;
        cc_wrenches(c);
        V[k] = c->energy;
    }
}

/* Q (7 nb) in the Cartesian coordinates x = [r ; p] per body, at (x, ẋ). */
static void cc_cartesian(cc_contact_t *c, const double *q, const double *qd, double *Q)
{
    const int nb = c->nb;
    for (int b = 0; b < nb; ++b) {             /* A(p), ω = 2 A L(p) ṗ (CartesianSystem.frames) */
        const double *x = q + 7 * b, *pd = qd + 7 * b + 3;
        double *A = c->A + 9 * b, L[12];
        cc_euler_frame(x + 3, A, L);
        double wb[3];
        for (int i = 0; i < 3; ++i)
            wb[i] = 2.0 * (L[4 * i] * pd[0] + L[4 * i + 1] * pd[1] + L[4 * i + 2] * pd[2] + L[4 * i + 3] * pd[3]);
        cc_mul(A, wb, c->w + 3 * b);
        for (int i = 0; i < 3; ++i) { c->r[3 * b + i] = x[i]; c->v[3 * b + i] = qd[7 * b + i]; }
    }
    cc_wrenches(c);
    for (int b = 0; b < nb; ++b) {
        const double *A = c->A + 9 * b, *T = c->T + 3 * b;
        double Ab[9], Lm[12], tb[3];           /* L(p) again (A is kept in c->A), tb = Aᵀ T */
        cc_euler_frame(q + 7 * b + 3, Ab, Lm);
        cc_tmul(A, T, tb);
        for (int i = 0; i < 3; ++i) Q[7 * b + i] = c->F[3 * b + i];
        for (int j = 0; j < 4; ++j) Q[7 * b + 3 + j] = 2.0 * (Lm[j] * tb[0] + Lm[4 + j] * tb[1] + Lm[8 + j] * tb[2]);
    }
}

/* IMPACT(δ, δ̇) for δ > 0, else 0; never below 0 for a push-only stop (solver/math/impact.py). */
static double cc_impact(double delta, double rate, const double *p)
{
    if (delta <= 0.0) return 0.0;
    const double f = p[4] * pow(delta, p[5]) + cc_step(delta, 0.0, 0.0, p[7], p[6]) * rate;
    return p[8] != 0.0 && f < 0.0 ? 0.0 : f;
}

/* Q (nq) of the contact elements, joint stops and rotational spring-dampers at (q, q̇): cg_reduced's
 * k_extra.  Returns 0. */
int cc_generalized(void *ctx, const double *q, const double *qd, double *Q)
{
    cc_contact_t *c = ctx;
    const int nb = c->nb, nq = c->nq;
    if (c->ne == 0 && c->ng == 0) {
        memset(Q, 0, sizeof(double) * nq);
    } else if (c->mode == CC_TREE) {
        c->edges(q, qd, c->qc, c->qdc, c->A, c->w, c->B, c->D);
        for (int b = 0; b < nb; ++b)
            for (int i = 0; i < 3; ++i) { c->r[3 * b + i] = c->qc[7 * b + i]; c->v[3 * b + i] = c->qdc[7 * b + i]; }
        cc_wrenches(c);
        c->generalized(c->qc, c->B, c->F, c->T, Q);
    } else if (c->mode == CC_RELATIVE) {
        c->velocity(q, qd, c->qc, c->Tm, c->qdc, c->tdqd);
        cc_cartesian(c, c->qc, c->qdc, c->Qc);
        memset(Q, 0, sizeof(double) * nq);     /* Q = Tᵀ Q_c over T packed (solver/codegen/relative_layout.py): */
        for (int b = 0; b < nb; ++b) {         /* body b's 7 × p block, row-major, at 7 path_start[b] */
            const int p0 = c->path_start[b], p = c->path_start[b + 1] - p0;
            const double *t = c->Tm + 7 * (size_t)p0;
            for (int k = 0; k < 7; ++k) {
                const double a = c->Qc[7 * b + k];
                if (a != 0.0)
                    for (int j = 0; j < p; ++j) Q[c->path_col[p0 + j]] += t[k * p + j] * a;
            }
        }
    } else {
        cc_cartesian(c, q, qd, Q);
        for (int k = 7 * nb; k < nq; ++k) Q[k] = 0.0;
    }
    for (int s = 0; s < c->nst; ++s) {
        const double *p = c->st_par + ST_SIZE * s;
        const int x = c->st_col[s];
        if (p[2] != 0.0) Q[x] += cc_impact(p[0] - q[x], -qd[x], p);
        if (p[3] != 0.0) Q[x] -= cc_impact(q[x] - p[1], qd[x], p);
    }
    for (int s = 0; s < c->nsp; ++s) {
        const double *p = c->sp_par + SP_SIZE * s;
        const int x = c->sp_col[s];
        Q[x] += -p[0] * (q[x] - p[2]) - p[1] * qd[x] - p[3];
    }
    return 0;
}
