"""The 3D viewport: a VTK scene that mirrors the model (bodies, joints, force elements)."""
from .viewport import Viewport

__all__ = ["Viewport"]
