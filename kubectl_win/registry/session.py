"""The registry client for one command run: built only when a command reads registries (offline commands and
--help never import it), its progress shown on a terminal, closed when the run ends.

The options arrive checked (the command's validate step refuses bad registry flags before anything is read);
what can still fail here is the credentials file and the CA bundles' contents.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

from kubectl_win.errors import UsageError

if TYPE_CHECKING:
    from kubectl_win.images.service import Resolver
    from kubectl_win.registry.client import RegistryClient, RegistryOptions
    from kubectl_win.registry.credentials import CredentialStore


@dataclass(slots=True)
class Session:
    client: RegistryClient
    credentials: CredentialStore
    resolver: Resolver
    progress: _Progress | None

    def tags(self, repository: str) -> tuple[list[str], str | None]:
        """The tags of a repository ('mcr.microsoft.com/windows/nanoserver', through its mirrors), or the reason
        they could not be read."""
        from kubectl_win.registry.client import Failure
        from kubectl_win.registry.reference import parse_reference

        try:
            return self.client.list_tags(parse_reference(repository)), None
        except (Failure, ValueError) as exc:
            return [], str(exc)

    def finish(self) -> None:
        """The reads are done: clear the progress line before the report is printed."""
        if self.progress is not None:
            self.progress.done()


@contextmanager
def registry_session(options: RegistryOptions, progress: TextIO | None = None) -> Iterator[Session]:
    """A session for this run; `progress`: where to count images read (a terminal's stderr), or None."""
    from kubectl_win.images.service import registry_resolver
    from kubectl_win.registry.client import RegistryClient
    from kubectl_win.registry.credentials import CredentialError, CredentialStore
    from kubectl_win.registry.transport import WireError

    try:
        credentials = CredentialStore.from_environment()
    except CredentialError as exc:
        raise UsageError(str(exc)) from None
    try:
        client = RegistryClient(options, credentials)
    except WireError as exc:
        raise UsageError(str(exc)) from None
    shown = _Progress(progress) if progress is not None else None
    session = Session(client, credentials, registry_resolver(client, shown), shown)
    try:
        yield session
    finally:
        session.finish()
        client.close()


class _Progress:
    def __init__(self, stream: TextIO) -> None:
        self.stream, self.shown = stream, False

    def __call__(self, done: int, total: int) -> None:
        self.stream.write(f"\rreading registries: {done}/{total} images")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self.shown = False
