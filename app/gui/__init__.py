"""The DocDesk window (PySide6). Imported only when the window opens: the CLI never loads Qt."""
