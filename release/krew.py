"""Write the krew manifest from its template, and check it the way krew and its index do.

The rules mirror krew's own validation (internal/index/validation/validate.go and
cmd/validate-krew-manifest): apiVersion and kind, a name that matches the file, a semver
version with a leading v, lowercase sha256, selectors on os/arch only that each match a
supported pair and never overlap, a bin (an .exe on Windows), and LICENSE in every archive.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from release.platforms import KREW_PLATFORMS, archive_name, bin_path

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
TEMPLATE = Path(__file__).with_name("krew-manifest.template.yaml")
DEFAULT_NAME = "win"
DEFAULT_HOMEPAGE = "https://github.com/kubectl-win/kubectl-win"

_NAME = re.compile(r"^[\w-]+$", re.ASCII)  # Go's \w: ASCII only
_SHA256 = re.compile(r"^[a-f0-9]{64}$")
# k8s.io/apimachinery ParseSemantic: MAJOR.MINOR.PATCH, optional -prerelease and +build.
_SEMVER = re.compile(
    r"^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$"
)
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}


def render(version: str, sha256s: dict[tuple[str, str], str], name: str = DEFAULT_NAME,
           homepage: str = DEFAULT_HOMEPAGE, base_url: str | None = None) -> str:
    """The manifest text for the platforms in `sha256s` ((os, arch) -> sha256 of the archive)."""
    import yaml

    tag = version if version.startswith("v") else f"v{version}"
    base_url = (base_url or f"{homepage}/releases/download/{tag}").rstrip("/")
    text = TEMPLATE.read_text(encoding="utf-8")
    for placeholder, value in (("@NAME@", name), ("@VERSION@", tag), ("@HOMEPAGE@", homepage),
                               ("@BASE_URL@", base_url)):
        text = text.replace(placeholder, value)
    manifest = yaml.safe_load(text)
    platforms = []
    for entry in manifest["spec"]["platforms"]:
        labels = entry["selector"]["matchLabels"]
        key = (labels["os"], labels["arch"])
        if key in sha256s:
            entry["sha256"] = sha256s[key]
            entry["uri"] = f"{base_url}/{archive_name(tag, *key)}"
            entry["bin"] = bin_path(key[0])
            platforms.append(entry)
    manifest["spec"]["platforms"] = platforms
    return _dump(manifest)


def load(path: Path) -> dict[str, Any]:
    import yaml

    return yaml.safe_load(path.read_text(encoding="utf-8"))


def validate(manifest: Any, file_name: str | None = None) -> list[str]:
    """Every rule krew and the krew-index CI apply that can be checked without downloading."""
    if not isinstance(manifest, dict):
        return ["manifest is not a mapping"]
    errors: list[str] = []
    if manifest.get("apiVersion") != API_VERSION:
        errors.append(f"apiVersion must be {API_VERSION}")
    if manifest.get("kind") != "Plugin":
        errors.append("kind must be Plugin")
    name = str((manifest.get("metadata") or {}).get("name") or "")
    if not _NAME.match(name):
        errors.append(f"invalid plugin name {name!r}")
    elif name.lower() in _RESERVED:
        errors.append(f"plugin name {name!r} is a reserved Windows device name")
    if file_name is not None:
        if not file_name.endswith(".yaml"):
            errors.append(f"manifest file {file_name!r} must end in .yaml")
        elif file_name[: -len(".yaml")] != name:
            errors.append(f"plugin name {name!r} must match the file name {file_name!r}")
    spec = manifest.get("spec") or {}
    short = spec.get("shortDescription")
    if not short or "\n" in short or "\r" in short:
        errors.append("shortDescription must be one non-empty line")
    version = str(spec.get("version") or "")
    if not _SEMVER.match(version):
        errors.append(f"version {version!r} must be semver with a leading v, e.g. v0.1.0")
    platforms = spec.get("platforms") or []
    if not platforms:
        errors.append("at least one platform is required")
    claimed: dict[tuple[str, str], int] = {}
    for index, platform_entry in enumerate(platforms):
        errors.extend(f"platforms[{index}]: {problem}" for problem in _platform_problems(platform_entry))
        for pair in matched_pairs(platform_entry.get("selector")):
            if pair in claimed:
                errors.append(f"platforms[{index}] and platforms[{claimed[pair]}] both match {pair[0]}/{pair[1]}")
            claimed.setdefault(pair, index)
    return errors


def matched_pairs(selector: Any) -> list[tuple[str, str]]:
    """The supported os/arch pairs a label selector matches (matchLabels and matchExpressions)."""
    if not isinstance(selector, dict):
        return []
    return [pair for pair in KREW_PLATFORMS if _matches(selector, {"os": pair[0], "arch": pair[1]})]


def select(manifest: dict[str, Any], os_name: str, arch: str) -> dict[str, Any] | None:
    """The platform entry krew would install on os/arch."""
    for entry in manifest["spec"]["platforms"]:
        if (os_name, arch) in matched_pairs(entry.get("selector")):
            return entry
    return None


def _platform_problems(entry: Any) -> list[str]:
    if not isinstance(entry, dict):
        return ["not a mapping"]
    problems = []
    if not entry.get("uri"):
        problems.append("uri is required")
    if not _SHA256.match(str(entry.get("sha256") or "")):
        problems.append("sha256 must be 64 lowercase hex digits")
    bin_name = str(entry.get("bin") or "")
    if not bin_name:
        problems.append("bin is required")
    if "files" in entry:
        files = entry["files"]
        if not files or any(not (isinstance(f, dict) and f.get("from") and f.get("to")) for f in files):
            problems.append("files must be non-empty and each entry needs from and to")
    selector = entry.get("selector")
    if not isinstance(selector, dict) or not selector:
        problems.append("selector is required")
        return problems
    for key in ("matchLabels", "matchExpressions"):
        if key in selector and not selector[key]:
            problems.append(f"selector.{key} must not be empty")
    keys = set((selector.get("matchLabels") or {}).keys())
    keys |= {expression.get("key") for expression in selector.get("matchExpressions") or []}
    if keys - {"os", "arch"}:
        problems.append(f"selector may only use os and arch, not {sorted(keys - {'os', 'arch'})}")
    pairs = matched_pairs(selector)
    if not pairs:
        problems.append("selector matches none of krew's supported os/arch pairs")
    if any(os_name == "windows" for os_name, _ in pairs) and not bin_name.lower().endswith(".exe"):
        problems.append("bin must be an .exe on windows")
    return problems


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key"), expression.get("operator")
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and not (present and labels[key] in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def _dump(manifest: dict[str, Any]) -> str:
    import yaml

    class _Dumper(yaml.SafeDumper):
        pass

    def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    _Dumper.add_representer(str, _str)
    return yaml.dump(manifest, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=100)
