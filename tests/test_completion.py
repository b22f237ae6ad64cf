"""The completion engine against the real command line: what a TAB offers after each word."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap

import pytest

from kubectl_win.cli import click_app
from kubectl_win.completion import hints
from kubectl_win.completion.cluster_names import kubeconfig_names
from kubectl_win.completion.engine import complete
from kubectl_win.completion.model import Directive
from kubectl_win.completion.protocol import respond
from kubectl_win.completion.tree import load
from tests.support.completion import directive, values
from tests.support.paths import ROOT

NAMESPACES = [("default", ""), ("kube-system", ""), ("win-apps", "")]


class FakeNames:
    """Stands in for the cluster: records what it was asked."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, str]]] = []

    def __call__(self, hint: hints.LiveNames, typed: dict[str, str]) -> list[tuple[str, str]]:
        self.calls.append((hint.resource, dict(typed)))
        return {"namespaces": NAMESPACES, "pods": [("web-0", "Running on win-1")],
                "nodes": [("win-1", "windows")]}.get(hint.resource, [])


@pytest.fixture(scope="module")
def parser() -> dict:
    """The command tree completion walks (exported from the typer application)."""
    return load()


def ask(parser: dict, *words: str, names: FakeNames | None = None) -> tuple[list[str], int]:
    result = complete(parser, list(words), names or FakeNames())
    return [c.value for c in result.candidates], int(result.directive)


def test_first_word_offers_every_registered_command_with_its_help(parser):
    result = complete(parser, [""])
    offered = {c.value: c.description for c in result.candidates}
    assert set(offered) == set(click_app().commands) >= {"explain", "doctor", "completion", "version", "scaffold"}
    assert all(offered.values()), "every command should carry its one-line help"
    assert result.directive == Directive.NO_FILE


def test_prefix_narrows_the_commands(parser):
    assert ask(parser, "ver") == (["version"], Directive.NO_FILE)
    assert ask(parser, "nothing-like-this") == ([], Directive.NO_FILE)


def test_the_hidden_protocol_word_is_never_offered(parser):
    offered, _ = ask(parser, "completion", "")
    assert offered == ["bash", "zsh", "fish", "powershell", "kubectl"]
    assert "__complete" not in ask(parser, "completion", "_")[0]


def test_flags_of_the_chosen_command_are_offered_after_a_dash(parser):
    offered, code = ask(parser, "explain", "--")
    assert {"--output", "--fail-on", "--namespace", "--context", "--kubeconfig", "--help"} <= set(offered)
    assert code == Directive.NO_FILE
    assert ask(parser, "explain", "--fail")[0] == ["--fail-on"]


def test_a_flag_already_given_is_not_offered_again(parser):
    offered, _ = ask(parser, "explain", "--fail-on", "error", "--")
    assert "--fail-on" not in offered and "--output" in offered


def test_every_enum_flag_of_every_command_completes_to_its_choices(parser):
    """Reads the choices back from the tree, so commands added later are covered too."""
    checked = 0
    for name, sub in parser["commands"].items():
        for option in sub["options"]:
            if option["choices"]:
                flag = option["names"][-1]
                assert ask(parser, name, flag, "") == (option["choices"], Directive.NO_FILE), f"{name} {flag}"
                checked += 1
    assert checked >= 3  # at least explain -o, explain --fail-on, version -o


def test_output_and_fail_on_values_filter_by_prefix(parser):
    assert ask(parser, "explain", "-o", "j")[0] == ["json"]
    assert ask(parser, "explain", "--fail-on", "w")[0] == ["warning"]
    assert ask(parser, "version", "-o", "")[0] == ["text", "json", "yaml"]


def test_flag_equals_value_form_keeps_the_flag_in_the_candidate(parser):
    assert ask(parser, "explain", "--output=ya") == (["--output=yaml"], Directive.NO_FILE)


def test_windows_build_offers_the_supported_builds(parser):
    offered, code = ask(parser, "scaffold", "deployment", "web", "--windows-build", "")
    assert {"ltsc2019", "ltsc2022", "10.0.20348"} <= set(offered) and code == Directive.NO_FILE
    assert ask(parser, "scaffold", "deployment", "web", "--windows-build", "ltsc202")[0] == ["ltsc2022", "ltsc2025"]


def test_manifest_files_are_left_to_the_shell_filtered_by_extension(parser):
    assert ask(parser, "explain", "-f", "") == (["yaml", "yml", "json"], Directive.FILTER_FILE_EXT)


def test_kubeconfig_path_falls_back_to_file_completion(parser):
    assert ask(parser, "explain", "--kubeconfig", "") == ([], Directive.DEFAULT)


def test_free_text_values_offer_nothing_and_no_files(parser):
    assert ask(parser, "explain", "-l", "") == ([], Directive.NO_FILE)


def test_namespace_names_come_from_the_name_source_with_the_flags_typed_so_far(parser):
    names = FakeNames()
    offered, code = ask(parser, "explain", "--context", "prod", "--kubeconfig", "/k", "-n", "kube", names=names)
    assert (offered, code) == (["kube-system"], Directive.NO_FILE)
    resource, typed = names.calls[-1]
    assert resource == "namespaces"
    assert typed["context"] == "prod" and typed["kubeconfig"] == "/k"


def test_short_flag_with_attached_value(parser):
    assert ask(parser, "explain", "-nwin")[0] == ["-nwin-apps"]


def test_no_names_source_means_no_candidates_not_an_error(parser):
    assert complete(parser, ["explain", "-n", ""]).candidates == []


def test_port_forward_target_offers_kinds_then_names_of_that_kind(parser):
    offered, code = ask(parser, "port-forward", "")
    assert offered == ["pod/", "deploy/", "sts/", "rs/", "svc/"]
    assert code == Directive.NO_FILE | Directive.NO_SPACE  # the name follows the slash directly
    names = FakeNames()
    assert ask(parser, "port-forward", "-n", "win-apps", "pod/w", names=names)[0] == ["pod/web-0"]
    assert names.calls[-1] == ("pods", {"namespace": "win-apps"})


def test_nested_subcommands_are_walked(parser):
    offered, _ = ask(parser, "scaffold", "")
    assert {"deployment", "daemonset", "runtimeclass"} <= set(offered)
    assert "--image" in ask(parser, "scaffold", "deployment", "web", "--im")[0]


def test_protocol_output_is_value_tab_description_lines_then_the_directive():
    out = io.StringIO()
    respond(["ex"], out, names=FakeNames())
    assert out.getvalue().splitlines()[0].startswith("explain\t")
    assert out.getvalue().splitlines()[-1] == ":4"
    assert values(out.getvalue()) == ["explain"] and directive(out.getvalue()) == 4


def test_contexts_come_from_every_kubeconfig_file_first_definition_wins(tmp_path, monkeypatch):
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(textwrap.dedent("""\
        contexts:
        - name: prod
          context: {cluster: prod-eu, namespace: shop}
        - name: dev
          context: {cluster: dev}
        """))
    second.write_text("contexts:\n- name: prod\n  context: {cluster: other}\n- name: lab\n  context: {}\n")
    monkeypatch.setenv("KUBECONFIG", f"{first}:{tmp_path / 'missing.yaml'}:{second}")
    assert kubeconfig_names("contexts") == [("prod", "cluster prod-eu, namespace shop"), ("dev", "cluster dev"),
                                            ("lab", "")]
    assert kubeconfig_names("contexts", str(second)) == [("prod", "cluster other"), ("lab", "")]


def test_context_flag_completes_from_the_kubeconfig_given_on_the_line(tmp_path):
    config = tmp_path / "config"
    config.write_text("contexts:\n- name: win-lab\n  context: {cluster: lab}\n")
    out = io.StringIO()
    respond(["doctor", "--kubeconfig", str(config), "--context", ""], out)
    assert values(out.getvalue()) == ["win-lab"]


def test_static_completion_imports_neither_kubernetes_nor_typer():
    code = textwrap.dedent("""\
        import io, sys
        from kubectl_win.completion.protocol import respond
        for words in (["ex"], ["explain", "-o", ""], ["explain", "--"], ["completion", ""], ["version", "-o", ""]):
            respond(words, io.StringIO())
        heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("kubernetes", "aiohttp", "ruamel", "websocket",
                                                                     "typer", "click", "tabulate"))
        print(heavy)
        """)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert result.stdout.strip() == "[]"


def test_explain_offers_the_field_paths_it_knows_as_its_first_argument(parser):
    offered, code = ask(parser, "explain", "spec.securityContext.runAs")
    assert {"spec.securityContext.runAsUser", "spec.securityContext.runAsNonRoot"} <= set(offered)
    assert code == Directive.NO_FILE
    everything, _ = ask(parser, "explain", "")
    assert "spec.containers.securityContext.windowsOptions.hostProcess" in everything
    assert not [path for path in everything if set(path) & set("[]'*")], "shells would need quoting"
    assert ask(parser, "explain", "pod", "")[0] == []


def test_every_offered_field_path_is_one_explain_accepts(parser):
    from tests.support.cli import run_cli

    for path in ask(parser, "explain", "spec.host")[0]:
        result = run_cli("explain", path)
        assert result.exit_code == 0 and path in result.stdout, path
