"""Reading and writing project files."""
from .project import load_project, save_project, project_to_dict, atomic_write

__all__ = ["load_project", "save_project", "project_to_dict", "atomic_write"]
