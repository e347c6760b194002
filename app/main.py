"""``mbs-studio [FILE]``: start the application, optionally opening a project file."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="mbs-studio", description="MBS Studio multibody modeler")
    parser.add_argument("file", nargs="?", help="project file (.mbs.json) to open")
    args, qt_args = parser.parse_known_args(sys.argv[1:] if argv is None else argv)

    from PySide6.QtWidgets import QApplication

    from .app_settings import APPLICATION, ORGANIZATION
    from .main_window import MainWindow
    from .resources import icon, style_sheet

    app = QApplication.instance() or QApplication([sys.argv[0], *qt_args])
    app.setOrganizationName(ORGANIZATION)
    app.setApplicationName(APPLICATION)
    app.setApplicationDisplayName("MBS Studio")
    app.setWindowIcon(icon("model"))
    app.setStyleSheet(style_sheet())
    window = MainWindow()
    window.show()
    if args.file:
        window.load(args.file)
    return app.exec()


if __name__ == "__main__":
    sys.exit(main())
