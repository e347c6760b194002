"""The project file's form of a model (``*.mbs.json``, docs/file-format.md): the format tag, its
version, and the model, its solver settings and its view as one JSON document.  Reading it back is
:mod:`solver.io.project` (validation of untrusted text); writing it is :meth:`Model.save`."""
from __future__ import annotations

import json

FORMAT = "mbs-studio-project"
# Version 2 added design points, links and couplers (the model's "points", "links" and "couplers" lists, a
# joint's "at_point"); a version-1 file is a version-2 file without them, so both read alike.  A model that
# uses none of them is written as version 1, readable by the programs that read only version 1.
VERSION = 2
VERSION_ADDED = {"points": 2, "links": 2, "at_point": 2, "couplers": 2}     # model key (or joint field) → version


def features(model_dict) -> dict:
    """The versioned features ``model_dict`` (the model part of a project file) uses → their version."""
    used = [key for key in ("points", "links", "couplers") if isinstance(model_dict, dict) and model_dict.get(key)]
    joints = model_dict.get("joints", ()) if isinstance(model_dict, dict) else ()
    used += ["at_point"] * any(isinstance(j, dict) and j.get("at_point") for j in (joints if isinstance(joints, list) else ()))
    return {key: VERSION_ADDED[key] for key in used}


def file_version(model_dict) -> int:
    """The oldest version that holds ``model_dict``."""
    return max([1, *features(model_dict).values()])


def project_to_dict(model) -> dict:
    settings = model.settings.to_dict()
    settings.pop("name", None)
    data = model.to_dict()
    return {"format": FORMAT, "version": file_version(data), "model": data, "solver": settings,
            "view": model.view}


def project_to_text(model) -> str:
    return json.dumps(project_to_dict(model), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
