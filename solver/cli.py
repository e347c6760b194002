"""The ``mbs`` command: run, validate, inspect and linearize models from a terminal.

::

    mbs run MODEL [--t-end S] [--output-step S] [--formulation ...] [--partitioning ...]
                  [--integrator ...] [--rtol X] [--atol X] [--max-step S] [--codegen [auto|on|off]]
                  [--max-steps N] [--max-wall-time S|none]
                  [--out FILE.h5] [--csv DIR] [--quiet]
    mbs validate MODEL
    mbs info RESULTS.h5
    mbs linearize MODEL [--formulation ...] [--equilibrium [--nearest]]
    mbs study STUDY.json [--scheduler tcp://HOST:PORT | --serial] [--workers N] [--out RESULTS.csv]
                         [--results-dir DIR] [--max-wall-time S|none] [--quiet]
    mbs import ROBOT.urdf|MODEL.xml -o MODEL.mbs.json [--package-dir DIR] [--no-limits]
    mbs export-fmu MODEL -o MODEL.fmu [--step S] [--input NAME=PATH ...] [--rtol X] [--atol X] [--quiet]
    mbs --version

Exit codes (error policy, docs/reliability.md): 0 success, 2 bad input (invalid model or option,
missing or unreadable file), 3 solver failure (or an unexpected internal error), 130 interrupted.
The batch commands (run, study) bound each run's wall time: ``--max-wall-time``, else the project's
``max_wall_time``, else BATCH_WALL_TIME (300 s, solver/analysis/step_rules.py); a run that reaches it,
or whose rate projects twice it to t_end (the crawl rule), stops with exit 3 and its results so far.
Errors are one line on stderr starting with ``mbs: error:``, never a traceback (set ``MBS_DEBUG=1``
to see the traceback of an internal error).  A failed or interrupted run still saves the results up
to that point when ``--out``/``--csv`` was given.
"""
from __future__ import annotations

import argparse
import io
import math
import os
import signal
import sys
import threading
import time
import warnings

import numpy as np

from . import __version__
from .errors import Cancelled, ModelError, SolverError
from .io.files import check_target
from .io.project import load_project
from .model.elements import Settings
from .analysis.step_rules import BATCH_WALL_TIME
from .model.fields import FieldProblem, problem_count, shown_text

EXIT_OK, EXIT_INPUT, EXIT_SOLVER, EXIT_INTERRUPTED = 0, 2, 3, 130
RUN_OPTIONS = ("t_end", "output_step", "formulation", "partitioning", "integrator", "rtol", "atol",
               "max_step")
LIMIT_OPTIONS = ("max_steps",)       # settings a run takes from its options (--max-wall-time: _batch_wall_time)
NO_BOUND = "none"
MAX_EVENTS_SHOWN = 20
DOF_ESTIMATE_MAX_COORDINATES = 700   # rank of the constraint Jacobian only while it is cheap


class InputError(Exception):
    """Bad input that is not a model problem (an option value, an output path): exit 2."""


# ---- Public API -----------------------------------------------------------------------------------
def main(argv=None) -> int:
    """Run the ``mbs`` command with ``argv`` (default ``sys.argv[1:]``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:            # usage errors (2), --help and --version (0)
        return exc.code if isinstance(exc.code, int) else (EXIT_OK if exc.code is None else EXIT_INPUT)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)     # numpy's, printed with a line of source
            return args.command(args)
    except (ModelError, InputError) as exc:
        return _fail(str(exc), EXIT_INPUT)
    except SolverError as exc:
        return _fail(str(exc), EXIT_SOLVER)
    except (Cancelled, KeyboardInterrupt):
        return _fail("interrupted", EXIT_INTERRUPTED)
    except BrokenPipeError:              # `mbs info x.h5 | head`: the reader left; stop quietly
        _silence_stdout()
        return 1
    except Exception as exc:             # noqa: BLE001 — the error policy: never a traceback
        if os.environ.get("MBS_DEBUG") == "1":
            raise
        return _fail(f"internal error: {type(exc).__name__}: {exc} (set MBS_DEBUG=1 for a traceback)",
                     EXIT_SOLVER)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="mbs", description="MBS Studio multibody solver.")
    parser.add_argument("--version", action="version", version=f"mbs {__version__}")
    sub = parser.add_subparsers(title="commands", metavar="COMMAND", required=True)

    run = sub.add_parser("run", help="simulate a model and print a summary",
                         description="Simulate a model; options not given come from the project's "
                                     "saved solver settings.")
    run.add_argument("model", metavar="MODEL", help="project file (*.mbs.json)")
    run.add_argument("--t-end", type=float, metavar="S", help="end time [s]")
    run.add_argument("--output-step", type=float, metavar="S", help="output interval [s]")
    _add_formulation(run)
    run.add_argument("--partitioning", choices=Settings.field("partitioning").choices)
    run.add_argument("--integrator", choices=Settings.field("integrator").choices)
    run.add_argument("--rtol", type=float, metavar="X", help="relative tolerance")
    run.add_argument("--atol", type=float, metavar="X", help="absolute tolerance")
    run.add_argument("--max-step", type=float, metavar="S", help="largest integration step [s]")
    run.add_argument("--max-steps", type=int, metavar="N", help="stop (exit 3, results kept) after N integrator steps")
    run.add_argument("--max-wall-time", type=_wall_time, metavar="S",
                     help="stop (exit 3, results kept) after S seconds of wall time, or sooner when the run's rate "
                          "projects twice that to t_end; default: the project's setting, else "
                          f"{BATCH_WALL_TIME:g}; 'none': no bound")
    run.add_argument("--hold", metavar="J1,J2", help="joints that keep their drawn position while assembling")
    run.add_argument("--from-equilibrium", action="store_true",
                     help="start at rest from the static equilibrium near the drawn configuration")
    run.add_argument("--codegen", nargs="?", const="on", choices=Settings.field("codegen").choices,
                     help="generated C kernels (docs/codegen.md): auto (the default setting: when a C compiler "
                          "is found and the model is supported), on (required), off; --codegen alone means on")
    run.add_argument("--planar", choices=Settings.field("planar").choices,
                     help="planar joint forms (docs/formulations.md): off, auto (the plane the model is planar in, "
                          "else 3-D), or the plane xy, yz, zx the model must be planar in")
    run.add_argument("--out", metavar="FILE.h5", help="write the results as HDF5")
    run.add_argument("--csv", metavar="DIR", help="write the results as CSV files into DIR")
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    run.set_defaults(command=cmd_run)

    validate = sub.add_parser("validate", help="check a project file and list every problem")
    validate.add_argument("model", metavar="MODEL")
    validate.set_defaults(command=cmd_validate)

    info = sub.add_parser("info", help="describe a results file")
    info.add_argument("results", metavar="RESULTS.h5")
    info.set_defaults(command=cmd_info)

    lin = sub.add_parser("linearize", help="natural frequencies and damping at the initial state")
    lin.add_argument("model", metavar="MODEL")
    _add_formulation(lin)
    lin.add_argument("--equilibrium", action="store_true",
                     help="linearize at rest at the stable static equilibrium reached downhill from the initial "
                          "configuration")
    lin.add_argument("--nearest", action="store_true",
                     help="with --equilibrium: the nearest equilibrium, stable or not (Newton; e.g. an arm upright)")
    lin.set_defaults(command=cmd_linearize)

    study = sub.add_parser("study", help="run a parameter study on Dask (docs/studies.md)",
                           description="Run every variant of STUDY.json; failed variants are listed, not fatal.")
    study.add_argument("study", metavar="STUDY.json")
    where = study.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDR", help="an existing Dask scheduler, tcp://HOST:PORT")
    where.add_argument("--serial", action="store_true", help="run the variants one by one in this process")
    study.add_argument("--workers", type=int, default=2, metavar="N", help="local cluster worker processes")
    study.add_argument("--out", metavar="RESULTS.csv", help="write the table here (default: stdout)")
    study.add_argument("--results-dir", metavar="DIR", help="save each variant's full results (HDF5) here")
    study.add_argument("--max-wall-time", type=_wall_time, metavar="S",
                       help="each variant's run stops (failed, results kept) after S seconds of wall time; default: "
                            f"the project's setting, else {BATCH_WALL_TIME:g}; 'none': no bound")
    study.add_argument("--quiet", action="store_true", help="no progress bar or summary")
    study.set_defaults(command=cmd_study)

    imp = sub.add_parser("import", help="convert a URDF robot or a MuJoCo MJCF model into a project "
                                        "(docs/import.md)",
                         description="Convert a URDF robot description or a MuJoCo MJCF model (a file whose "
                                     "root element is <mujoco>) into a project file; visual meshes are written "
                                     "as STL files into MODEL_meshes/ beside it.")
    imp.add_argument("urdf", metavar="ROBOT.urdf|MODEL.xml")
    imp.add_argument("-o", "--out", required=True, metavar="MODEL.mbs.json", help="project file to write")
    imp.add_argument("--package-dir", metavar="DIR", help="folder that package:// mesh paths are resolved in (URDF)")
    imp.add_argument("--no-limits", action="store_true",
                     help="keep joint limits as data only (default: enforced as joint stops)")
    imp.set_defaults(command=cmd_import, csv=None)      # csv: read by _check_output_paths

    fmu = sub.add_parser("export-fmu", help="write an FMI 2.0 co-simulation FMU (docs/fmu.md)",
                         description="Write the model as an FMI 2.0 Co-Simulation FMU for Linux x86-64: "
                                     "generated C, its own integrator, no Python inside.")
    fmu.add_argument("model", metavar="MODEL")
    fmu.add_argument("-o", "--out", required=True, metavar="MODEL.fmu", help="FMU file to write")
    fmu.add_argument("--step", type=float, metavar="S",
                     help="default communication step (default: the model's output step)")
    fmu.add_argument("--input", action="append", default=[], metavar="NAME=PATH",
                     help="an FMI input replacing a time function, e.g. crank_torque=forces.T1.torque.z "
                          "or crank_angle=drivers.D1.motion (repeatable)")
    fmu.add_argument("--rtol", type=float, metavar="X", help="integrator relative tolerance (default: the model's)")
    fmu.add_argument("--atol", type=float, metavar="X", help="integrator absolute tolerance (default: the model's)")
    fmu.add_argument("--quiet", action="store_true", help="print nothing on success")
    fmu.set_defaults(command=cmd_export_fmu, csv=None)
    return parser


# ---- commands -------------------------------------------------------------------------------------
def cmd_run(args) -> int:
    from .analysis.dynamics import simulate
    options = _run_options(args)
    _check_output_paths(args)
    model = _load_model(args.model)
    if args.planar:
        model.settings.set("planar", args.planar)
    for key, value in _run_options(args, LIMIT_OPTIONS).items():     # settings, not simulate() arguments
        model.settings.set(key, value)
    _batch_wall_time(model, args)
    try:
        with _CtrlC() as ctrl_c, ProgressBar(sys.stderr, enabled=not args.quiet and _isatty(sys.stderr)) as bar:
            res = simulate(model, progress=bar, cancel=ctrl_c.requested,
                           hold=[j for j in (args.hold or "").split(",") if j], codegen=args.codegen,
                           on_event=_build_notice(args.quiet),
                           results_path=args.out, initial="equilibrium" if args.from_equilibrium else "model",
                           **options)     # --out: streamed as the run goes
    except SolverError as exc:
        _fail(f"simulation failed: {exc}", EXIT_SOLVER)
        _save_partial(exc.results, args)
        return EXIT_SOLVER
    except Cancelled as exc:
        _fail(str(exc), EXIT_INTERRUPTED)
        _save_partial(exc.results, args)
        return EXIT_INTERRUPTED
    if not args.quiet:
        say(*format_summary(res))
        for e in res.events:
            if e.get("kind") in ("codegen", "equilibrium"):
                say(e["message"])
    for path in _write_results(res, args):
        if not args.quiet:
            print(f"results written to {path}")
    return EXIT_OK


def _build_notice(quiet):
    """on_event of a CLI run: "compiling the model…" on stderr when a build starts (it can take seconds)."""
    def on_event(event):
        if not quiet and event.get("kind") == "codegen" and event.get("message") == "compiling the model…":
            print("mbs: compiling the model…", file=sys.stderr, flush=True)
    return on_event


def cmd_validate(args) -> int:
    try:
        model = load_project(args.model)
    except ModelError as exc:
        for problem in exc.problems:
            _fail(_in_file(args.model, problem), EXIT_INPUT)
        return EXIT_INPUT
    counts = [_plural(len(getattr(model, c)), c) for c in ("bodies", "joints", "forces", "drivers", "markers")]
    dof = _dof_estimate(model)
    print("ok: " + ", ".join(counts + ([f"{dof} degree{'s' * (dof != 1)} of freedom"] if dof is not None else [])))
    return EXIT_OK


def cmd_info(args) -> int:
    res = _load_results(args.results)
    lines = format_summary(res)
    t = res.t
    span = f"{t[0]:.6g} .. {t[-1]:.6g} s, {len(t)} output points" if len(t) else "no output points"
    lines += [f"{'time span':<{_W}}{span}",
              f"{'bodies':<{_W}}{', '.join(res.body_names) or 'none'}",
              f"{'joints':<{_W}}{', '.join(res.joint_names) or 'none'}",
              f"{'drivers':<{_W}}{', '.join(res.driver_names) or 'none'}",
              f"events ({len(res.events)}):"]
    for e in res.events[:MAX_EVENTS_SHOWN]:
        lines.append(f"  t = {e.get('time', float('nan')):<10.6g} {e.get('kind', '?'):<10} {e.get('message', '')}")
    if len(res.events) > MAX_EVENTS_SHOWN:
        lines.append(f"  ... ({len(res.events) - MAX_EVENTS_SHOWN} more)")
    say(*lines)                         # names and messages come from the file
    return EXIT_OK


def cmd_linearize(args) -> int:
    from .analysis.equilibrium import static_equilibrium
    from .analysis.linearize import linearize
    from .compile import for_analysis
    if args.nearest and not args.equilibrium:
        raise InputError("--nearest: only with --equilibrium")
    model = _load_model(args.model)
    name, where, state = model.name, "", None
    if args.equilibrium:
        compiled = for_analysis(model, args.formulation)
        eq = static_equilibrium(compiled, method="newton" if args.nearest else "auto")
        where, state = (f"the {'stable' if eq.stable else 'UNSTABLE'} static equilibrium ({eq.method}, "
                        f"{_plural(eq.iterations, 'iterations')})"), eq.state
        model = compiled
    lin = linearize(model, state=state, formulation=args.formulation)
    where = where or f"t = {lin.t:.6g} s"
    unstable = int(np.count_nonzero(lin.unstable))
    say(f"linearization of '{name}' at {where}: {_plural(len(lin.eigenvalues), 'modes')}"
          + (f", {unstable} unstable" if unstable else ""))
    print(f"{'mode':>4}  {'frequency [Hz]':>16}  {'damping ratio':>14}  {'eigenvalue [1/s]':>28}")
    for k, (f, z, lam, bad) in enumerate(zip(lin.frequencies_hz, lin.damping_ratios + 0.0, lin.eigenvalues,
                                             lin.unstable), 1):
        print(f"{k:>4}  {f:>16.10g}  {z:>14.6g}  {f'{lam.real:.8g} {_sign(lam.imag)} {abs(lam.imag):.8g}j':>28}"
              + ("  unstable" if bad else ""))
    return EXIT_OK


def cmd_study(args) -> int:
    """Exit 0 when the study ran (failed variants are listed on stderr), 3 when no variant
    succeeded, 130 when interrupted (the variants done so far are still written)."""
    from .study import load_study, run_study
    if args.workers < 1:
        raise InputError(f"--workers: must be >= 1; got {args.workers}")
    if args.out and not os.path.isdir(os.path.dirname(os.path.abspath(args.out))):
        raise InputError(f"--out {args.out}: folder {os.path.dirname(os.path.abspath(args.out))} does not exist")
    if args.out:
        try:
            check_target(args.out)            # a link, device, FIFO or folder is never replaced
        except ModelError as exc:
            raise InputError(f"--out {exc}") from None
    study = load_study(args.study)
    _batch_wall_time(study.model, args)
    if args.results_dir:
        study.results_dir = args.results_dir
    executor = "serial" if args.serial else (args.scheduler or "local")
    show = not args.quiet and _isatty(sys.stderr)

    def progress(done, total, outcome):
        if show:
            n = done * 30 // total
            sys.stderr.write(f"\r[{'#' * n}{'.' * (30 - n)}] {done}/{total} variants")
            sys.stderr.flush()

    with _CtrlC() as ctrl_c:
        res = run_study(study, executor=executor, workers=args.workers, progress=progress, cancel=ctrl_c.requested)
    if show:
        sys.stderr.write("\n")
    if args.out:
        try:
            res.to_csv(args.out)
        except OSError as exc:
            raise InputError(f"cannot write {args.out}: {exc}") from None
    else:
        table = io.StringIO()
        res.to_csv(table)
        say(*table.getvalue().splitlines())      # response names and values come from STUDY.json
    for v in res.variants:
        if v.status == "failed":
            say(f"mbs: variant {v.index} failed: {v.message}", file=sys.stderr)
    counts = res.counts()
    if not args.quiet:
        print(f"study: {len(res.variants)} variants: {counts['ok']} ok, {counts['failed']} failed, "
              f"{counts['cancelled']} cancelled in {res.wall_time:.3g} s ({executor})", file=sys.stderr)
    if counts["cancelled"]:
        return EXIT_INTERRUPTED
    return EXIT_OK if counts["ok"] else EXIT_SOLVER


# ---- summary --------------------------------------------------------------------------------------
_W = 26   # label column width


def cmd_import(args) -> int:
    """Exit 0 when the project was written, 2 when the URDF or MJCF file or an option is refused."""
    from .io.imported import mesh_folder_name
    from .io.mjcf import import_mjcf, is_mjcf
    from .io.urdf import import_urdf
    _check_output_paths(args)
    if not os.path.isfile(args.urdf):
        raise InputError(f"{args.urdf}: {'is a directory' if os.path.isdir(args.urdf) else 'no such file'}")
    mjcf = is_mjcf(args.urdf)
    if mjcf and args.package_dir:
        raise InputError(f"--package-dir: only for URDF files; {args.urdf} is an MJCF model (its files are "
                         "found from its own folder)")
    try:
        if mjcf:
            result = import_mjcf(args.urdf, args.out, enforce_limits=not args.no_limits)
        else:
            result = import_urdf(args.urdf, args.out, package_dir=args.package_dir,
                                 enforce_limits=not args.no_limits)
    except OSError as exc:
        raise InputError(f"--out {args.out}: cannot write ({exc.strerror or exc})") from None
    m = result.model
    counts = [_plural(len(getattr(m, c)), c) for c in ("bodies", "joints", "forces")]
    meshes = f" (meshes in {mesh_folder_name(args.out)}/)" if result.meshes else ""
    say(f"imported '{m.name}': {', '.join(counts)} -> {args.out}{meshes}")
    for note in result.notes:
        say(f"note: {note}")
    return EXIT_OK


def cmd_export_fmu(args) -> int:
    """Exit 0 when the FMU was written, 2 for a model or option that cannot be exported, 3 when the
    model cannot be assembled or the library does not compile."""
    from .fmu import export_fmu
    step, rtol, atol = (_option(flag, key, value) for flag, key, value in
                        (("--step", "output_step", args.step), ("--rtol", "rtol", args.rtol), ("--atol", "atol", args.atol)))
    _check_output_paths(args)
    inputs = {}
    for item in args.input:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise InputError(f"--input {item}: must be NAME=PATH, e.g. crank_torque=forces.T1.torque.z")
        inputs[name] = path
    model = _load_model(args.model)
    with _CtrlC() as ctrl_c:
        path = export_fmu(model, args.out, step=step, inputs=inputs, rtol=rtol, atol=atol,
                          on_event=_build_notice(args.quiet), cancel=ctrl_c.requested)
    if not args.quiet:
        print(f"FMU written to {path}")
    return EXIT_OK


def format_summary(res) -> list[str]:
    """The lines describing a run: what ran, how long it took and how accurate it was."""
    s = res.summary()
    events = res.events
    n_partition = sum(e.get("kind") in ("partition", "switch") for e in events)
    n_switch = sum(e.get("kind") == "switch" for e in events)
    rows = [
        ("model", s["model"] or "?"),
        ("status", s["status"] + (f" ({s['message']})" if s["message"] else "")),
        ("method", f"{s['formulation']} / {s['partitioning']} partitioning / {s['integrator']}"),
        ("simulated time", f"{s['t_end']:.6g} s ({s['outputs']} output points)"),
        ("steps", f"{s['steps']} ({s['rhs_evaluations']} rhs evaluations)"),
        ("wall time", f"{s['wall_time_s']:.3g} s"),
        ("real-time factor", f"{s['real_time_factor']:.3g}" if math.isfinite(s["real_time_factor"]) else "n/a"),
        ("max constraint violation", f"{s['max_constraint_violation']:.3g}"),
        ("energy drift (relative)", f"{s['energy_drift']:.3g}"),
        ("partition events", f"{n_partition}" + (f" ({n_switch} hybrid switches)" if n_switch else "")),
    ]
    redundant = res.redundant_equations
    if redundant:
        rows.append(("redundant equations", f"{len(redundant)}: " + "; ".join(redundant)))
    return [f"{label:<{_W}}{value}" for label, value in rows]


class ProgressBar:
    """``progress(t, t_end)`` callback drawing one self-overwriting line (at most 10 times a second);
    a context manager that ends the line on exit.  Draws nothing unless ``enabled``."""

    def __init__(self, stream, enabled=True, width=30):
        self.stream = stream
        self.enabled = enabled
        self.width = width
        self.start = time.perf_counter()
        self.last = None

    def __call__(self, t, t_end):
        now = time.perf_counter()
        if not self.enabled or (self.last is not None and now - self.last < 0.1 and t < t_end):
            return
        self.last = now
        frac = min(max(t / t_end, 0.0), 1.0) if t_end > 0 else 1.0
        n = int(frac * self.width)
        self.stream.write(f"\r[{'#' * n}{'.' * (self.width - n)}] {100 * frac:5.1f}%  "
                          f"t = {t:.4g} / {t_end:.4g} s  wall {now - self.start:.1f} s")
        self.stream.flush()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.last is not None:
            self.stream.write("\n")
            self.stream.flush()
            self.last = None
        return False


# ---- helpers --------------------------------------------------------------------------------------
class _Parser(argparse.ArgumentParser):
    """argparse with usage errors as one ``mbs: error:`` line (exit 2)."""

    def error(self, message):
        self.exit(EXIT_INPUT, f"mbs: error: {message} (see '{self.prog} --help')\n")


def _add_formulation(parser):
    parser.add_argument("--formulation", choices=Settings.field("formulation").choices)


def _fail(message, code) -> int:
    say(f"mbs: error: {message}", file=sys.stderr)
    return code


def say(*lines, file=None):
    """Print ``lines`` (to stdout unless ``file``), each through :func:`solver.model.fields.shown_text`: every CLI
    print of text that comes from a file (names, notes, messages, paths) goes through here."""
    print("\n".join(shown_text(line) for line in lines), file=sys.stdout if file is None else file)


def _run_options(args, keys=RUN_OPTIONS) -> dict:
    """The options ``keys`` given on the command line (default: the simulate() overrides), checked
    against their Settings fields."""
    return {key: _option(f"--{key.replace('_', '-')}", key, getattr(args, key))
            for key in keys if getattr(args, key) is not None}


def _option(flag, key, value):
    """``value`` of the command-line option ``flag`` checked as the solver setting ``key`` (finite,
    within its bounds); None stays None."""
    if value is None:
        return None
    try:
        return Settings.field(key).coerce(value)
    except FieldProblem as p:
        raise InputError(f"{flag}: {p}") from None


def _wall_time(text):
    """--max-wall-time's value: seconds, or 'none' (no bound: NO_BOUND)."""
    return NO_BOUND if text.strip().lower() == "none" else float(text)


def _batch_wall_time(model, args):
    """settings.max_wall_time of a batch command's runs: --max-wall-time (checked as the setting;
    'none' removes the bound), else the project's own, else BATCH_WALL_TIME (step_rules)."""
    if args.max_wall_time is NO_BOUND:
        model.settings.set("max_wall_time", None)
    elif args.max_wall_time is not None:
        model.settings.set("max_wall_time", _option("--max-wall-time", "max_wall_time", args.max_wall_time))
    elif model.settings.max_wall_time is None:
        model.settings.set("max_wall_time", BATCH_WALL_TIME)


def _check_output_paths(args):
    """Refuse output paths that cannot be written before spending time on the run."""
    if args.out:
        folder = os.path.dirname(os.path.abspath(args.out))
        if not os.path.isdir(folder):
            raise InputError(f"--out {args.out}: folder {folder} does not exist")
        try:
            check_target(args.out)            # a link, device, FIFO or folder is never replaced
        except ModelError as exc:
            raise InputError(f"--out {exc}") from None
    if args.csv and os.path.exists(args.csv) and not os.path.isdir(args.csv):
        raise InputError(f"--csv {args.csv}: exists and is not a directory")


def _load_model(path):
    try:
        return load_project(path)
    except ModelError as exc:
        text = _in_file(path, exc.problems[0])
        more = problem_count(exc.problems) - 1
        if more:
            text += f" (and {_plural(more, 'more problems')}; 'mbs validate {path}' lists them all)"
        raise InputError(text) from None


def _load_results(path):
    """load_results (lazily: `mbs info` reads only the datasets of the summary, so a long streamed
    result is not loaded whole), with any failure to read the file reported as bad input."""
    from .results import load_results
    if not os.path.isfile(path):
        raise InputError(f"{path}: {'is a directory' if os.path.isdir(path) else 'no such file'}")
    try:
        return load_results(path, lazy=True)
    except ModelError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"{path}: not a readable MBS Studio results file ({type(exc).__name__}: {exc})") from None


def _write_results(res, args) -> list[str]:
    """Write the results where asked; returns the paths written.  Write failures are InputError."""
    written = []
    try:
        if args.out:
            res.save(args.out)
            written.append(args.out)
        if args.csv:
            res.to_csv(args.csv)
            written.append(args.csv + os.sep)
    except OSError as exc:
        raise InputError(f"cannot write results: {exc}") from None
    return written


def _save_partial(res, args):
    """After a failure: keep what was computed (never overwrite a file with an empty run)."""
    if not (args.out or args.csv):
        return
    if res is None or len(res) == 0:
        print("mbs: no output points were computed; nothing saved", file=sys.stderr)
        return
    try:
        paths = _write_results(res, args)
    except InputError as exc:
        _fail(f"partial results not saved: {exc}", EXIT_SOLVER)
        return
    print(f"mbs: partial results up to t = {res.t[-1]:.6g} s saved to {' and '.join(paths)}", file=sys.stderr)


def _dof_estimate(model):
    """Mobility nq − rank Φ_q at the initial configuration (drivers included), or None when that
    is not cheap or not available; never fails validation by itself."""
    try:
        from .formulations.cartesian import CartesianSystem
        system = CartesianSystem(model)
        if system.nq > DOF_ESTIMATE_MAX_COORDINATES:
            return None
        q, _, t = system.initial_state()
        jac = system.constraints(q, t).jac
        return int(system.nq - (np.linalg.matrix_rank(jac, tol=1e-8 * max(1.0, np.abs(jac).max()))
                                if jac.size else 0))
    except ModelError:
        raise
    except Exception:                    # noqa: BLE001 — an estimate only
        if os.environ.get("MBS_DEBUG") == "1":
            raise
        return None


class _CtrlC:
    """While active, the first Ctrl-C asks the run to stop (partial results are kept); a second
    one interrupts at once."""

    def __init__(self):
        self.flag = False
        self.previous = None

    def requested(self):
        return self.flag

    def _handler(self, signum, frame):
        if self.flag:
            raise KeyboardInterrupt
        self.flag = True

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, self._handler)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


def _silence_stdout():
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _isatty(stream):
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _in_file(path, problem):
    return problem if problem.startswith(str(path)) else f"{path}: {problem}"


def _plural(n, noun):
    """'1 body', '2 bodies', '1 joint', '3 joints' (noun given in the plural)."""
    if n == 1:
        noun = noun[:-3] + "y" if noun.endswith("ies") else noun[:-1]
    return f"{n} {noun}"


def _sign(x):
    return "-" if x < 0 else "+"
