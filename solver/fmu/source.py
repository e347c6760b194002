"""The model-specific C of an FMU: sizes, the start state, the partition's constraint rows, the
joint and variable tables that ``fmu.c`` reads, and the time functions (driver motions, force
inputs) written as C (:mod:`solver.codegen.timefunctions`), so that no Python runs in the FMU."""
from __future__ import annotations

import numpy as np

from ..analysis.step_rules import AMPLIFICATION_GROWTH, REPARTITION_RATIO
from ..formulations.branches import BRANCH_GUARD, BRANCH_SHRINK
from ..partitioning.partition import NEWTON_STALL, POSITION_FRACTION, POSITION_TOL, ROUNDOFF
from ..codegen.derive import input_functions
from ..codegen.timefunctions import PRELUDE, c_time_function
from .variables import OUTPUT_KINDS, VR_INPUT, VR_PARAMETER, driver_slots, input_slots


def _array(ctype, name, values):
    values = list(values)
    text = ", ".join(repr(float(v)) if ctype == "double" else str(int(v)) for v in values) or "0"
    return f"static const {ctype} {name}[] = {{{text}}};"


def layout_source(model, system, start, variables, guid, rtol, atol) -> str:
    """C text of the layout of ``model`` compiled as ``system``.  ``start``: (q, q̇, (unwrapped angles,
    their rates), independent rows, redundant rows, parameter vector) of the assembled start state; ``variables``:
    :func:`solver.fmu.variables.fmu_variables` (an input replaces the time function of its path by
    the polynomial of its value and derivatives, fmu.c's ``time_inputs``)."""
    q, qd, (ang, rate), rows, redundant, par = start
    inputs = [v for v in variables if v.kind == VR_INPUT]
    fns = input_functions(system)
    joint_rows, row0 = [], [0]
    sides, bjs, sj, modal_col, phi0, phi = [], [], [], [], [0], []
    for k, j in enumerate(system.joints):
        joint_rows += list(j.rows) + system._driven_rows.get(k, [])
        row0.append(len(joint_rows))
        sides.append(j.body_j if j.body_j >= 0 else j.body_i)
        bjs.append(j.body_j)
        local, shape, column = _reaction_point(system, k, j)
        sj += list(local)
        modal_col.append(column)
        phi += list(np.ravel(shape))
        phi0.append(len(phi))
    lines = [f"#define {name} {value}" for name, value in (
        ("NQ", system.nq), ("NM", system.m), ("NR", len(rows)), ("NRED", len(redundant)),
        ("NA", len(system._angle_rows)), ("NDRV", len(system._driver_fns)), ("NU", len(fns)),
        ("NPAR1", max(1, len(par))), ("NIN", len(inputs)), ("NJ", len(system.joints)), ("NVR", len(variables)),
        ("MBS_RTOL", repr(float(rtol))), ("MBS_ATOL", repr(float(atol))), ("MBS_GUID", f'"{guid}"'),
        ("MBS_BRANCH_GUARD", repr(BRANCH_GUARD)), ("MBS_BRANCH_SHRINK", repr(BRANCH_SHRINK)),
        ("MBS_POSITION_TOL", repr(POSITION_TOL)), ("MBS_POSITION_FRACTION", repr(POSITION_FRACTION)),
        ("MBS_NEWTON_STALL", repr(NEWTON_STALL)), ("MBS_REPARTITION_RATIO", repr(REPARTITION_RATIO)),
        ("MBS_AMPLIFICATION_GROWTH", repr(AMPLIFICATION_GROWTH)),
        ("MBS_ROUNDOFF", repr(float(ROUNDOFF))))]
    lines.append("enum { " + ", ".join(f"OUT_{name.upper()} = {code}" for name, code in OUTPUT_KINDS.items())
                 + f", VR_PARAMETER = {VR_PARAMETER}, VR_INPUT = {VR_INPUT} }};")
    lines += [_array("int", "mbs_rows", rows), _array("int", "mbs_red_rows", redundant),
              _array("int", "mbs_ang_row", [row for row, _, _ in system._angle_rows]),
              _array("double", "mbs_ang_coef", [coef for _, _, coef in system._angle_rows]),
              _array("int", "mbs_drv_row", system._driver_rows), _array("double", "mbs_q0", q),
              _array("double", "mbs_qd0", qd), _array("double", "mbs_ang0", ang), _array("double", "mbs_rate0", rate), _array("double", "mbs_par0", par),
              _array("double", "mbs_in0", [v.start for v in inputs]),
              _array("int", "mbs_joint_side", sides), _array("int", "mbs_joint_bj", bjs),
              _array("double", "mbs_joint_sj", sj), _array("int", "mbs_joint_row0", row0),
              _array("int", "mbs_joint_ao", modal_col), _array("int", "mbs_joint_phi0", phi0),
              _array("double", "mbs_joint_phi", phi),
              _array("int", "mbs_joint_rows", joint_rows),
              _array("int", "mbs_vr_kind", [v.kind for v in variables]),
              _array("int", "mbs_vr_a", [v.a for v in variables]), _array("int", "mbs_vr_b", [v.b for v in variables]),
              PRELUDE]
    slots = {path: k for k, (path, _) in enumerate(input_slots(system)) if path}
    drivers = {path: d for path, (d, _) in driver_slots(model, system).items()}
    u_input = {slots[v.replaces]: v.a for v in inputs if v.replaces in slots}          # u index → input
    d_input = {drivers[v.replaces]: v.a for v in inputs if v.replaces in drivers}      # driver → input
    lines += [c_time_function(fn, f"mbs_driver_{k}") for k, fn in enumerate(system._driver_fns) if k not in d_input]
    lines += [c_time_function(fn, f"mbs_u_{k}") for k, fn in enumerate(fns) if k not in u_input]
    polynomial = "in[{0}] + (din[{0}] + 0.5 * d2in[{0}] * (t - t_in)) * (t - t_in)"    # the input over a step
    drive = "".join(f"    f[{k}] = {polynomial.format(d_input[k])}; fd[{k}] = din[{d_input[k]}] + d2in[{d_input[k]}] * "
                    f"(t - t_in); fdd[{k}] = d2in[{d_input[k]}];\n" if k in d_input else
                    f"    mbs_driver_{k}(t, v); f[{k}] = v[0]; fd[{k}] = v[1]; fdd[{k}] = v[2];\n"
                    for k in range(len(system._driver_fns)))
    entries = "".join(f"    u[{k}] = {polynomial.format(u_input[k])};\n" if k in u_input
                      else f"    mbs_u_{k}(t, v); u[{k}] = v[0];\n" for k in range(len(fns)))
    signature = "(double t, const double *in, const double *din, const double *d2in, double t_in, "
    unused = "    (void)t; (void)v; (void)in; (void)din; (void)d2in; (void)t_in;"
    lines.append(f"static void mbs_drivers{signature}double *f, double *fd, double *fdd)\n{{\n    double v[3];\n"
                 f"{drive}{unused} (void)f; (void)fd; (void)fdd;\n}}\n")
    lines.append(f"static void mbs_inputs{signature}double *u)\n{{\n    double v[3];\n{entries}{unused} (void)u;\n}}\n")
    return "\n".join(lines)


def _reaction_point(system, k, j):
    """(ℓ₀, Φ_node (3 × k_f, row-major), first modal column (0 without one)) of the point on body_j
    of joint k where its reaction acts, P = r_j + A_j (ℓ₀ + Φ_node a) (fmu.c ``mbs_reactions``): on a flexible
    body_j the deformed node of the joint (:meth:`solver.flexible.joints.FlexibleJoint.origin_j`),
    else s_j on the rigid body (or ground)."""
    fj = system.flex_joints.get(k)
    if fj is None or j.body_j < system.nb:
        return j.joint.s_j, np.zeros((3, 0)), 0
    _, local, shape, _ = fj.slots["Pj"]
    return local, shape, system.flex[j.body_j - system.nb].ao
