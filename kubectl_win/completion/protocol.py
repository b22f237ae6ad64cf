"""kubectl's plugin completion protocol: `kubectl_complete-win WORD... CURRENT`.

kubectl (>= 1.26) runs this program with the words typed after `win` plus the word under the
cursor ("" for a new word) and reads `value<TAB>description` lines and a final `:<directive>`
from stdout. The same exchange backs `kubectl-win completion __complete ...` and our shell scripts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import IO

from kubectl_win.completion.engine import NameSource, complete
from kubectl_win.completion.model import Completion


def respond(args: Sequence[str], out: IO[str], names: NameSource | None = None) -> Completion:
    """Complete `args` against the real command line and write the protocol's answer to `out`."""
    from kubectl_win.completion.cluster_names import live_names
    from kubectl_win.completion.tree import load

    # The tree exported from the typer application: a TAB imports neither typer nor click.
    result = complete(load(), args, names or live_names)
    out.write("\n".join(result.lines()) + "\n")
    out.flush()
    return result


def main(argv: Sequence[str] | None = None) -> None:
    """Console script `kubectl_complete-win`. Writes nothing to stderr, whatever happens; exits 1 only
    when no answer could be given (kubectl then falls back to file completion)."""
    from kubectl_win.console import setup_streams

    args = list(sys.argv[1:] if argv is None else argv)
    setup_streams()
    silence_stderr()
    try:
        respond(args, sys.stdout)
        code = 0
    except BaseException:  # noqa: BLE001 - kubectl falls back to file completion on a non-zero exit
        code = 1
    # A live lookup may still be waiting on a dead cluster in a daemon thread: don't wait for it.
    try:
        sys.stdout.flush()
    finally:
        os._exit(code)


def silence_stderr() -> None:
    """Process-wide, file descriptor included: only for a process that exists to answer one TAB."""
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.disable(logging.CRITICAL)
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
    except OSError:
        pass
    sys.stderr = open(os.devnull, "w")  # noqa: SIM115 - lives as long as the process


if __name__ == "__main__":
    main()
