"""The frozen program's entry point (PyInstaller starts here, not at a console script)."""

from kubectl_win.__main__ import main

main()
