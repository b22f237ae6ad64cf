"""`kubectl win scaffold`: Windows workload manifests that schedule right the first time, and a patcher
that adds OS placement to existing manifests.

Flow: options (validated values) -> placement (selector, tolerations) -> templates (plain dicts)
-> render/writer. The patcher reads YAML with ruamel.yaml so comments and key order survive.
"""
