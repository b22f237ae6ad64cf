"""Fix commands quoted for POSIX sh, PowerShell and cmd.exe, each checked by parsing the text back as that
shell would: sh with shlex, PowerShell with a real PowerShell grammar (tree-sitter-powershell), cmd with
its documented rules (cmd's caret and quote handling, then CommandLineToArgvW)."""

from __future__ import annotations

import json
import shlex

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kubectl_win.findings import Fix
from kubectl_win.shells import quote_command, quote_free_patch, resolve_shell
from tests.support.cli import run_cli
from tests.support.paths import SAMPLE_DUMP

PATCH = '{"spec":{"template":{"spec":{"nodeSelector":{"kubernetes.io/os":"linux"}}}}}'
JSON_PATCH = ('[{"op":"add","path":"/spec/template/spec/tolerations/-","value":{"key":"os","operator":"Equal",'
              '"value":"Win1809","effect":"NoSchedule"}}]')
COMMANDS = [
    ("kubectl", "patch", "daemonset", "node-exporter", "-n", "monitoring", "--type", "merge", "-p", PATCH),
    ("kubectl", "patch", "cronjob", "nightly", "-n", "shop", "--type", "json", "-p", JSON_PATCH),
    ("kubectl", "set", "resources", "deployment/web", "-n", "shop", "-c", "web", "--limits=memory=512Mi"),
    ("kubectl", "get", "pod", "p", "-o", "jsonpath={.metadata.ownerReferences[0].name}"),
    ("kubectl", "taint", "nodes", "win-0", "os=Win1809:NoSchedule"),
    ("kubectl", "label", "node", "it's & $(evil) `x` %PATH% ^ \"q\" ; | <a>", "x=y"),
    ("kubectl", "get", "pods", "-A", "--field-selector", "spec.nodeName=win 0"),
]


def powershell_arguments(text: str) -> list[str]:
    """The arguments PowerShell passes for `text`, one literal string each; fails on anything PowerShell
    would evaluate (variables, subexpressions, arrays) or on a syntax error."""
    import tree_sitter
    import tree_sitter_powershell

    source = text.encode()
    tree = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language())).parse(source)
    assert not tree.root_node.has_error, text

    def first(node, kind):  # type: ignore[no-untyped-def]
        if node.type == kind:
            return node
        for child in node.children:
            found = first(child, kind)
            if found is not None:
                return found
        return None

    def literal(node) -> str:  # type: ignore[no-untyped-def]
        raw = source[node.start_byte:node.end_byte].decode()
        if node.type in ("generic_token", "command_parameter", "command_name"):
            assert not any(c in raw for c in "$`@(){};,|&<>'\"#"), raw
            return raw
        assert node.type == "array_literal_expression" and node.named_child_count == 1, (node.type, raw)
        string = first(node, "string_literal")
        assert string is not None and source[string.start_byte:string.end_byte].decode() == raw, raw
        assert raw.startswith("'") and raw.endswith("'"), raw  # verbatim: nothing inside is evaluated
        return raw[1:-1].replace("''", "'")

    commands = []

    def collect(node) -> None:  # type: ignore[no-untyped-def]
        if node.type == "command":
            commands.append(node)
        for child in node.children:
            collect(child)

    collect(tree.root_node)
    assert len(commands) == 1, text  # one command: nothing chained or piped
    command = commands[0]
    words = [literal(command.child_by_field_name("command_name"))]
    for elements in (c for c in command.children if c.type == "command_elements"):
        words += [literal(c) for c in elements.children if c.type != "command_argument_sep"]
    return words


def cmd_arguments(text: str) -> list[str]:
    """What a program started from cmd.exe receives: cmd's pass (^ escapes and " toggles its quoting; an
    unescaped & | < > outside quotes would end the command; % expands variables), then CommandLineToArgvW."""
    line, inside, index = [], False, 0
    while index < len(text):
        char = text[index]
        if char == '"':
            inside = not inside
        elif not inside and char == "^":
            index += 1
            char = text[index]  # escaped: taken literally (a %^ would never start a variable)
        else:
            assert char != "%", f"cmd would expand variables in {text}"
            assert inside or char not in "&|<>()", f"cmd would act on {char!r} in {text}"
        line.append(char)
        index += 1
    return _command_line_to_argv("".join(line))


def _command_line_to_argv(line: str) -> list[str]:
    """CommandLineToArgvW's rules (the C runtime since 2008): 2n backslashes + quote -> n and a quote toggle;
    2n+1 backslashes + quote -> n and a literal quote; "" inside quotes -> a literal quote."""
    args: list[str] = []
    word: list[str] = []
    have, inside, index = False, False, 0
    while index < len(line):
        char = line[index]
        if char in " \t" and not inside:
            if have:
                args.append("".join(word))
                word, have = [], False
            index += 1
            continue
        have = True
        if char == "\\":
            count = 0
            while index < len(line) and line[index] == "\\":
                count += 1
                index += 1
            if index < len(line) and line[index] == '"':
                word.append("\\" * (count // 2))
                if count % 2:
                    word.append('"')
                    index += 1
            else:
                word.append("\\" * count)
            continue
        if char == '"':
            if inside and index + 1 < len(line) and line[index + 1] == '"':
                word.append('"')
                index += 2
                continue
            inside = not inside
            index += 1
            continue
        word.append(char)
        index += 1
    if have:
        args.append("".join(word))
    return args


def _same(argv: tuple[str, ...], parsed: list[str]) -> None:
    """Parsed back, every argument is the original, but a patch may come back as the equal YAML document."""
    assert len(parsed) == len(argv), (argv, parsed)
    for original, back in zip(argv, parsed, strict=True):
        if original != back:
            assert original.startswith(("{", "[")) and yaml.safe_load(back) == json.loads(original), (original, back)
            assert '"' not in back


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: a[1] + "-" + a[-1][:12])
def test_each_dialect_parses_back_to_the_same_arguments(argv: tuple[str, ...]) -> None:
    assert shlex.split(quote_command(argv, "posix")) == list(argv)
    _same(argv, powershell_arguments(quote_command(argv, "powershell")))
    _same(argv, cmd_arguments(quote_command(argv, "cmd")))


def test_powershell_and_cmd_patches_carry_no_double_quote() -> None:
    # Windows PowerShell 5.1 drops embedded double quotes when it starts a native program; cmd toggles its
    # quoting on every one. The patch goes as the YAML document kubectl reads just the same.
    for shell in ("powershell", "cmd"):
        text = quote_command(COMMANDS[0], shell)
        assert text.endswith("{spec: {template: {spec: {nodeSelector: {kubernetes.io/os: linux}}}}}" +
                             ("'" if shell == "powershell" else '"'))
        assert text.count('"') == (0 if shell == "powershell" else 2)
    assert quote_command(COMMANDS[0], "posix").endswith("'" + PATCH + "'")  # sh keeps the JSON as written


def test_values_yaml_would_read_as_something_else_stay_strings() -> None:
    doc = {"a": "yes", "b": "1.10", "c": "", "d": "x: y", "e": "-", "f": "it's", "g": "null", "h": 3, "i": True,
           "j": "#x", "k": "a, b", "l": "NoSchedule"}
    assert yaml.safe_load(quote_free_patch(json.dumps(doc))) == doc


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12),
                min_size=1, max_size=4))
def test_any_argument_survives_posix_and_powershell(words: list[str]) -> None:
    argv = ("kubectl", *words)
    assert shlex.split(quote_command(argv, "posix")) == list(argv)
    parsed = powershell_arguments(quote_command(argv, "powershell"))
    _same(argv, parsed)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12),
                min_size=1, max_size=4))
@example(["\\%", "0"])  # a backslash before the quote that steps out to escape % (found by this test)
@example(["a\\\\%b%"])
def test_any_argument_survives_cmd(words: list[str]) -> None:
    argv = ("kubectl", *words)
    _same(argv, cmd_arguments(quote_command(argv, "cmd")))


def test_the_shell_is_posix_off_windows_unless_asked() -> None:
    assert resolve_shell(None) == "posix"
    assert resolve_shell("cmd") == "cmd"


def test_doctor_prints_fixes_for_the_chosen_shell() -> None:
    for shell in ("posix", "powershell", "cmd"):
        result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--shell", shell, "-o", "json")
        fixes = [Fix(commands=tuple(tuple(a) for a in f["fix"]["argv"])) for f in result.json["findings"]
                 if f["fix"] and f["fix"]["argv"]]
        texts = [c for f in result.json["findings"] if f["fix"] for c in f["fix"]["commands"]]
        assert texts and len(texts) == sum(len(f.commands) for f in fixes)
        parse = {"posix": shlex.split, "powershell": powershell_arguments, "cmd": cmd_arguments}[shell]
        for fix, text in zip((c for f in fixes for c in f.commands), texts, strict=True):
            _same(fix, parse(text))
    table = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--shell", "powershell").stdout
    assert "-p '{spec: {template: {spec: {nodeSelector: {kubernetes.io/os: linux}}}}}'" in table


def test_an_unknown_shell_is_a_usage_error() -> None:
    result = run_cli("doctor", "--from-dump", str(SAMPLE_DUMP), "--shell", "tcsh")
    assert result.exit_code == 2 and "invalid choice: 'tcsh'" in result.stderr
