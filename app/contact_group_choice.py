"""What the selection plot shows of a contact group (app/plots.py): the total contact force on one
of its members from the others (``Results.contact_force(group)[:, member]``), or the force on it
from one other member it touches during the run (``Results.contact_force(group, pair=…)``, the
force on the later-listed body of the pair: its opposite when the chosen member is listed first).
Two combo boxes pick the member ("on …") and the other ("from all" or one of the members that
touch it, ``Results.contact_pairs``), or a click on a pair's arrow in the viewport (the force the
arrow draws); each group keeps its own choice, first the member that carries the largest force of
the run."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QWidget

ALL = ""          # the partner "from all": the member's total contact force


def member_force(results, group, member, partner=ALL):
    """(N, 3) contact force on ``member`` of contact ``group`` from ``partner`` (ALL: from every other
    member), global axes."""
    if partner == ALL:
        return np.asarray(results.contact_force(group, member=member))
    bodies = list(results.contact_pairs(group).bodies)
    a, b = bodies.index(member), bodies.index(partner)
    if a < b:                                   # the pair's force is on its later body, the partner
        return -np.asarray(results.contact_force(group, pair=(member, partner)))
    return np.asarray(results.contact_force(group, pair=(partner, member)))


def partners(results, group, member) -> list[str]:
    """The members of ``group`` that touch ``member`` at some output point, in the group's order."""
    pairs = results.contact_pairs(group)
    k = pairs.bodies.index(member)
    touching = set(pairs.b[pairs.a == k].tolist()) | set(pairs.a[pairs.b == k].tolist())
    return [pairs.bodies[j] for j in sorted(touching)]


def loudest_member(results, group) -> str:
    """The member of ``group`` on which the largest total contact force of the run acts."""
    F = np.linalg.norm(np.asarray(results.contact_force(group)), axis=2)
    return results.contact_pairs(group).bodies[int(np.argmax(F.max(axis=0, initial=0.0)))]


class ContactGroupChoice(QWidget):
    """The member and partner of the contact group shown (module docstring); ``changed`` when the user
    picks another."""

    changed = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.results, self.group = None, ""
        self.choices: dict[str, tuple[str, str]] = {}     # group → (member, partner)
        self.member, self.partner = QComboBox(self), QComboBox(self)
        self.member.setToolTip("The member of the contact group whose contact force is plotted")
        self.partner.setToolTip("From all other members (its total contact force), or from one that touches it")
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.member)
        layout.addWidget(self.partner)
        self.member.currentIndexChanged.connect(self._on_member)
        self.partner.currentIndexChanged.connect(self._on_partner)
        self.hide()

    def set_results(self, results):
        self.results, self.choices = results, {}

    def show_group(self, group: str):
        """Offer ``group``'s members ("" or None: hide)."""
        self.group = group or ""
        self.setVisible(bool(self.group))
        if self.group:
            self._fill()

    def choice(self, group: str) -> tuple[str, str]:
        """(member, partner) plotted for ``group``."""
        if group not in self.choices:
            self.choices[group] = (loudest_member(self.results, group), ALL)
        return self.choices[group]

    def pick(self, group: str, part: tuple):
        """Plot the force on ``part`` = (member, partner) of ``group`` (a click on the arrow of their
        pair: app/contact_arrows.py); the part of anything else is ignored."""
        if self.results is None or group not in self.results.contact_group_names or len(part) != 2:
            return
        self.choices[group] = tuple(part)
        if self.group == group:
            self._fill()
            self.changed.emit()

    def choose(self, member: str, partner: str = ALL):
        """Plot the current group's ``member`` from ``partner`` (as picking them in the boxes does)."""
        self.member.setCurrentIndex(self.member.findData(member))
        self.partner.setCurrentIndex(self.partner.findData(partner))

    # ---- helpers ------------------------------------------------------------------------------
    def _fill(self):
        member, partner = self.choice(self.group)
        for box in (self.member, self.partner):
            box.blockSignals(True)
            box.clear()
        for name in self.results.contact_pairs(self.group).bodies:
            self.member.addItem(f"on {name}", name)
        self.partner.addItem("from all", ALL)
        for name in partners(self.results, self.group, member):
            self.partner.addItem(f"from {name}", name)
        self.member.setCurrentIndex(self.member.findData(member))
        self.partner.setCurrentIndex(max(self.partner.findData(partner), 0))
        for box in (self.member, self.partner):
            box.blockSignals(False)

    def _on_member(self, _):
        if self.group and self.member.currentData() is not None:
            self.choices[self.group] = (self.member.currentData(), ALL)
            self._fill()
            self.changed.emit()

    def _on_partner(self, _):
        if self.group and self.partner.currentData() is not None:
            self.choices[self.group] = (self.choices[self.group][0], self.partner.currentData())
            self.changed.emit()
