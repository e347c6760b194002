"""Parameter studies and design of experiments, run serially or on Dask (``docs/studies.md``).

::

    study = solver.Study(model, parameters=[solver.Parameter("bodies.crank.mass", values=(0.5, 1.0))],
                         responses=[solver.Response("max_reaction_force", "crank_pin")],
                         fixed={"settings.t_end": 0.2})
    res = solver.run_study(study, executor="local", workers=2)   # or "serial", "tcp://HOST:PORT"
    res.to_csv("results.csv")
"""
from .responses import RESPONSE_KINDS, Response, response_choices
from .runner import StudyResults, VariantOutcome, run_study, run_variant
from .spec import DESIGNS, Parameter, Study, apply_edit, load_study, parameter_paths, study_from_dict

__all__ = ["RESPONSE_KINDS", "Response", "response_choices", "StudyResults", "VariantOutcome", "run_study",
           "run_variant", "DESIGNS", "Parameter", "Study", "apply_edit", "load_study", "parameter_paths",
           "study_from_dict"]
