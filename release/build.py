"""Build a release: sdist and wheel, a frozen krew archive for this machine, and the krew manifest.

    python -m release.build                    # everything, for this OS/arch
    python -m release.build --manifest-only    # manifest from the archives already in dist/ (CI's last step)
    python -m release.build --platform windows/amd64 --out DIR   # the Windows archive, built on Linux

Archives for this machine's platform are frozen with PyInstaller; the windows/amd64 one is put
together from the embeddable CPython and win_amd64 wheels (release/windows.py), on any OS.

Archives land in dist/ as kubectl-win_<tag>_<os>_<arch>.tar.gz (.zip on Windows) with a .sha256
beside each; the manifest lists exactly the platforms whose archives are there, and is written to
dist/krew/<name>.yaml (the file to submit to an index). When dist/ holds every platform the release
builds, their checksums are recorded in release/checksums.txt and krew-manifest.yaml at the repo root is
rewritten from them (release/krew.py: the root manifest always lists every platform).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

if __package__ in (None, ""):  # `python release/build.py` as well as `python -m release.build`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from release import archive, krew, platforms  # noqa: E402
from release.freeze import ROOT, freeze  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from kubectl_win import __version__

    tag = args.tag or f"v{__version__}"
    if tag != f"v{__version__}":
        print(f"error: tag {tag} does not match the package version {__version__}", file=sys.stderr)
        return 2
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if not args.manifest_only:
        if not args.skip_dists and args.platform is None:
            subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
                           check=True)
        if args.platform == "windows/amd64":
            build_windows_archive(tag, out, args.work.resolve(), args.cache.resolve())
        elif args.platform in (None, "/".join(platforms.current())):
            build_archive(tag, out, args.work.resolve())
        else:
            print(f"error: cannot build {args.platform} here (only {'/'.join(platforms.current())} and "
                  f"windows/amd64)", file=sys.stderr)
            return 2
    return write_manifest(tag, out, args)


def build_archive(tag: str, out: Path, work: Path) -> Path:
    os_name, arch = platforms.current()
    frozen = freeze(work)
    target = out / platforms.archive_name(tag, os_name, arch)
    archive.pack(frozen, ROOT / "LICENSE", target)
    problems = archive.problems(target, platforms.bin_path(os_name))
    if problems:
        raise SystemExit("error: " + "; ".join(problems))
    Path(f"{target}.sha256").write_text(f"{archive.sha256(target)}  {target.name}\n", encoding="utf-8")
    print(f"built {target}")
    return target


def build_windows_archive(tag: str, out: Path, work: Path, cache: Path) -> Path:
    """kubectl-win_<tag>_windows_amd64.zip from the embeddable CPython and win_amd64 wheels."""
    from release import windows

    try:
        top = windows.assemble(tag, cache, work / "windows")
    except windows.WindowsBuildError as exc:
        raise SystemExit(f"error: {exc}") from None
    target = out / platforms.archive_name(tag, "windows", "amd64")
    archive.pack(top, ROOT / "LICENSE", target, mtime=_commit_time())
    problems = archive.problems(target, platforms.bin_path("windows"))
    if problems:
        raise SystemExit("error: " + "; ".join(problems))
    Path(f"{target}.sha256").write_text(f"{archive.sha256(target)}  {target.name}\n", encoding="utf-8")
    print(f"built {target}")
    return target


def _commit_time() -> int:
    """The stamp for archive entries: the last commit's time (SOURCE_DATE_EPOCH overrides it), so a
    rebuild of the same commit gives the same bytes."""
    result = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%ct"], capture_output=True, text=True,
                            check=False)
    return int(result.stdout.strip()) if result.returncode == 0 and result.stdout.strip().isdigit() else 315532800


def write_manifest(tag: str, out: Path, args: argparse.Namespace) -> int:
    sha256s = {}
    for os_name, arch in platforms.KREW_PLATFORMS:
        candidate = out / platforms.archive_name(tag, os_name, arch)
        if candidate.exists():
            sha256s[(os_name, arch)] = archive.sha256(candidate)
    if not sha256s:
        print(f"error: no archives for {tag} in {out}", file=sys.stderr)
        return 2
    text = krew.render(tag, sha256s, name=args.name, homepage=args.homepage, base_url=args.base_url)
    import yaml

    errors = krew.validate(yaml.safe_load(text), f"{args.name}.yaml")
    if errors:
        print("error: the manifest fails krew validation:\n  " + "\n  ".join(errors), file=sys.stderr)
        return 1
    (out / "krew").mkdir(exist_ok=True)
    (out / "krew" / f"{args.name}.yaml").write_text(text, encoding="utf-8")
    print(f"manifest for {', '.join(f'{o}/{a}' for o, a in sha256s)} -> {out / 'krew' / (args.name + '.yaml')}")
    if args.root_manifest:
        return update_root_manifest(tag, out, set(sha256s))
    return 0


def update_root_manifest(tag: str, out: Path, built: set[tuple[str, str]]) -> int:
    """Record a complete release build's checksums and rewrite krew-manifest.yaml from them; a partial build
    (one machine's archive) leaves both as they are: the root manifest lists every platform."""
    wanted = krew.release_platforms()
    if not set(wanted) <= built:
        print(f"krew-manifest.yaml unchanged: {out} holds {len(built & set(wanted))} of the {len(wanted)} platforms "
              "the release builds (python -m release.krew --root --checksums DIR records a complete release)")
        return 0
    problems = krew.record_checksums(out, tag)
    if problems:
        print("error: " + "; ".join(problems), file=sys.stderr)
        return 1
    krew.ROOT_MANIFEST.write_text(krew.root_manifest(tag), encoding="utf-8")
    print(f"recorded the checksums of {tag} in release/checksums.txt and rewrote krew-manifest.yaml")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m release.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag", help="release tag, e.g. v0.1.0 (default: v + the package version)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "release", help="PyInstaller work folder")
    parser.add_argument("--platform", choices=("windows/amd64", "/".join(platforms.current())),
                        help="the archive to build (default: this machine's OS/arch)")
    parser.add_argument("--cache", type=Path, default=ROOT / "build" / "windows-cache",
                        help="downloads for the windows/amd64 archive (default build/windows-cache)")
    parser.add_argument("--skip-dists", action="store_true", help="don't build the sdist and wheel")
    parser.add_argument("--manifest-only", action="store_true", help="only write the manifest from dist/")
    parser.add_argument("--name", default=krew.DEFAULT_NAME, help="krew plugin name (default win)")
    parser.add_argument("--homepage", default=krew.DEFAULT_HOMEPAGE, help="project URL for the manifest")
    parser.add_argument("--base-url", help="where the archives are downloaded from (default: the release page)")
    parser.add_argument("--no-root-manifest", dest="root_manifest", action="store_false",
                        help="don't record a complete build's checksums and rewrite krew-manifest.yaml")
    return parser


if __name__ == "__main__":
    sys.exit(main())
