"""The frozen application's entry point (PyInstaller)."""

import multiprocessing
import sys

if __name__ == "__main__":
    multiprocessing.freeze_support()  # the reader process is started with spawn
    from app.desk.model_download import CHILD_FLAG

    if sys.argv[1:2] == [CHILD_FLAG]:  # a model download's child process (app/desk/model_download.py)
        from app.desk.model_download import child_main

        sys.exit(child_main(sys.argv[2:]))
    from app.cli.main import main

    sys.exit(main())
