"""Shell completion for kubectl win: one engine that walks the command tree exported from the typer
application (tree.py), one protocol (kubectl's plugin completion, cobra's `value<TAB>description`
lines plus `:<directive>`), and thin per-shell scripts generated from one source.

Static completions (subcommands, flags, enum values) never import `kubernetes`; live names
(namespaces, pods, nodes, contexts) are fetched with a short timeout and fail silently.
"""
