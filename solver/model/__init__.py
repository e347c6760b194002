"""The editable model: elements with declared fields, validation and change notifications."""
from .model import Model, GROUND, model_from_dict, element_from_dict
from .elements import (Body, Marker, Joint, SpringDamper, RotationalSpringDamper, Bushing, AppliedForce,
                       AppliedTorque, Driver, Coupler, Settings, FORCE_CLASSES, FORCE_TYPES)
from .joint_kinds import JOINT_KINDS, JOINT_TYPES, JointKind
from .fields import Field, inertia_matrix
from .design import Point, Link
from .templates import TEMPLATES, Template, build_template

__all__ = ["Model", "GROUND", "model_from_dict", "element_from_dict", "Body", "Marker", "Joint",
           "SpringDamper", "RotationalSpringDamper", "Bushing", "AppliedForce", "AppliedTorque", "Driver", "Coupler",
           "Settings", "JOINT_TYPES", "JOINT_KINDS", "JointKind", "FORCE_CLASSES",
           "FORCE_TYPES", "Field", "inertia_matrix", "Point", "Link", "TEMPLATES", "Template", "build_template"]
