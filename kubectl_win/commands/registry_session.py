"""The registry client for one command run, from the registry_options() flags: built only when a command
reads registries (offline commands and --help never import it), with progress on a terminal."""

from __future__ import annotations

from typing import Any

from kubectl_win.env import Env


class registry_session:  # noqa: N801 - used as a context manager, named like one
    """The registry client for this run (imported only now: offline commands never load it), with progress
    on a terminal."""

    def __init__(self, args: Any, env: Env) -> None:
        self.args, self.env = args, env

    def __enter__(self):  # type: ignore[no-untyped-def]
        from kubectl_win.errors import UsageError
        from kubectl_win.images.service import registry_resolver
        from kubectl_win.registry.client import RegistryClient, RegistryOptions, parse_mirrors
        from kubectl_win.registry.credentials import CredentialError, CredentialStore
        from kubectl_win.registry.transport import WireError

        args = self.args
        if args.concurrency < 1:
            raise UsageError("--concurrency must be 1 or more")
        try:
            mirrors = parse_mirrors(args.registry_mirror or ())
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        for path in args.registry_ca or ():
            import os

            if not os.path.isfile(path):
                raise UsageError(f"--registry-ca {path}: no such file")
        try:
            credentials = CredentialStore.from_environment()
        except CredentialError as exc:
            raise UsageError(str(exc)) from None
        self.credentials = credentials
        options = RegistryOptions(ca_files=tuple(args.registry_ca or ()), insecure=tuple(args.insecure_registry or ()),
                                  mirrors=mirrors, per_registry=args.concurrency, budget=args.registry_timeout)
        try:
            self.client = RegistryClient(options, credentials)
        except WireError as exc:
            raise UsageError(str(exc)) from None
        self.progress = _Progress(self.env) if self.env.stderr_isatty else None
        return registry_resolver(self.client, self.progress), self._finish

    def _finish(self) -> None:
        if self.progress is not None:
            self.progress.done()

    def __exit__(self, *exc: object) -> None:
        self._finish()
        self.client.close()


class _Progress:
    def __init__(self, env: Env) -> None:
        self.env, self.shown = env, False

    def __call__(self, done: int, total: int) -> None:
        self.env.stderr.write(f"\rreading registries: {done}/{total} images")
        self.env.stderr.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.env.stderr.write("\r\033[K")
            self.env.stderr.flush()
            self.shown = False
