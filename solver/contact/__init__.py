"""Compliant contact between bodies' geometry (docs/contact.md): shapes and the closed-form contact
points of shape pairs (geometry.py), the normal and friction laws (laws.py), and the evaluator of a
model's contact elements with its broad phase (element.py)."""
