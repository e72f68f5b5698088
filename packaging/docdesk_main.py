"""The frozen application's entry point (PyInstaller)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the reader process is started with spawn
    from app.cli import main

    sys.exit(main())
