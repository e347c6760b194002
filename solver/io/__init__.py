"""Reading and writing files: project files, results checks, URDF import, safe file access."""
from .files import atomic_write
from .project import load_project, save_project

__all__ = ["load_project", "save_project", "atomic_write"]
