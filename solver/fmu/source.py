"""The model-specific C of an FMU: sizes, the start state, the partition's constraint rows, the
joint and variable tables that ``fmu.c`` reads, and the time functions (driver motions, force
inputs) written as C (:mod:`solver.codegen.timefunctions`), so that no Python runs in the FMU."""
from __future__ import annotations

from ..codegen.derive import input_functions
from ..codegen.timefunctions import PRELUDE, c_time_function
from .variables import OUTPUT_KINDS, VR_INPUT, VR_PARAMETER


def _array(ctype, name, values):
    values = list(values)
    text = ", ".join(repr(float(v)) if ctype == "double" else str(int(v)) for v in values) or "0"
    return f"static const {ctype} {name}[] = {{{text}}};"


def layout_source(system, start, variables, guid, rtol, atol) -> str:
    """C text of the layout.  ``start``: (q, q̇, unwrapped angles, independent rows, redundant rows,
    parameter vector) of the assembled start state; ``variables``:
    :func:`solver.fmu.variables.fmu_variables`."""
    q, qd, ang, rows, redundant, par = start
    inputs = [v for v in variables if v.kind == VR_INPUT]
    fns = input_functions(system)
    joint_rows, row0 = [], [0]
    sides, bjs, sj = [], [], []
    for k, (cj, bi, bj, _, jrows) in enumerate(system.joints):
        joint_rows += list(jrows) + system._driven_rows.get(k, [])
        row0.append(len(joint_rows))
        sides.append(bj if bj >= 0 else bi)
        bjs.append(bj)
        sj += list(cj.s_j)
    lines = [f"#define {name} {value}" for name, value in (
        ("NQ", system.nq), ("NM", system.m), ("NR", len(rows)), ("NRED", len(redundant)),
        ("NA", len(system._angle_rows)), ("NDRV", len(system._driver_fns)), ("NU", len(fns)),
        ("NPAR1", max(1, len(par))), ("NIN", len(inputs)), ("NJ", len(system.joints)), ("NVR", len(variables)),
        ("MBS_RTOL", repr(float(rtol))), ("MBS_ATOL", repr(float(atol))), ("MBS_GUID", f'"{guid}"'))]
    lines.append("enum { " + ", ".join(f"OUT_{name.upper()} = {code}" for name, code in OUTPUT_KINDS.items())
                 + f", VR_PARAMETER = {VR_PARAMETER}, VR_INPUT = {VR_INPUT} }};")
    lines += [_array("int", "mbs_rows", rows), _array("int", "mbs_red_rows", redundant),
              _array("int", "mbs_ang_row", [row for row, _, _ in system._angle_rows]),
              _array("double", "mbs_ang_coef", [coef for _, _, coef in system._angle_rows]),
              _array("int", "mbs_drv_row", system._driver_rows), _array("double", "mbs_q0", q),
              _array("double", "mbs_qd0", qd), _array("double", "mbs_ang0", ang), _array("double", "mbs_par0", par),
              _array("double", "mbs_in0", [v.start for v in inputs]),
              _array("int", "mbs_joint_side", sides), _array("int", "mbs_joint_bj", bjs),
              _array("double", "mbs_joint_sj", sj), _array("int", "mbs_joint_row0", row0),
              _array("int", "mbs_joint_rows", joint_rows),
              _array("int", "mbs_vr_kind", [v.kind for v in variables]),
              _array("int", "mbs_vr_a", [v.a for v in variables]), _array("int", "mbs_vr_b", [v.b for v in variables]),
              PRELUDE]
    lines += [c_time_function(fn, f"mbs_driver_{k}") for k, fn in enumerate(system._driver_fns)]
    replaced = {v.b: v.a for v in inputs}       # u index → FMI input number
    lines += [c_time_function(fn, f"mbs_u_{k}") for k, fn in enumerate(fns) if k not in replaced]
    drivers = "".join(f"    mbs_driver_{k}(t, v); f[{k}] = v[0]; fd[{k}] = v[1]; fdd[{k}] = v[2];\n"
                      for k in range(len(system._driver_fns)))
    lines.append("static void mbs_drivers(double t, double *f, double *fd, double *fdd)\n{\n"
                 f"    double v[3];\n{drivers}    (void)t; (void)v; (void)f; (void)fd; (void)fdd;\n}}\n")
    entries = "".join(f"    u[{k}] = in[{replaced[k]}] + din[{replaced[k]}] * (t - t_in);\n" if k in replaced
                      else f"    mbs_u_{k}(t, v); u[{k}] = v[0];\n" for k in range(len(fns)))
    lines.append("static void mbs_inputs(double t, const double *in, const double *din, double t_in, double *u)\n"
                 f"{{\n    double v[3];\n{entries}    (void)t; (void)v; (void)in; (void)din; (void)t_in; (void)u;\n}}\n")
    return "\n".join(lines)
