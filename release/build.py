"""Build a release: sdist and wheel, a frozen krew archive for this machine, and the krew manifest.

    python -m release.build                    # everything, for this OS/arch
    python -m release.build --manifest-only    # manifest from the archives already in dist/ (CI's last step)

Archives land in dist/ as kubectl-win_<tag>_<os>_<arch>.tar.gz (.zip on Windows) with a .sha256
beside each; the manifest lists exactly the platforms whose archives are there, and is written to
dist/krew/<name>.yaml (the file to submit to an index) and to krew-manifest.yaml at the repo root.
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
        if not args.skip_dists:
            subprocess.run([sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(out), str(ROOT)],
                           check=True)
        build_archive(tag, out, args.work.resolve())
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
    if args.root_manifest:
        (ROOT / "krew-manifest.yaml").write_text(text, encoding="utf-8")
    print(f"manifest for {', '.join(f'{o}/{a}' for o, a in sha256s)} -> {out / 'krew' / (args.name + '.yaml')}")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m release.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tag", help="release tag, e.g. v0.1.0 (default: v + the package version)")
    parser.add_argument("--out", type=Path, default=ROOT / "dist", help="output folder (default dist/)")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "release", help="PyInstaller work folder")
    parser.add_argument("--skip-dists", action="store_true", help="don't build the sdist and wheel")
    parser.add_argument("--manifest-only", action="store_true", help="only write the manifest from dist/")
    parser.add_argument("--name", default=krew.DEFAULT_NAME, help="krew plugin name (default win)")
    parser.add_argument("--homepage", default=krew.DEFAULT_HOMEPAGE, help="project URL for the manifest")
    parser.add_argument("--base-url", help="where the archives are downloaded from (default: the release page)")
    parser.add_argument("--no-root-manifest", dest="root_manifest", action="store_false",
                        help="don't rewrite krew-manifest.yaml at the repo root")
    return parser


if __name__ == "__main__":
    sys.exit(main())
