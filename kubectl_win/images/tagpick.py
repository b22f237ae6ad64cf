"""scaffold --check-image: keep the given tag when its manifest has a variant for the build, else pick a tag of
the same repository whose manifest has one (the given tag with its build word swapped first, then the tags
that name the build, those sharing the given tag's other words first)."""

from __future__ import annotations

import re

from kubectl_win.images.compat import RUNS, HostBuild, decide

MAX_CANDIDATES = 24


def _stem(tag: str) -> str:
    """The tag without the words naming a Windows build (4.8-windowsservercore-ltsc2019: 4.8-windowsservercore-)."""
    from kubectl_win.builds import known_builds

    words = sorted({t.lower() for b in known_builds() for t in b.image_tags}, key=len, reverse=True)
    pattern = "|".join(re.escape(w) for w in words)
    return re.sub(rf"(?<![0-9a-z])({pattern})(\.\d+)?(?![0-9a-z])", "", tag.lower())


def _with_tag(image: str, tag: str) -> str:
    name = image.split("@", 1)[0]
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    base = name[:colon] if colon > last_slash else name
    return f"{base}:{tag}"


def candidates(tag: str, tags: list[str], host: HostBuild) -> list[str]:
    from kubectl_win.builds import build_of, image_build

    target = build_of(host.build)
    swapped = []
    if target is not None:
        for build_tag in target.image_tags:
            for pattern in (r"ltsc\d{4}", r"(?<![0-9])1809(?![0-9])", r"10\.0\.\d{5}(\.\d+)?"):
                replaced = re.sub(pattern, build_tag, tag, count=1)
                if replaced != tag and replaced in tags:
                    swapped.append(replaced)
    from kubectl_win.images.compat import process_compatible

    stem = _stem(tag)
    named = {t: image_build(f"x/windows:{t}") for t in tags}
    # Tags naming a build the host runs: its own build first, then newer compatible ones (a 2025 host runs 2022).
    naming = [t for t, b in named.items() if b is not None and process_compatible(host, f"10.0.{b}")]
    naming.sort(key=lambda t: (named[t] != host.build, _stem(t) != stem, -(named[t] or 0), len(t), t))
    return list(dict.fromkeys(swapped + naming))[:MAX_CANDIDATES]


def pick_tag(client, image: str, host: HostBuild, architecture: str = "amd64") -> tuple[str, str, bool]:  # type: ignore[no-untyped-def]
    """(image to use, what the registry said, whether it is a warning)."""
    from kubectl_win.registry.client import Failure
    from kubectl_win.registry.reference import parse_reference

    ref = parse_reference(image)
    given = client.resolve(ref)
    if given.error is not None:
        return image, f"the registry could not be read for {image} ({given.error}); the tag was not checked", True
    verdict = decide(given.platforms, host, architecture)
    if verdict.verdict == RUNS:
        return image, f"{image} has a variant for {host.version} ({verdict.variant or 'no os.version'})", False
    if ref.digest:
        return image, f"{image} is pinned by digest and {verdict.reason}", True
    try:
        tags = client.list_tags(ref)
    except Failure as exc:
        return image, f"{image}: {verdict.reason}; its tags could not be listed ({exc})", True
    names = candidates(ref.tag or "latest", tags, host)
    if names:
        refs = [parse_reference(_with_tag(image, name)) for name in names]
        for name, result in zip(names, client.resolve_many(refs), strict=True):
            if result.error is None:
                chosen = decide(result.platforms, host, architecture)
                if chosen.verdict == RUNS:
                    picked = _with_tag(image, name)
                    return picked, (f"picked {picked}: its manifest has {chosen.variant or 'a variant'} for "
                                    f"{host.version} ({ref.tag}: {verdict.reason})"), False
    return image, f"{image}: {verdict.reason}; no tag of the repository has a variant for {host.version}", True
