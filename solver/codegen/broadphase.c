/* Broad phase of the compiled contact (MBS Studio, solver.codegen.contact): which contact elements may
 * touch, without testing every element.  Sort and sweep ("sweep and prune": D. Baraff, "Dynamic
 * simulation of non-penetrating rigid bodies", PhD thesis, Cornell 1992, §6.2; C. Ericson, "Real-Time
 * Collision Detection", Morgan Kaufmann 2005, §7.5.2).
 *
 * A proxy is a bounding sphere: a finite shape of one body (centre c in body axes, radius R), shared by
 * all the elements that name that shape.  Each evaluation places the proxies (x = r_b + A_b c), sorts
 * them by the start x_a − R of their interval along the axis a of the centres' largest spread
 * (insertion sort from the last evaluation's order: nearly sorted, O(n) while the bodies move little),
 * and sweeps: a proxy's interval is compared only with the intervals that start before it ends.  The
 * pairs whose spheres overlap name their elements through the table of keys (a·np + b, a < b,
 * ascending: a binary search); a pair of proxies that are both members of contact groups is passed to
 * the pair callback (contact.c evaluates the pairs of members in one group there: no list of them).
 * Elements with a plane (an unbounded half-space) or with both sides on
 * one proxy are listed as they are.  The list is a superset of the elements whose bounding volumes
 * overlap (the intervals and spheres are padded by 1e-9 of the coordinates' size, above round-off);
 * contact.c's cc_candidates keeps those that pass its exact test (cc_near, the n² test of
 * solver/contact/element.py ContactSet.candidates), in ascending element order, so the forces are
 * summed in the order of a loop over all elements.  Cost per evaluation: O(np + pairs found).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Shared with Python (solver/codegen/contact.py _Sweep, same fields, same order). */
typedef struct {
    int np;                   /* proxies */
    const int *pbody;         /* per proxy: body (−1: ground) */
    const double *pshape;     /* per proxy: centre (3, body axes), radius */
    int ndirect;
    const int *direct;        /* elements listed as they are (a plane side, or one proxy on both sides) */
    int nkey;
    const long long *key;     /* elements between two proxies: a·np + b (a < b), ascending */
    const int *kelem;         /* … their elements, in that order */
    int *order;               /* work: proxies by interval start (kept between evaluations: a permutation) */
    double *x, *lo, *hi;      /* work: per proxy world centre (3), interval along the sweep axis */
    const int *pm_start;      /* per proxy: its contact-group members pm_list[pm_start[p] … pm_start[p + 1] − 1] */
    const int *pm_list;
    void (*pair)(void *ctx, int p, int q);   /* called for each overlapping pair of proxies with members (or NULL) */
    void *ctx;
    int *merge;               /* work: room for the keyed elements (nkey) */
} cb_sweep_t;

static int cb_ascending(const void *a, const void *b)
{
    const int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* First index of key k in s->key (s->nkey if none). */
static int cb_find(const cb_sweep_t *s, long long k)
{
    int lo = 0, hi = s->nkey;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (s->key[mid] < k) lo = mid + 1; else hi = mid;
    }
    return lo < s->nkey && s->key[lo] == k ? lo : s->nkey;
}

/* The elements that may touch, ascending, into out (room for every element); returns their count.
 * r, A: the nb bodies' positions (3 each) and rotation matrices (9 each, row-major).  The listed
 * elements (ascending in the table) come first; the pairs' elements found by the sweep after them are
 * sorted alone and the two runs merged (one qsort of all of them cost as much as the sweep of a pile of
 * spheres, whose 5 n sphere–wall elements are all listed). */
int cb_candidates(cb_sweep_t *s, const double *r, const double *A, int *out)
{
    static const double eye[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, zero[3] = {0, 0, 0};
    const int np = s->np;
    int n = 0;
    for (int i = 0; i < s->ndirect; ++i) out[n++] = s->direct[i];
    double mean[3] = {0, 0, 0}, square[3] = {0, 0, 0};
    for (int p = 0; p < np; ++p) {
        const int b = s->pbody[p];
        const double *rb = b < 0 ? zero : r + 3 * b, *Ab = b < 0 ? eye : A + 9 * b, *c = s->pshape + 4 * p;
        double *x = s->x + 3 * p;
        for (int i = 0; i < 3; ++i) {
            x[i] = rb[i] + Ab[3 * i] * c[0] + Ab[3 * i + 1] * c[1] + Ab[3 * i + 2] * c[2];
            mean[i] += x[i];
            square[i] += x[i] * x[i];
        }
    }
    int axis = 0;                              /* the axis of the largest spread of the centres */
    for (int i = 1; i < 3; ++i)
        if (square[i] - mean[i] * mean[i] / (np ? np : 1) > square[axis] - mean[axis] * mean[axis] / (np ? np : 1))
            axis = i;
    for (int p = 0; p < np; ++p) {
        const double *x = s->x + 3 * p, R = s->pshape[4 * p + 3] * (1.0 + 1e-9)
                                               + 1e-9 * (fabs(x[0]) + fabs(x[1]) + fabs(x[2]));
        s->lo[p] = x[axis] - R;
        s->hi[p] = x[axis] + R;
    }
    int *order = s->order;
    for (int i = 1; i < np; ++i) {             /* insertion sort by lo: the last order is nearly sorted */
        const int p = order[i];
        int j = i - 1;
        while (j >= 0 && s->lo[order[j]] > s->lo[p]) { order[j + 1] = order[j]; --j; }
        order[j + 1] = p;
    }
    for (int i = 0; i < np; ++i) {
        const int a = order[i];
        const double *xa = s->x + 3 * a, ra = 0.5 * (s->hi[a] - s->lo[a]);
        for (int j = i + 1; j < np && s->lo[order[j]] <= s->hi[a]; ++j) {
            const int b = order[j];
            const double *xb = s->x + 3 * b, reach = ra + 0.5 * (s->hi[b] - s->lo[b]);
            const double d[3] = {xb[0] - xa[0], xb[1] - xa[1], xb[2] - xa[2]};
            if (d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach * reach) continue;
            if (s->pair && s->pm_start[a + 1] > s->pm_start[a] && s->pm_start[b + 1] > s->pm_start[b])
                s->pair(s->ctx, a, b);
            const long long k = a < b ? (long long)a * np + b : (long long)b * np + a;
            for (int e = cb_find(s, k); e < s->nkey && s->key[e] == k; ++e) out[n++] = s->kelem[e];
        }
    }
    const int listed = s->ndirect;
    if (n == listed) return n;
    qsort(out + listed, n - listed, sizeof(int), cb_ascending);
    if (listed == 0 || out[listed - 1] < out[listed]) return n;
    int *found = s->merge;                     /* merge the two ascending runs: the found ones copied aside */
    const int nf = n - listed;
    memcpy(found, out + listed, sizeof(int) * nf);
    int i = listed - 1, j = nf - 1;
    for (int k = n - 1; j >= 0; --k) out[k] = i >= 0 && out[i] > found[j] ? out[i--] : found[j--];
    return n;
}
