"""FMI 2.0 Co-Simulation export of a model: :func:`export_fmu` writes an FMU whose shared
library holds the model's generated kernels, the compiled reduced right-hand side, a Dormand–Prince
integrator and the FMI API — no Python inside.  See ``docs/fmu.md``."""
from .export import export_fmu
from .variables import input_slots

__all__ = ["export_fmu", "input_slots"]
