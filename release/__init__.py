"""Release tooling: Python dists, frozen krew archives, the krew manifest (not shipped in the wheel)."""
