"""Reading and writing project files."""
from .files import atomic_write
from .project import load_project, save_project, project_to_dict

__all__ = ["load_project", "save_project", "project_to_dict", "atomic_write"]
