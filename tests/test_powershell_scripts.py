"""Every PowerShell script the tool sends to a node or pod, and the PowerShell completion script, parse with a real
PowerShell grammar; the collect script is pinned by its hash and holds no user text."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from kubectl_win.collect import script as collect_script
from kubectl_win.commands.port_forward import PortForwardFlags
from kubectl_win.commands.port_forward import show_script as port_forward_show
from kubectl_win.completion.scripts import script as completion_script
from kubectl_win.hns import script as hns_script
from kubectl_win.portforward.relays import powershell as relays
from kubectl_win.portforward.relays.powershell_mux import MUX_SCRIPT
from tests.support.paths import ROOT
from tests.support.powershell_grammar import assert_parses, parse_errors


def decoded(argv: list[str] | tuple[str, ...]) -> str:
    """The script an argv carries, as PowerShell will decode -EncodedCommand."""
    argv = list(argv)
    return base64.b64decode(argv[argv.index("-EncodedCommand") + 1]).decode("utf-16-le")


RELAYS = [relays.POWERSHELL, relays.PWSH, relays.PWSH_FULL_PATH]
SENT = {
    "hns": lambda: decoded(hns_script.command()),
    "hns --show-script": hns_script.show,
    "collect loader": lambda: decoded(collect_script.command()),
    "collect script": lambda: collect_script.SCRIPT,
    "collect --show-script": lambda: collect_script.show(collect_script.parameters(20 << 20, 200 << 20, 300)),
    "relay probe": lambda: decoded(relays.POWERSHELL.probe_command()),
    "relay 127.0.0.1:8080": lambda: decoded(relays.POWERSHELL.command("127.0.0.1", 8080)),
    "relay [fe80::1%12]:443": lambda: decoded(relays.PWSH.command("fe80::1%12", 443)),
    "relay web.shop.svc:80": lambda: decoded(relays.PWSH_FULL_PATH.command("web.shop.svc.cluster.local", 80)),
    **{f"mux relay {r.argv_template[0]}": (lambda r=r: decoded(r.mux_argv)) for r in RELAYS},
    "port-forward --show-script": lambda: port_forward_show(PortForwardFlags(relay="powershell", mux="auto")),
    "port-forward --show-script --mux off": lambda: port_forward_show(PortForwardFlags(
        relay="pwsh", mux="off", remote_host="::1", ports=["8080:80", "9443:443/tcp"])),
    "completion powershell": lambda: completion_script("powershell"),
    "completion powershell (Windows)": lambda: completion_script("powershell", windows=True),
    "completions/kubectl-win.ps1": lambda: (ROOT / "completions" / "kubectl-win.ps1").read_text(encoding="utf-8"),
}


@pytest.mark.parametrize("name", list(SENT))
def test_the_script_is_valid_powershell(name: str) -> None:
    assert_parses(SENT[name](), name)


def test_the_mux_relay_sent_is_the_module_script() -> None:
    assert decoded(relays.POWERSHELL.mux_argv) == MUX_SCRIPT


@pytest.mark.parametrize("broken", [
    "function f { if ($x -eq 1) { $y = @{ a = 1 }\n",  # an unclosed block
    "$x = (1 + \n",  # an unclosed expression
    "foreach ($i in 1..3 { $i }\n",  # a missing parenthesis
    "$s = 'unterminated\n",
])
def test_a_syntax_error_is_caught(broken: str) -> None:
    errors = parse_errors(broken)
    assert errors and all(":" in e for e in errors)
    with pytest.raises(AssertionError, match="is not valid PowerShell"):
        assert_parses(broken, "the broken script")


def test_a_syntax_error_in_the_collect_script_would_fail() -> None:
    # The check reads the real script: cutting its last closing brace is caught.
    text = collect_script.SCRIPT
    cut = text[:text.rindex("}")] + text[text.rindex("}") + 1:]
    assert parse_errors(cut)


def test_the_collect_loader_pins_the_script_sent_on_stdin() -> None:
    params = collect_script.parameters(5 << 20, 64 << 20, 120)
    line1, line2, rest = collect_script.stdin(params).split(b"\n")
    assert rest == b"" and json.loads(line1) == params
    script_bytes = base64.b64decode(line2)
    assert script_bytes.decode("utf-8") == collect_script.SCRIPT
    loader = decoded(collect_script.command())
    assert hashlib.sha256(script_bytes).hexdigest().upper() in loader
    assert len(" ".join(collect_script.command())) < 8000  # fits any command line and URL


def test_the_collect_command_holds_no_user_text() -> None:
    # The command line is the same whatever the user asks for; the numbers travel on stdin.
    first = collect_script.command()
    assert collect_script.stdin(collect_script.parameters(1 << 20, 2 << 20, 10)) != \
        collect_script.stdin(collect_script.parameters(3 << 20, 4 << 20, 20))
    assert collect_script.command() == first
    assert "__" not in collect_script.SCRIPT and "__" not in decoded(first)  # every placeholder filled
    for bad in ((0, 1, 1), (1, -1, 1), (1, 1, 0)):
        with pytest.raises(ValueError):
            collect_script.parameters(*bad)


def test_the_collect_script_embeds_the_hns_script_unchanged() -> None:
    assert hns_script.SCRIPT.strip("\n") in collect_script.SCRIPT


def test_port_forward_shows_the_relay_it_would_send_without_a_cluster(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "kubectl_win", "port-forward", "--relay", "powershell", "--mux",
                             "off", "--show-script", "pod/web", "8080:80", "--kubeconfig", str(tmp_path / "none")],
                            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert relays.relay_script("127.0.0.1", 80).rstrip() in result.stdout
    assert relays.PROBE_SCRIPT in result.stdout
    wrong = subprocess.run([sys.executable, "-m", "kubectl_win", "port-forward", "--relay", "bash", "--show-script"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "add --relay powershell or --relay pwsh" in wrong.stderr
