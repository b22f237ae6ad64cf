"""explain: which pod fields Windows rejects, ignores or does not support, as pure functions."""

from kubectl_win.explain.lint import lint_object
from kubectl_win.explain.target import Target, infer_target

__all__ = ["Target", "infer_target", "lint_object"]
