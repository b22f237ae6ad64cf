"""PowerShell relays (powershell.exe 5.1, pwsh 7) built on raw .NET streams.

The script is passed with -EncodedCommand (UTF-16LE base64), never on stdin, which carries data.
Host and port are validated before they are placed into the script; the host is single-quoted
and can contain only letters, digits, '.', '-', ':' and '%' (an IPv6 zone).
"""

from __future__ import annotations

import base64
import re

from kubectl_win.portforward.relays import Relay
from kubectl_win.portforward.relays.powershell_mux import MUX_SCRIPT

_SAFE_HOST = re.compile(r"^[A-Za-z0-9.:%-]{1,253}$")

SCRIPT_TEMPLATE = """\
$ProgressPreference = 'SilentlyContinue'; $ErrorActionPreference = 'Stop'
try {
  $client = New-Object System.Net.Sockets.TcpClient
  $client.NoDelay = $true
  $client.Connect('__HOST__', __PORT__)
} catch {
  $inner = $_.Exception.InnerException
  if ($inner -is [System.Net.Sockets.SocketException] -and $inner.SocketErrorCode -eq 'ConnectionRefused') {
    [Console]::Error.WriteLine('kwin-relay: connection refused'); [Environment]::Exit(4)
  }
  if ($inner -is [System.Net.Sockets.SocketException] -and $inner.SocketErrorCode -eq 'HostNotFound') {
    [Console]::Error.WriteLine('kwin-relay: cannot resolve host'); [Environment]::Exit(3)
  }
  [Console]::Error.WriteLine("kwin-relay: connect failed: $_"); [Environment]::Exit(5)
}
try {
  $net = $client.GetStream()
  $in = [Console]::OpenStandardInput(); $out = [Console]::OpenStandardOutput()
  $up = $in.CopyToAsync($net, 65536); $down = $net.CopyToAsync($out, 65536)
  if ([Threading.Tasks.Task]::WaitAny(@($up, $down)) -eq 0) {
    $client.Client.Shutdown([System.Net.Sockets.SocketShutdown]::Send); $down.Wait()
  }
  $out.Flush(); [Environment]::Exit(0)
} catch { [Console]::Error.WriteLine("kwin-relay: connection reset: $_"); [Environment]::Exit(6) }
"""

# Prints the language mode; the relay needs FullLanguage (Constrained Language Mode blocks .NET calls).
PROBE_SCRIPT = "[Console]::Out.Write($ExecutionContext.SessionState.LanguageMode)"

_LAUNCH = ("-NoLogo", "-NoProfile", "-NonInteractive", "-InputFormat", "None", "-EncodedCommand")


def encode(script: str) -> str:
    return base64.b64encode(script.encode("utf-16-le")).decode("ascii")


def relay_script(host: str, port: int) -> str:
    if not _SAFE_HOST.match(host) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError("host and port must be validated before building a PowerShell relay")
    return SCRIPT_TEMPLATE.replace("__HOST__", host).replace("__PORT__", str(port))


class PowerShellRelay(Relay):
    """A relay whose argv carries the encoded script (built per host and port)."""

    def command(self, host: str, port: int) -> list[str]:
        return [self.argv_template[0], *_LAUNCH, encode(relay_script(host, port))]

    def probe_command(self) -> list[str]:
        return [self.argv_template[0], *_LAUNCH, encode(PROBE_SCRIPT)]


def mux_argv(executable: str) -> tuple[str, ...]:
    """The multiplexing relay's command line: fixed, the same for every target."""
    return (executable, *_LAUNCH, encode(MUX_SCRIPT))


POWERSHELL = PowerShellRelay("powershell", ("powershell.exe",), own_exit_codes=True,
                             mux_argv=mux_argv("powershell.exe"))
PWSH = PowerShellRelay("pwsh", ("pwsh.exe",), own_exit_codes=True, mux_argv=mux_argv("pwsh.exe"))
PWSH_FULL_PATH = PowerShellRelay("pwsh", ("C:\\Program Files\\PowerShell\\7\\pwsh.exe",), own_exit_codes=True,
                                 mux_argv=mux_argv("C:\\Program Files\\PowerShell\\7\\pwsh.exe"))
