"""The packed layouts of relative.c's matrices: only the entries that can be non-zero are stored.

relative.c (M = Tᵀ M_c T, Φ_q = Φ_c,q T; Choi & Yoo (2000) §2–3) works on matrices that are sparse
along the spanning tree: T (7 nb × nq) is non-zero in body b's 7 rows only in the p_b columns of the
joints on its path (``tree.body_columns``), M_c (7 nb × 7 nb) is block diagonal, and a cut-joint row
of Φ_c,q touches the 7 columns of each of its bodies.  Stored dense they take O(nb²) memory and time
(1.6 GB at nb = 2,001: the kernels of the 1,000-loop four-bar row did not link).  Packed:

* T           body b's 7 × p_b block, row-major, columns ``body_columns[b]`` ascending, at
              7 Σ_{b'<b} p_b' (relative.c: ``ws.T + 7 * body_col_start[b]``; :func:`tree.tree_source`
              writes it);
* Φ_c,q       relative row i's Cartesian row: per body of ``row_bodies[i]`` its 7 entries, at
              7 Σ_{i'<i} |row_bodies[i']| (relative.c: ``7 * row_body_start[i]``);
* M_c         body b's 7 × 7 diagonal block, row-major, at 49 b;
* Φ_q         the relative Jacobian in its pattern (:func:`relative_jacobian_pattern`), by rows:
              relative.c's ``cg_position_packed`` (``jp_start``, ``jp_col``);
* M           the relative mass matrix in its pattern (:func:`relative_mass_pattern`), by rows:
              ``cg_dynamics_packed`` (``mp_start``, ``mp_col``; ``mass_at``: per body, the packed
              index of each pair of its path columns; ``mass_diag``: of each diagonal entry).

The dense kernels (cg_position, cg_mass, cg_dynamics: reduced.c's dense algebra, Python) scatter the
packed Φ_q and M into the dense row-major arrays; the band algebra (banded.c) reads the packed ones.
"""
from __future__ import annotations

import numpy as np

from ..formulations.cartesian import group_pattern
from .derive import CodegenUnavailable
from .tree import body_columns

ROW_CARTESIAN, ROW_COORDINATE, ROW_NORM, ROW_COUPLER = range(4)          # relative.c's row kinds


def relative_jacobian_pattern(desc):
    """(rows, cols) of the entries of relative.c's Φ_q that can be non-zero, by rows, columns
    ascending: the order of the packed Φ_q.  From the description
    (:func:`solver.codegen.relative.describe_relative`): a Cartesian row Φ_c,q[a] T on the path columns
    of its bodies (``row_bodies``), a driven coordinate on its column, a coupler on its two columns,
    a normalization on its four Euler parameters."""
    columns = body_columns(desc["tree"])
    rows, cols = [], []
    for i, ((kind, a, b), bodies) in enumerate(zip(desc["rows"], desc["row_bodies"])):
        if kind == ROW_CARTESIAN:
            row = sorted({c for body in bodies for c in columns[body]})
        elif kind == ROW_COORDINATE:
            row = [a]
        elif kind == ROW_COUPLER:
            row = sorted({a, desc["couplers"][b][0]})
        else:
            row = [a, a + 1, a + 2, a + 3]
        rows += [i] * len(row)
        cols += row
    return np.array(rows, dtype=int), np.array(cols, dtype=int)


def relative_mass_pattern(desc):
    """(indptr, indices), by rows and ascending, of the entries of relative.c's M = Σ_b T_bᵀ M_c,b T_b
    that can be non-zero: every pair of columns on one body's path.  The order of the packed M."""
    return group_pattern(desc["nq"], body_columns(desc["tree"]))


def cartesian_packing(desc):
    """index(output, flat index) → packed index of the Cartesian kernels' ``jac`` and ``M`` in a relative
    library (module docstring; other outputs unchanged).  Raises CodegenUnavailable for an entry the
    packed layout has no place for (a Cartesian Φ_q entry outside its row's bodies, an M entry off the
    bodies' diagonal blocks): relative.c would not read it."""
    nc = desc["cartesian"]["nq"]
    start, slot = 0, {}                        # Cartesian row a → (its packed start, {body: n})
    for (kind, a, _), bodies in zip(desc["rows"], desc["row_bodies"]):
        if kind == ROW_CARTESIAN:
            slot[a] = (start, {b: n for n, b in enumerate(bodies)})
            start += 7 * len(bodies)

    def index(output, flat):
        if output == "jac":
            a, c = divmod(flat, nc)
            if a in slot and c // 7 in slot[a][1]:
                return slot[a][0] + 7 * slot[a][1][c // 7] + c % 7
        elif output == "M":
            i, k = divmod(flat, nc)
            if i // 7 == k // 7:
                return 49 * (i // 7) + 7 * (i % 7) + k % 7
        else:
            return flat
        raise CodegenUnavailable(f"Cartesian {output} entry {divmod(flat, nc)} outside relative.c's packed layout")
    return index


def layout_tables(desc):
    """{name: integer list} of the tables relative.c reads besides body_col and row_body (module
    docstring): jp_start, jp_col (Φ_q's pattern), mp_start, mp_col (M's), mass_at_start, mass_at and
    mass_diag."""
    rows, cols = relative_jacobian_pattern(desc)
    jp_start = np.searchsorted(rows, np.arange(len(desc["rows"]) + 1))
    mp_start, mp_col = relative_mass_pattern(desc)
    at = {(k, int(c)): e for k in range(desc["nq"]) for e, c in zip(range(mp_start[k], mp_start[k + 1]),
                                                                      mp_col[mp_start[k]:mp_start[k + 1]])}
    columns = body_columns(desc["tree"])
    mass_at = [at[r, c] for path in columns for r in path for c in path]
    return {"jp_start": jp_start.tolist(), "jp_col": cols.tolist(), "mp_start": mp_start.tolist(),
            "mp_col": mp_col.tolist(), "mass_at_start": np.cumsum([0] + [len(p) ** 2 for p in columns]).tolist(),
            "mass_at": mass_at, "mass_diag": [at[j, j] for j in range(desc["nq"])]}


def tree_scatter(desc):
    """(rows, cols) of the packed T's entries in the dense 7 nb × nq T (T_dense[rows, cols] = packed)."""
    rows, cols = [], []
    for b, path in enumerate(body_columns(desc["tree"])):
        for i in range(7):
            rows += [7 * b + i] * len(path)
            cols += path
    return np.array(rows, dtype=int), np.array(cols, dtype=int)
