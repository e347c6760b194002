"""The model tree: groups of elements (Bodies, Joints, Force elements, Drivers, Markers) plus the
model itself and its solver settings; a view of the model that follows its notifications.

Joints (and drivers) whose last results have at least one non-unique reaction component (redundant
constraints: ``Results.nonunique_components``, e.g. the out-of-plane components of a planar loop built
with 3D joints) are marked with a warning icon, red text and a tooltip naming the components
(:meth:`ModelTree.set_nonunique`); joints whose components are all unique get no mark.

The tree follows the document's selection (:meth:`ModelTree.show_selection`): a selection cleared
elsewhere (a click on empty viewport) also clears the current item, so clicking that item again
selects it.  Ctrl-click and Shift-click select several items (:meth:`Document.select_many`); group
headings are never part of the selection.

Items carry the element name in ``Qt.UserRole``.  The model and settings items use the names
:data:`MODEL_ITEM` and :data:`SETTINGS_ITEM`, which contain a slash and so can never be element names.
"""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel, Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QStyle, QTreeWidget, QTreeWidgetItem

from .document import Document
from .resources import element_icon, icon

MODEL_ITEM = "/model"
SETTINGS_ITEM = "/settings"

GROUPS = (("points", "Design points"), ("bodies", "Bodies"), ("flexible_bodies", "Flexible bodies"), ("joints", "Joints"),
          ("forces", "Force elements"), ("drivers", "Drivers"), ("couplers", "Couplers"), ("markers", "Markers"),
          ("measures", "Measures"), ("inputs", "Inputs"), ("outputs", "Outputs"))
_OPTIONAL_GROUPS = ("points", "markers", "flexible_bodies", "couplers", "measures", "inputs", "outputs")  # shown only when they have elements
NONUNIQUE_TIP = "redundant constraints: plots show the minimum-norm solution for these components"
_MARKED = ("joints", "drivers")   # collections whose elements carry reactions
_NAME_ROLE = Qt.ItemDataRole.UserRole
_GROUP_ROLE = Qt.ItemDataRole.UserRole + 1


class ModelTree(QTreeWidget):
    """Signals: ``rename_requested(old, new)`` after an in-place edit of an item's name."""

    rename_requested = Signal(str, str)

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        self.setHeaderHidden(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.setEditTriggers(QAbstractItemView.EditTrigger.EditKeyPressed)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.setUniformRowHeights(True)
        self._items: dict[str, QTreeWidgetItem] = {}
        self._nonunique: dict[str, str] = {}    # marked element → its sentence
        self._rebuilding = False
        self.itemSelectionChanged.connect(self._announce)
        self.itemClicked.connect(self._announce)
        self.itemChanged.connect(self._on_item_changed)
        document.model_replaced.connect(self.rebuild)
        document.model_event.connect(self._on_model_event)
        document.selection_changed.connect(self.show_selection)
        document.selected_changed.connect(self.show_selection)
        self.rebuild()

    # ---- public API ---------------------------------------------------------------------------
    def item(self, name: str) -> QTreeWidgetItem | None:
        """The item of element ``name`` (or MODEL_ITEM / SETTINGS_ITEM)."""
        return self._items.get(name)

    def group_item(self, collection: str) -> QTreeWidgetItem | None:
        for i in range(self.topLevelItemCount()):
            it = self.topLevelItem(i)
            if it.data(0, _GROUP_ROLE) == collection:
                return it
        return None

    def selected_group(self) -> str:
        """Collection key of the current item's group ("" when none)."""
        item = self.currentItem()
        while item is not None and item.data(0, _GROUP_ROLE) is None:
            item = item.parent()
        return item.data(0, _GROUP_ROLE) if item is not None else ""

    def rename_current(self):
        """Start editing the current element's name in place (F2)."""
        item = self.currentItem()
        if item is not None and item.flags() & Qt.ItemFlag.ItemIsEditable:
            self.editItem(item, 0)

    def set_nonunique(self, components, messages=None):
        """Mark the joints and drivers of ``components`` ({name: non-unique components}, as
        ``Results.nonunique_components``) with ``messages`` ({name: sentence}) as tooltips, and
        unmark the others."""
        messages = messages or {}
        self._nonunique = {name: messages.get(name, f"reactions of {name} are not unique")
                           for name, comps in components.items() if comps}
        self._rebuilding = True
        try:
            for key in _MARKED:
                for name in getattr(self.document.model, key):
                    if name in self._items:
                        self._mark(name)
        finally:
            self._rebuilding = False

    def is_marked_nonunique(self, name: str) -> bool:
        return name in self._nonunique and name in self._items

    def rebuild(self):
        """Rebuild every item from the model, keeping expansion and the selection."""
        model = self.document.model
        expanded = {self.topLevelItem(i).data(0, _GROUP_ROLE)
                    for i in range(self.topLevelItemCount()) if not self.topLevelItem(i).isExpanded()}
        self._rebuilding = True
        try:
            self.clear()
            self._items = {}
            top = self._add_item(None, MODEL_ITEM, f"Model: {model.name}", icon("model"), editable=False)
            top.setToolTip(0, "model name and gravity")
            for key, label in GROUPS:
                elements = getattr(model, key)
                if key in _OPTIONAL_GROUPS and not elements:
                    continue
                group = QTreeWidgetItem(self, [f"{label} ({len(elements)})"])
                group.setIcon(0, icon("group"))
                group.setData(0, _GROUP_ROLE, key)
                group.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
                for name, element in elements.items():
                    it = self._add_item(group, name, name, element_icon(element), editable=True)
                    it.setToolTip(0, _tooltip(element))
                    if key in _MARKED:
                        self._mark(name)
                group.setExpanded(key not in expanded)
            self._add_item(None, SETTINGS_ITEM, "Solver settings", icon("settings"), editable=False)
        finally:
            self._rebuilding = False
        self.show_selection()

    def selected_names(self) -> list[str]:
        """Names of the selected items, in tree order (group headings left out)."""
        return [n for n in (it.data(0, _NAME_ROLE) for it in self.selectedItems()) if n]

    def show_selection(self, *_):
        """Show the document's selection (its current item current) without re-announcing it."""
        current = self._items.get(self.document.selection)
        self._rebuilding = True
        try:
            self.clearSelection()
            if current is None:        # no current item either, so clicking it again is a change
                self.setCurrentItem(None)
            else:
                self.setCurrentItem(current, 0, QItemSelectionModel.SelectionFlag.NoUpdate)
                self.scrollToItem(current)
            for name in self.document.selected:
                if name in self._items:
                    self._items[name].setSelected(True)
        finally:
            self._rebuilding = False

    # ---- helpers ------------------------------------------------------------------------------
    def _add_item(self, parent, name, text, item_icon, editable):
        it = QTreeWidgetItem([text]) if parent is None else QTreeWidgetItem(parent, [text])
        if parent is None:
            self.addTopLevelItem(it)
        it.setIcon(0, item_icon)
        it.setData(0, _NAME_ROLE, name)
        flags = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
        it.setFlags(flags | Qt.ItemFlag.ItemIsEditable if editable else flags)
        self._items[name] = it
        return it

    def _mark(self, name):
        """Warning icon, red text and a tooltip naming the non-unique components; the normal look otherwise."""
        item, element = self._items[name], self.document.model.element(name)
        flagged = name in self._nonunique
        item.setIcon(0, self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning) if flagged
                     else element_icon(element))
        item.setForeground(0, QBrush(QColor(176, 0, 32)) if flagged else QBrush())
        item.setToolTip(0, f"{_tooltip(element)} — {self._nonunique[name]} ({NONUNIQUE_TIP})" if flagged
                        else _tooltip(element))

    def _announce(self, *_):
        """The tree's selection becomes the document's (a click on an item re-announces it if the
        selection moved elsewhere meanwhile)."""
        if self._rebuilding:
            return
        current = self.currentItem()
        self.document.select_many(self.selected_names(), current.data(0, _NAME_ROLE) or "" if current else "")

    def _on_item_changed(self, item, _column):
        if self._rebuilding:
            return
        old, new = item.data(0, _NAME_ROLE), item.text(0)
        if old and new != old:
            self._rebuilding = True
            item.setText(0, old)  # the model decides; a successful rename rebuilds the tree
            self._rebuilding = False
            # Announce after this signal returns: a successful rename rebuilds (deletes) the items.
            QTimer.singleShot(0, lambda: self.rename_requested.emit(old, new))

    def _on_model_event(self, event, collection, name, detail):
        if event in ("added", "removed", "renamed") or detail in ("type", "name"):
            self.rebuild()
        elif name in self._items and collection in _MARKED:
            self._mark(name)
        elif name in self._items and collection != "settings":
            self._items[name].setToolTip(0, _tooltip(self.document.model.element(name)))


def _tooltip(element) -> str:
    kind = element.KIND.replace("_", " ")
    if element.KIND == "joint":
        return f"{element.type} joint: {element.body_i} → {element.body_j}"
    refs = element.references()
    return f"{kind}" + (f" on {', '.join(refs)}" if refs else "")
