"""FMU step cost (solver.fmu) vs the solver's own run, per simulated second.

For each model: export (derive + compile, warm codegen cache afterwards), then the wall time of
``fmi2DoStep`` alone over ``--t-end`` seconds at 0.01 s communication steps through FMPy's
FMU2Slave (no output recording), at the model's own tolerances (its settings' rtol and atol, the
FMU's defaults) and at FMI tolerance 1e-8 (atol scaled with it); and the wall time of
``solver.simulate`` of the compiled model (warm) with the sample's own settings (formulation,
integrator, tolerances; output step 0.01 s).  Best of ``--repeat``.  The machine is shared: read
the numbers as noisy samples.

    .venv/bin/python bench/fmu.py [--t-end 1.0] [--repeat 2] [--only slider_crank ...]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import fmpy
from fmpy.fmi2 import FMU2Slave

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import solver  # noqa: E402
from solver.fmu import export_fmu  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[1] / "sample_models"
MODELS = {"slider_crank": "slider_crank", "rrc_arm_case1": "rrc_arm_case1", "car_bump": "vehicle_cae_tc_bump",
          "fourbar_flexible": "fourbar_singular_flexible"}
STEP = 0.01


def step_cost(path, t_end, tolerance=None):
    """Wall seconds of the fmi2DoStep calls over [0, t_end] (tolerance None: the FMU's default)."""
    md = fmpy.read_model_description(str(path))
    slave = FMU2Slave(guid=md.guid, unzipDirectory=fmpy.extract(str(path)),
                      modelIdentifier=md.coSimulation.modelIdentifier, instanceName="bench")
    slave.instantiate()
    slave.setupExperiment(tolerance=tolerance, startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    n = round(t_end / STEP)
    t0 = time.perf_counter()
    for k in range(n):
        slave.doStep(currentCommunicationPoint=k * STEP, communicationStepSize=STEP)
    wall = time.perf_counter() - t0
    slave.terminate()
    slave.freeInstance()
    return wall


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--t-end", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--only", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    print(f"{'model':15s} {'export s':>9s} {'FMU s/s':>9s} {'FMU 1e-8 s/s':>13s} {'solver s/s':>11s}  "
          "settings (solver; FMU tolerances)")
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.only:
            model = solver.load_model(SAMPLES / f"{MODELS[name]}.mbs.json")
            t0 = time.perf_counter()
            path = export_fmu(model, Path(tmp) / f"{name}.fmu", step=STEP)
            export_s = time.perf_counter() - t0
            fmu = [min(step_cost(path, args.t_end, tol) for _ in range(args.repeat)) / args.t_end
                   for tol in (None, 1e-8)]
            compiled = solver.compile_model(model, codegen="on")
            runs = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                solver.simulate(compiled, t_end=args.t_end, output_step=STEP)
                runs.append(time.perf_counter() - t0)
            s = compiled.settings
            print(f"{name:15s} {export_s:9.2f} {fmu[0]:9.3f} {fmu[1]:13.3f} {min(runs) / args.t_end:11.3f}  "
                  f"{s.formulation}, {s.integrator}; rtol {s.rtol:g}, atol {s.atol:g}")


if __name__ == "__main__":
    main()
