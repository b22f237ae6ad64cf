"""What the cluster adds to an image-platform failure: the Windows build the message (or the node) names, that
build's support status, and which way round a Linux/Windows mix-up went."""

from __future__ import annotations

import re
from typing import Any

from kubectl_win import builds, clock, lifecycle
from kubectl_win.findings import Fix

# Docker and containerd name the build they looked for: "no matching manifest for windows/amd64 10.0.17134".
_ASKED = re.compile(r"windows/\w+ (?:10\.0\.)?(\d{5})\b", re.IGNORECASE)
_IMAGE = re.compile(r'image "([^"\s]+:[^"\s]+)"')  # the reference a pull names, with its tag


def build_asked(message: str, node_build: int | None) -> int | None:
    """The Windows build the pull looked for: the one the message names, else the node's."""
    found = _ASKED.search(message)
    return int(found.group(1)) if found else node_build


def variant_note(message: str, node_build: int | None) -> str:
    """A sentence on the build the image lacks a variant for: out of support (images are no longer published for
    it, so the host must move), the other build the image's tag is for, or which tags are built for it. Empty
    when no build is known."""
    number = build_asked(message, node_build)
    if number is None:
        return ""
    unsupported = _unsupported(number)
    if unsupported:
        return f"{unsupported} and use that build's tag."
    tags = builds.tags_for(number) if builds.build_of(number) is not None else str(number)
    image = _IMAGE.search(message)
    built = builds.image_build(image.group(1)) if image else None
    if image is not None and built is not None and built != number:
        direction = "a newer build never runs on an older host" if built > number else \
            "process isolation needs the host's own build"
        return (f"The pull asked for {_name(number)}, and the tag {image.group(1).rsplit(':', 1)[-1]} is built for "
                f"{_name(built)}: {direction}; use a tag built for the node's build ({tags}).")
    return f"The pull asked for {_name(number)}; the image lists no variant for it: use a tag built for it ({tags})."


# Docker names both sides: "a Windows version 10.0.20348-based image is incompatible with a 10.0.17763 host".
_BOTH = re.compile(r"Windows version (?:10\.0\.)?(\d{5})\S*-based image is incompatible with a (?:10\.0\.)?(\d{5})",
                   re.IGNORECASE)


def _name(number: int) -> str:
    info = builds.build_of(number)
    return info.display() if info is not None else f"build {number}"


def _support_ended(number: int) -> str:
    """The day support for the build ended (ISO), or "" while it lasts or when the data does not date it."""
    ended = lifecycle.support_end(number)
    return ended.isoformat() if ended is not None and ended < clock.today() else ""


def _unsupported(number: int) -> str:
    """The sentence (without its end) for a pull that asked for a build out of support; "" while it lasts."""
    ended = _support_ended(number)
    return (f"The pull asked for {_name(number)}, which has been out of support since {ended}: images are no longer "
            f"published for it, so move the node to a supported Windows Server build") if ended else ""


def _out_of_support(number: int) -> str:
    ended = _support_ended(number)
    return f" {_name(number)} has been out of support since {ended}." if ended else ""


def chose_another_child() -> str:
    """What a mismatch means where the tag does list the node's build (knowledge/image_compat.yaml)."""
    from kubectl_win.knowledge import load

    return " ".join(str(load("image_compat").get("chose_another_child") or "").split())


def mismatch_note(message: str) -> str:
    """Which way round a build mismatch the message names both builds of goes, and what follows; empty when the
    message does not name them."""
    found = _BOTH.search(message)
    if found is None:
        return ""
    image, host = int(found.group(1)), int(found.group(2))
    if image > host:
        return (f"The image is built for {_name(image)}, newer than the host's {_name(host)}: a host never runs an "
                f"image of a newer build, in any isolation; use an image built for the host's build or move to a "
                f"host of build {image} or newer.{_out_of_support(host)}")
    return (f"The image is built for {_name(image)}, older than the host's {_name(host)}: process isolation needs "
            f"the host's own build (Hyper-V isolation runs older images); use an image built for build {host}."
            f"{_out_of_support(host)}")


# The pull failures whose candidates the registry's answer tells apart.
PULL_CHECKS = frozenset({"symptom-no-matching-platform", "symptom-windows-image-no-variant"})
_PULLED = re.compile(r'image[ =]\\?"([^"\s\\]+)\\?"')  # image "X" (an event), image="X" or image=\"X\" (a log)


def registry_says(check: str, message: str, pod_images: tuple[str, ...], node_build: str | None,
                  records: dict[str, Any]) -> str | None:
    """What the registry said of the image a pull failure names (doctor --check-images, or a dump that recorded
    it), when that decides the cause: the tag lists no Windows variant at all (a tag published for Linux only) or
    none that runs on the node's build. None when it was not read, could not be read, or lists a variant that
    runs there (then the message's other candidates stay)."""
    if check not in PULL_CHECKS or not node_build or not records:
        return None
    image = _image_pulled(message, pod_images, records)
    record = records.get(image) if image else None
    if image is None or not isinstance(record, dict) or record.get("error"):
        return None
    from kubectl_win.images.compat import NO_VARIANT, parse_host_version
    from kubectl_win.images.service import Resolved

    try:
        host = parse_host_version(node_build)
    except ValueError:
        return None
    verdict = Resolved.from_record(image, record).verdict(host)
    if verdict.verdict != NO_VARIANT:
        return None
    return f"The registry says of {image}: {verdict.reason}."


def _image_pulled(message: str, pod_images: tuple[str, ...], records: dict[str, Any]) -> str | None:
    """The recorded image the message pulled: one it names (a pod's, or any the registry answered for: a node log
    line names no pod), else the pod's only image the registry answered for."""
    named = [m.group(1) for m in _PULLED.finditer(message)]
    for image in (*pod_images, *records):
        if image in records and any(n == image or n.endswith("/" + image) for n in named):
            return image
    answered = [image for image in dict.fromkeys(pod_images) if image in records]
    return answered[0] if len(answered) == 1 and not named else None


def with_evidence(check: str, message: str, node_build: int | None, fix: Fix) -> Fix:
    """The fix of an image-platform finding with what the message (and the node, where known) says of the builds:
    the same words whether doctor read the text in an event, a node log or a support bundle."""
    if check == "symptom-windows-image-no-variant":
        said = variant_note(message, node_build)
    elif check == "symptom-no-matching-platform":
        # Whether the tag has any Windows entry the message does not say; a build it names that is out of support
        # has none published any more, whatever the tag.
        number = build_asked(message, None)
        unsupported = _unsupported(number) if number is not None else ""
        said = f"{unsupported}." if unsupported else ""
    elif check == "symptom-os-build-mismatch":
        said = mismatch_note(message)
    else:
        return fix
    if not said or said in fix.note:
        return fix
    return Fix(commands=fix.commands, note=" ".join(p for p in (said, fix.note) if p), judgement=fix.judgement)
