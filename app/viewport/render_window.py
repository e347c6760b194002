"""The one place that decides how VTK renders inside Qt.

With a real display (``xcb``, Wayland, Windows, macOS) the stock :class:`QVTKRenderWindowInteractor`
draws into the widget's native window.  Under ``QT_QPA_PLATFORM=offscreen`` there is no native window
to draw into, so the widget gets an EGL render window that ignores Qt's window id and renders
off-screen (see ``HEADLESS-QT-VTK.md``, option 3): real pixels, readable with
:func:`render_to_array`, no extra system package.
"""
from __future__ import annotations

import numpy as np
import vtkmodules.qt

vtkmodules.qt.PyQtImpl = "PySide6"

from PySide6.QtGui import QGuiApplication  # noqa: E402
from vtkmodules.qt.QVTKRenderWindowInteractor import QVTKRenderWindowInteractor  # noqa: E402
from vtkmodules.util.numpy_support import vtk_to_numpy  # noqa: E402
from vtkmodules.vtkRenderingCore import vtkWindowToImageFilter  # noqa: E402
import vtkmodules.vtkRenderingOpenGL2  # noqa: E402,F401  (registers the OpenGL back end)
import vtkmodules.vtkInteractionStyle  # noqa: E402,F401  (registers the default interactor styles)


def is_offscreen() -> bool:
    """True when Qt runs without a screen (the ``offscreen`` or ``minimal`` platform)."""
    return QGuiApplication.platformName() in ("offscreen", "minimal")


def create_vtk_widget(parent=None) -> QVTKRenderWindowInteractor:
    """A VTK widget that renders real pixels on this platform."""
    if is_offscreen():
        from vtkmodules.vtkRenderingOpenGL2 import vtkEGLRenderWindow

        class _OffscreenEGLWindow(vtkEGLRenderWindow):
            """EGL window that never binds to Qt's (non-existent) native window."""

            def SetWindowInfo(self, info):  # noqa: N802  (VTK API name)
                pass

        rw = _OffscreenEGLWindow()
        rw.SetOffScreenRendering(True)
        return QVTKRenderWindowInteractor(parent, rw=rw)
    return QVTKRenderWindowInteractor(parent)


def render_to_array(render_window) -> np.ndarray:
    """Render and read back the image as an (height, width, 3) uint8 array, top row first."""
    render_window.Render()
    grab = vtkWindowToImageFilter()
    grab.SetInput(render_window)
    grab.SetInputBufferTypeToRGB()
    grab.ReadFrontBufferOff()
    grab.Update()
    image = grab.GetOutput()
    w, h, _ = image.GetDimensions()
    pixels = vtk_to_numpy(image.GetPointData().GetScalars()).reshape(h, w, -1)
    return np.ascontiguousarray(pixels[::-1, :, :3])
