"""Line geometry: the line of a path in an object, looked up in the composed YAML node tree only when a finding
needs it (JSON read with the json module is composed on the first look-up, if any)."""

from __future__ import annotations

from kubectl_win.manifests.yamlsafe import compose_all

TYPE_CHECKING = False  # typing is only for type checkers: importing it costs start-up time
if TYPE_CHECKING:
    from typing import Any

    from kubectl_win.manifests.objects import Path

class LineLocator:
    """Finds the line of a path in a composed YAML node tree (the key's line for mapping members)."""

    def __init__(self, node: Any) -> None:
        self._node = node

    def line(self, path: Path) -> int | None:
        node = self._node
        line = node.start_mark.line + 1 if node is not None else None
        for step in path:
            child = None
            if isinstance(step, int):
                if getattr(node, "tag", "").endswith(":seq") and 0 <= step < len(node.value):
                    child = node.value[step]
                    line = child.start_mark.line + 1
            elif getattr(node, "tag", "").endswith(":map"):
                for key_node, value_node in node.value:  # the last duplicate key wins, as in construction
                    if getattr(key_node, "value", None) == step:
                        child = value_node
                        line = key_node.start_mark.line + 1
            if child is None:
                return line  # the deepest part of the path that exists
            node = child
        return line


class LazyLocator(LineLocator):
    """For JSON read with the json module: compose the YAML node tree only if a line is asked for."""

    def __init__(self, text: str, document: int) -> None:
        super().__init__(None)
        self._text: str | None = text
        self._document = document

    def line(self, path: Path) -> int | None:
        if self._text is not None:
            try:
                nodes = list(compose_all(self._text))
                self._node = nodes[self._document] if self._document < len(nodes) else None
            except Exception:  # noqa: BLE001 - JSON that libyaml cannot read just has no line numbers
                self._node = None
            self._text = None
        return super().line(path) if self._node is not None else None
