"""First runs pay only for what they use (issue #32 item 5): ``import solver`` imports none of scipy,
sympy, h5py, lxml, dask or threadpoolctl (the public names are imported at first use); a build on a
warm codegen cache imports no sympy, and a run stepped in C no scipy.integrate.  Each check is a fresh
interpreter (what a user's first command is); timings are bench/first_run.py's."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import solver

from test_hostile_limits import pendulum

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HEAVY = ("scipy", "sympy", "h5py", "lxml", "dask", "threadpoolctl", "scipy.integrate", "scipy.optimize")


def fresh(*steps, args=()):
    """For each piece of code in ``steps``, run in turn in one new interpreter: ``sorted(HEAVY
    modules imported)`` after it."""
    probe = "import json, sys\n" + "".join(
        f"{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n" for code in steps)
    out = subprocess.run([sys.executable, "-c", probe, *args], capture_output=True, text=True, check=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    return [json.loads(line) for line in out.stdout.strip().splitlines()[-len(steps):]]


def test_import_solver_imports_no_heavy_dependency_and_preload_what_runs_use():
    imported, preloaded = fresh("import solver", "solver.preload()")
    assert imported == []
    assert {"scipy.integrate", "scipy.optimize"} <= set(preloaded)


def test_every_public_name_resolves_and_star_import_works():
    namespace = {}
    exec("from solver import *", namespace)                  # noqa: S102 — the star import of the API
    assert set(solver.__all__) <= set(namespace)
    assert set(solver.__all__) <= set(dir(solver))
    assert solver.load_model is solver.io.project.load_project
    assert "tire" in solver.forces.EVALUATORS                 # the vehicle kinds are registered at import


def test_a_warm_build_needs_no_sympy_nor_scipy_and_a_run_in_c_of_an_open_tree_no_scipy(tmp_path):
    """The build imports no scipy (scipy.linalg at its first use: solver.math.linalg); the pendulum, an
    open tree stepped in C (its first row solved in C too), runs without it; a run that factors a
    partition (the Cartesian formulation's) imports scipy.linalg, still not scipy.integrate."""
    path = tmp_path / "pendulum.mbs.json"
    model = pendulum()
    model.settings.set("t_end", 0.5)
    model.settings.set("formulation", "relative")
    model.save(path)
    assert solver.compile_model(solver.load_model(path)).generated        # in the cache (built now or before)
    assert solver.compile_model(solver.load_model(path), formulation="cartesian").generated
    built, ran, factored = fresh("import solver\ncompiled = solver.compile_model(solver.load_model(sys.argv[1]))\n"
                                 "assert compiled.generated",
                                 "res = solver.simulate(compiled)\n"
                                 "assert any('step loop in C' in e['message'] for e in res.events)",
                                 "res = solver.simulate(solver.load_model(sys.argv[1]), formulation='cartesian')\n"
                                 "assert any('step loop in C' in e['message'] for e in res.events)",
                                 args=(str(path),))
    assert built == [] and not [m for m in ran if m.startswith("scipy")]      # (threadpoolctl: the BLAS limit)
    assert "scipy" in factored and "sympy" not in factored and "scipy.integrate" not in factored



def test_a_run_that_imports_scipy_linalg_first_limits_its_blas_too(tmp_path):
    """scipy.linalg is imported at its first use; a run that factors (the Cartesian pendulum's
    partition) imports it before the BLAS limit of the run, so scipy's BLAS runs single-threaded in
    it as numpy's does (threads.single_threaded_blas), in a fresh process where no scipy is loaded."""
    path = tmp_path / "pendulum.mbs.json"
    pendulum().save(path)
    probe = ("import json, sys, solver\nfrom threadpoolctl import threadpool_info\nseen = []\n"
             "res = solver.simulate(solver.load_model(sys.argv[1]), formulation='cartesian', t_end=0.02,\n"
             "                      progress=lambda t, t_end: seen.append([(i['filepath'], i['num_threads'])\n"
             "                                                          for i in threadpool_info() if i['user_api'] == 'blas']))\n"
             "print(json.dumps(seen[-1]))\n")
    out = subprocess.run([sys.executable, "-c", probe, str(path)], capture_output=True, text=True, check=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=ROOT))
    libraries = json.loads(out.stdout.strip().splitlines()[-1])
    assert any("scipy_openblas-" in path or "scipy.libs" in path for path, _ in libraries), libraries
    assert all(threads == 1 for _, threads in libraries), libraries
