"""Entry point for `python -m kubectl_win` and the `kubectl-win` console script."""

import sys


def main() -> None:
    from kubectl_win.cli import main as cli_main
    from kubectl_win.console import setup_streams

    setup_streams()

    sys.exit(cli_main(sys.argv[1:]))


if __name__ == "__main__":
    main()
