"""Analyses on compiled systems: assembly, dynamics, static equilibrium, linearization."""
from .frequency import dominant_frequency

__all__ = ["dominant_frequency"]
