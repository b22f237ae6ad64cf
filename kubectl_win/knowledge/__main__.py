"""python -m kubectl_win.knowledge: rewrite the precompiled knowledge/compiled/*.json after a YAML edit."""

from kubectl_win.knowledge import compile_all

if __name__ == "__main__":
    for name in compile_all():
        print(f"compiled {name}")
