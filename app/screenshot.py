"""Screenshots of the main window with the 3D view in them.

``QWidget.grab()`` shows the VTK area black (VTK draws with OpenGL outside Qt's painter), so the
rendered VTK image is painted over the grab at the VTK widget's place.
"""
from __future__ import annotations

from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QImage, QPainter

from .viewport import Viewport


def array_to_image(pixels) -> QImage:
    """QImage (RGB888, deep copy) of an (h, w, 3) uint8 array."""
    h, w, _ = pixels.shape
    return QImage(pixels.tobytes(), w, h, 3 * w, QImage.Format.Format_RGB888).copy()


def grab_window(window, viewport: Viewport) -> QImage:
    """The whole window as an image, 3D view included."""
    image = window.grab().toImage()
    vtk_image = array_to_image(viewport.grab_array())
    widget = viewport.vtk_widget
    top_left = widget.mapTo(window, QPoint(0, 0))
    painter = QPainter(image)
    painter.drawImage(QRect(top_left, widget.size()), vtk_image)
    painter.end()
    return image
