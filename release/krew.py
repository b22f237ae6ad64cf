"""Write the krew manifest from its template, and check it the way krew and its index do.

One template, one renderer: each release's manifest (release/build.py, for the archives built) and the
repository's own krew-manifest.yaml, which lists every platform the release builds with the archive
checksums recorded in release/checksums.txt (a placeholder where none is recorded yet):

    python -m release.krew --root                   # rewrite krew-manifest.yaml
    python -m release.krew --root --check           # exit 1 when it is stale
    python -m release.krew --root --checksums DIR   # record a release's .sha256 files first

The rules mirror krew's own validation (internal/index/validation/validate.go and
cmd/validate-krew-manifest): apiVersion and kind, a name that matches the file, a semver
version with a leading v, lowercase sha256, selectors on os/arch only that each match a
supported pair and never overlap, a bin (an .exe on Windows), and LICENSE in every archive.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # `python release/krew.py` as well as `python -m release.krew`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from release.platforms import KREW_PLATFORMS, archive_name, bin_path  # noqa: E402

API_VERSION = "krew.googlecontainertools.github.com/v1alpha2"
TEMPLATE = Path(__file__).with_name("krew-manifest.template.yaml")
CHECKSUMS = Path(__file__).with_name("checksums.txt")
ROOT_MANIFEST = Path(__file__).resolve().parent.parent / "krew-manifest.yaml"
DEFAULT_NAME = "win"
DEFAULT_HOMEPAGE = "https://github.com/kubectl-win/kubectl-win"
# Where a release's checksum is not recorded yet: krew's rules take it (64 lowercase hex digits), and no
# archive has it, so krew refuses to install rather than install something unchecked.
PLACEHOLDER_SHA256 = "0" * 64
CHECKSUMS_HEADER = """\
# The sha256 of each archive of the last release, as `sha256sum` writes them (the .sha256 files published
# beside the archives). krew-manifest.yaml takes its checksums from here; record a release with
#   python -m release.krew --root --checksums DIR    (DIR: the release's .sha256 files)
"""

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


def release_platforms() -> list[tuple[str, str]]:
    """Every os/arch the release builds: the template's platforms (the release workflow builds these)."""
    import yaml

    template = yaml.safe_load(TEMPLATE.read_text(encoding="utf-8").replace("@", "x"))
    return [(p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"])
            for p in template["spec"]["platforms"]]


def read_checksums(path: Path | None = None) -> dict[str, str]:
    """archive file name -> sha256, from `sha256sum` lines (what a build writes beside each archive); the
    recorded release's (release/checksums.txt) by default."""
    path = path or CHECKSUMS
    if not path.exists():
        return {}
    found = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            digest, _, name = line.strip().partition("  ")
            found[name.strip().lstrip("*")] = digest.strip()
    return found


def root_manifest(version: str | None = None, checksums: dict[str, str] | None = None) -> str:
    """krew-manifest.yaml: the release manifest for every platform the release builds, for `version` (default:
    the package's), with the recorded checksums (`checksums` instead of release/checksums.txt)."""
    if version is None:
        from kubectl_win import __version__ as version
    tag = version if version.startswith("v") else f"v{version}"
    recorded = read_checksums() if checksums is None else checksums
    sha256s = {pair: recorded.get(archive_name(tag, *pair), PLACEHOLDER_SHA256) for pair in release_platforms()}
    header = [f"# kubectl-win's krew manifest for {tag}: every platform the release builds.",
              "# Written by `python -m release.krew --root` from release/krew-manifest.template.yaml and",
              "# release/checksums.txt, as each release's win.yaml is; a test fails when this file differs."]
    missing = [f"{os_name}/{arch}" for (os_name, arch), digest in sha256s.items() if digest == PLACEHOLDER_SHA256]
    if missing:
        header += ["# A placeholder sha256 (64 zeros: no archive has it, so krew refuses the archive) stands where",
                   f"# release/checksums.txt records no {tag} archive yet, for {', '.join(missing[:3])}"
                   + ("," if len(missing) > 3 else "."),
                   *([f"# {', '.join(missing[3:])}."] if len(missing) > 3 else []),
                   "# The release's own win.yaml, and the .sha256 file beside each archive, have the real ones."]
    return "\n".join(header) + "\n" + render(tag, sha256s)


def record_checksums(directory: Path, version: str | None = None, target: Path | None = None) -> list[str]:
    """Record the .sha256 files of a release build (every platform it makes) in `target`; the problems
    instead when some are missing or malformed."""
    if version is None:
        from kubectl_win import __version__ as version
    tag = version if version.startswith("v") else f"v{version}"
    lines, problems = [], []
    for pair in release_platforms():
        name = archive_name(tag, *pair)
        sums = directory / f"{name}.sha256"
        digest = sums.read_text(encoding="utf-8").split()[0] if sums.exists() else ""
        if not sums.exists():
            problems.append(f"no {sums.name} in {directory}")
        elif not _SHA256.match(digest):
            problems.append(f"{sums.name} holds no sha256")
        lines.append(f"{digest}  {name}")
    if not problems:
        (target or CHECKSUMS).write_text(CHECKSUMS_HEADER + "".join(line + "\n" for line in lines), encoding="utf-8")
    return problems


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


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m release.krew", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", action="store_true", required=True,
                        help="write krew-manifest.yaml, the repository's manifest for every platform")
    parser.add_argument("--check", action="store_true", help="only check it: exit 1 when it is stale")
    parser.add_argument("--checksums", type=Path, metavar="DIR",
                        help="first record the .sha256 files of a release build in DIR in release/checksums.txt")
    parser.add_argument("--out", type=Path, default=ROOT_MANIFEST, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.checksums is not None:
        problems = record_checksums(args.checksums)
        if problems:
            print("error: not a complete release build: " + "; ".join(problems), file=sys.stderr)
            return 2
    text = root_manifest()
    errors = validate(_load_text(text), f"{DEFAULT_NAME}.yaml")
    if errors:
        print("error: the manifest fails krew validation: " + "; ".join(errors), file=sys.stderr)
        return 1
    current = args.out.read_text(encoding="utf-8") if args.out.exists() else None
    if args.check:
        if current != text:
            print(f"error: {args.out.name} is not what the release code writes; run: python -m release.krew --root",
                  file=sys.stderr)
            return 1
        print(f"{args.out.name} is up to date")
        return 0
    if current != text:
        args.out.write_text(text, encoding="utf-8")
    platforms = ", ".join(f"{os_name}/{arch}" for os_name, arch in release_platforms())
    print(f"{args.out.name}: {DEFAULT_NAME} {_load_text(text)['spec']['version']} for {platforms}")
    return 0


def _load_text(text: str) -> Any:
    import yaml

    return yaml.safe_load(text)


if __name__ == "__main__":
    sys.exit(main())
