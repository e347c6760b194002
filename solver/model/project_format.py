"""The project file's form of a model (``*.mbs.json``, docs/file-format.md): the format tag, its
version, and the model, its solver settings and its view as one JSON document.  Reading it back is
:mod:`solver.io.project` (validation of untrusted text); writing it is :meth:`Model.save`."""
from __future__ import annotations

import json

FORMAT = "mbs-studio-project"
VERSION = 1


def project_to_dict(model) -> dict:
    settings = model.settings.to_dict()
    settings.pop("name", None)
    return {"format": FORMAT, "version": VERSION, "model": model.to_dict(), "solver": settings,
            "view": model.view}


def project_to_text(model) -> str:
    return json.dumps(project_to_dict(model), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
