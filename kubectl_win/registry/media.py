"""Manifest media types and what a manifest says about the images it names.

An index (Docker manifest list or OCI image index) lists `manifests[].platform`; attestation entries
(`vnd.docker.reference.type: attestation-manifest`, platform unknown/unknown; knowledge/image_compat.yaml)
are not images and are left out. A single manifest names its platform only in its config blob.
"""

from __future__ import annotations

from typing import Any

from kubectl_win.images.compat import Platform

DOCKER_LIST = "application/vnd.docker.distribution.manifest.list.v2+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
DOCKER_MANIFEST = "application/vnd.docker.distribution.manifest.v2+json"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
INDEXES = (DOCKER_LIST, OCI_INDEX)
MANIFESTS = (DOCKER_MANIFEST, OCI_MANIFEST)
ACCEPT = ", ".join((OCI_INDEX, DOCKER_LIST, OCI_MANIFEST, DOCKER_MANIFEST))


class ManifestError(ValueError):
    pass


def kind_of(document: Any, content_type: str = "") -> str:
    """'index' or 'manifest' from the document's mediaType (else the response's Content-Type, else its shape)."""
    if not isinstance(document, dict):
        raise ManifestError("the registry answered with something that is not a manifest")
    media = document.get("mediaType") or content_type.split(";", 1)[0].strip()
    if media in INDEXES:
        return "index"
    if media in MANIFESTS:
        return "manifest"
    if not media or media == "application/json":
        if isinstance(document.get("manifests"), list):
            return "index"
        if isinstance(document.get("config"), dict):
            return "manifest"
    raise ManifestError(f"unsupported manifest media type {media or 'none'!r}")


def is_ignored_entry(entry: dict[str, Any]) -> bool:
    """An index entry that is not an image to run (an attestation or another artifact)."""
    from kubectl_win.knowledge import load

    rule = load("image_compat")["ignored_entries"]
    annotations = entry.get("annotations") or {}
    if any(annotations.get(key) == value for key, value in rule["annotations"].items()):
        return True
    platform = entry.get("platform") or {}
    return f"{platform.get('os', '')}/{platform.get('architecture', '')}" in rule["platforms"]


def index_platforms(document: dict[str, Any]) -> list[Platform]:
    """The runnable entries of an index, in the index's order."""
    entries = document.get("manifests")
    if not isinstance(entries, list):
        raise ManifestError("the index has no manifests list")
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or is_ignored_entry(entry):
            continue
        platform = entry.get("platform")
        if not isinstance(platform, dict):
            continue  # an entry without a platform cannot be chosen by a runtime
        out.append(_platform(platform, str(entry.get("digest") or "")))
    return out


def config_digest(document: dict[str, Any]) -> str:
    config = document.get("config")
    if not isinstance(config, dict) or not config.get("digest"):
        raise ManifestError("the manifest has no config descriptor")
    return str(config["digest"])


def config_platform(config: Any, manifest_digest: str) -> Platform:
    """The platform a single manifest's config blob names (os, architecture, os.version, variant)."""
    if not isinstance(config, dict) or not config.get("os"):
        raise ManifestError("the image config names no os")
    return _platform(config, manifest_digest)


def _platform(data: dict[str, Any], digest: str) -> Platform:
    return Platform(str(data.get("os") or ""), str(data.get("architecture") or ""),
                    str(data.get("os.version") or ""), str(data.get("variant") or ""), digest)
