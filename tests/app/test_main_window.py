"""Project files and window behaviour: title and modified mark, the unsaved-changes question,
revert, recent files and samples menus, drag-and-drop, persistence, and ``mbs-studio FILE``."""
import pytest
from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QTimer, QUrl
from PySide6.QtGui import QDragEnterEvent, QDropEvent
from PySide6.QtWidgets import QApplication

from app import app_settings
from app.main_window import MainWindow


def _saved(window, answers, tmp_path, pendulum, name="p.mbs.json"):
    window.document.set_model(pendulum)
    answers.save_path = str(tmp_path / name)
    assert window.save()
    return answers.save_path


@pytest.mark.slow
def test_title_tracks_file_and_modifications(window, answers, tmp_path, pendulum):
    path = _saved(window, answers, tmp_path, pendulum)
    assert window.windowTitle() == "p.mbs.json — MBS Studio"
    window.editing.add_body()
    assert window.windowTitle() == "p.mbs.json* — MBS Studio"
    window.actions["save"].trigger()
    assert window.windowTitle() == "p.mbs.json — MBS Studio"
    assert (tmp_path / "p.mbs.json.bak").exists()
    assert app_settings.recent_files()[0] == path


@pytest.mark.slow
def test_unsaved_changes_are_asked_about(window, answers, tmp_path, pendulum):
    path = _saved(window, answers, tmp_path, pendulum)
    window.editing.add_body()
    answers.save_changes = "cancel"
    window.actions["new"].trigger()
    assert "body1" in window.document.model  # cancelled: nothing changed
    assert not window.close() and window.isVisible()
    answers.save_changes = "save"
    window.actions["new"].trigger()
    assert len(window.document.model.bodies) == 0
    window.load(path)
    assert "body1" in window.document.model  # it was saved before the new project


@pytest.mark.slow
def test_revert(window, answers, tmp_path, pendulum):
    _saved(window, answers, tmp_path, pendulum)
    window.editing.delete("pivot")
    assert "pivot" not in window.document.model
    window.actions["revert"].trigger()
    assert "pivot" in window.document.model and not window.document.modified


@pytest.mark.slow
def test_recent_and_sample_menus(window, answers, tmp_path, pendulum):
    path = _saved(window, answers, tmp_path, pendulum)
    window.actions["new"].trigger()
    recent = window.actions["recent_menu"].menu()
    recent.aboutToShow.emit()
    action = next(a for a in recent.actions() if a.text() == "p.mbs.json")
    action.trigger()
    assert window.document.path == path
    samples = [a for a in window.menuBar().actions() if a.text() == "&File"][0].menu()
    sample_menu = next(a.menu() for a in samples.actions() if a.text() == "Open &Sample")
    sample_menu.aboutToShow.emit()
    assert sample_menu.actions()


@pytest.mark.slow
def test_drop_project_file_opens_it(window, answers, tmp_path, pendulum):
    path = _saved(window, answers, tmp_path, pendulum)
    window.actions["new"].trigger()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(path)])
    enter = QDragEnterEvent(QPoint(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                            Qt.KeyboardModifier.NoModifier)
    window.dragEnterEvent(enter)
    assert enter.isAccepted()
    drop = QDropEvent(QPointF(50, 50), Qt.DropAction.CopyAction, mime, Qt.MouseButton.LeftButton,
                      Qt.KeyboardModifier.NoModifier)
    window.dropEvent(drop)
    assert window.document.path == path and "pivot" in window.document.model


@pytest.mark.slow
def test_layout_persists(qtbot, answers):
    first = MainWindow()
    first.show()
    first.history_dock.show()
    first.resize(1000, 620)          # the width is kept at the window's minimum where the screen is narrower
    qtbot.waitExposed(first)
    size = (first.width(), first.height())
    assert size[1] == 620
    assert first.close()
    second = MainWindow()
    second.show()
    qtbot.waitExposed(second)
    try:
        assert second.history_dock.isVisible()
        assert second.height() == size[1]
        if size[0] <= second.screen().availableGeometry().width():     # a narrower screen clamps the restore
            assert second.width() == size[0]
    finally:
        second.close()
        first.deleteLater()
        second.deleteLater()


@pytest.mark.slow
def test_command_line_opens_file(qtbot, answers, tmp_path, pendulum):
    from app.main import main
    path = tmp_path / "cli.mbs.json"
    pendulum.save(path)
    seen = {}

    def inspect_and_quit():
        window = next(w for w in QApplication.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible())
        seen["title"] = window.windowTitle()
        seen["bodies"] = list(window.document.model.bodies)
        window.close()
        window.deleteLater()
        QApplication.instance().quit()

    QTimer.singleShot(0, inspect_and_quit)
    assert main([str(path)]) == 0
    assert seen == {"title": "cli.mbs.json — MBS Studio", "bodies": ["bob"]}
