"""The editable model: elements with declared fields, validation and change notifications."""
from .model import Model, GROUND, model_from_dict, element_from_dict
from .elements import (Body, Marker, Joint, SpringDamper, RotationalSpringDamper, Bushing, AppliedForce,
                       AppliedTorque, Driver, Settings, JOINT_TYPES, JOINT_TYPE_FIELDS, JOINT_COORDINATES,
                       FORCE_CLASSES, FORCE_TYPES)
from .fields import Field, inertia_matrix

__all__ = ["Model", "GROUND", "model_from_dict", "element_from_dict", "Body", "Marker", "Joint",
           "SpringDamper", "RotationalSpringDamper", "Bushing", "AppliedForce", "AppliedTorque", "Driver",
           "Settings", "JOINT_TYPES", "JOINT_TYPE_FIELDS", "JOINT_COORDINATES", "FORCE_CLASSES",
           "FORCE_TYPES", "Field", "inertia_matrix"]
