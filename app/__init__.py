"""MBS Studio desktop application (PySide6 + VTK).

The GUI edits the :class:`solver.Model` through undoable commands (:mod:`app.commands`) and shows it
in views that follow the model's change notifications: the model tree (:mod:`app.tree`), the property
editor (:mod:`app.properties`) and the 3D viewport (:mod:`app.viewport`).  It talks to the solver only
through ``import solver``.
"""
