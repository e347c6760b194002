"""``modelDescription.xml`` of an FMI 2.0 Co-Simulation FMU (FMI 2.0.x standard, §2.2 and §4.3)."""
from __future__ import annotations

import datetime
import xml.etree.ElementTree as ET

from .variables import UNITS

_BASE = ("kg", "m", "s", "rad")


def model_description(*, model_name, identifier, guid, variables, t_end, step, tolerance, description="") -> bytes:
    """UTF-8 XML: Co-Simulation capabilities (variable communication steps, first-order input
    interpolation, no FMU state), the units used, the default experiment and the variables
    (outputs continuous and calculated, parameters tunable and exact, inputs continuous)."""
    root = ET.Element("fmiModelDescription", {
        "fmiVersion": "2.0", "modelName": model_name, "guid": guid, "description": description,
        "generationTool": "MBS Studio (solver.fmu)",
        "generationDateAndTime": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "variableNamingConvention": "flat", "numberOfEventIndicators": "0"})
    ET.SubElement(root, "CoSimulation", {
        "modelIdentifier": identifier, "canHandleVariableCommunicationStepSize": "true",
        "canInterpolateInputs": "true", "maxOutputDerivativeOrder": "0", "canGetAndSetFMUstate": "false",
        "canSerializeFMUstate": "false", "providesDirectionalDerivative": "false"})
    units = ET.SubElement(root, "UnitDefinitions")
    for name in sorted({v.unit for v in variables if v.unit}):
        unit = ET.SubElement(units, "Unit", {"name": name})
        ET.SubElement(unit, "BaseUnit", {b: str(e) for b, e in zip(_BASE, UNITS[name]) if e})
    ET.SubElement(root, "DefaultExperiment", {"startTime": "0", "stopTime": repr(float(t_end)),
                                              "tolerance": repr(float(tolerance)), "stepSize": repr(float(step))})
    scalars = ET.SubElement(root, "ModelVariables")
    for vr, v in enumerate(variables):
        attrs = {"name": v.name, "valueReference": str(vr), "causality": v.causality}
        if v.description:
            attrs["description"] = v.description
        real = {"unit": v.unit} if v.unit else {}
        if v.causality == "output":
            attrs.update(variability="continuous", initial="calculated")
        elif v.causality == "parameter":
            attrs.update(variability="tunable", initial="exact")
            real["start"] = repr(float(v.start))
        else:
            attrs.update(variability="continuous")
            real["start"] = repr(float(v.start))
        ET.SubElement(ET.SubElement(scalars, "ScalarVariable", attrs), "Real", real)
    structure = ET.SubElement(root, "ModelStructure")
    outputs = [str(vr + 1) for vr, v in enumerate(variables) if v.causality == "output"]
    for tag in ("Outputs", "InitialUnknowns"):
        element = ET.SubElement(structure, tag)
        for index in outputs:
            ET.SubElement(element, "Unknown", {"index": index})
    ET.indent(root)
    return ET.tostring(root, encoding="UTF-8", xml_declaration=True)
