"""The krew manifest passes krew's own validate-krew-manifest (built from sigs.k8s.io/krew), and for each
kind of violation the real validator and our release check (release/krew.py) both reject it."""

from __future__ import annotations

import copy
import subprocess
import tarfile
import tempfile
from pathlib import Path

import pytest
import yaml

from kubectl_win import __version__
from release import archive, krew, platforms
from tests.realcluster.fixtures import go_tool
from tests.support.paths import ROOT

ROOT_MANIFEST = ROOT / "krew-manifest.yaml"
SHA = "0123456789abcdef" * 4
ALL_PLATFORMS = {("linux", "amd64"): SHA, ("linux", "arm64"): SHA, ("darwin", "amd64"): SHA,
                 ("darwin", "arm64"): SHA, ("windows", "amd64"): SHA}


@pytest.fixture
def manifest() -> dict:
    return yaml.safe_load(krew.render(f"v{__version__}", ALL_PLATFORMS))


def real_validation(manifest: dict, file_name: str | None = None) -> str | None:
    """krew's own validate-krew-manifest (built from sigs.k8s.io/krew) on the manifest saved under
    file_name (default: <name>.yaml): None when it accepts it, else its error. It never downloads
    (-skip-install)."""
    name = str((manifest.get("metadata") or {}).get("name") or "")
    file_name = file_name or (f"{name}.yaml" if name and "/" not in name else "win.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / file_name
        path.write_text(yaml.safe_dump(manifest, sort_keys=False))
        result = subprocess.run([go_tool("krew", "validate-krew-manifest"), "-manifest", str(path), "-skip-install"],
                                capture_output=True, text=True, timeout=60)
    if result.returncode == 0:
        return None
    fatal = [line for line in result.stderr.splitlines() if line.startswith("F")]
    return (fatal or result.stderr.splitlines() or ["failed"])[0]


def errors_after(manifest: dict, change, file_name: str | None = None, index_only: bool = False) -> list[str]:
    """Our release check's errors for the changed manifest; krew's real validator must agree that it is
    invalid (index_only: a rule of the krew-index CI that validate-krew-manifest does not apply)."""
    changed = copy.deepcopy(manifest)
    change(changed)
    ours = krew.validate(changed, file_name)
    real = real_validation(changed, file_name)
    if not index_only:
        assert bool(ours) == (real is not None), f"release.krew says {ours}, validate-krew-manifest says {real}"
    return ours


def test_the_committed_manifest_is_valid_and_matches_the_package_version():
    manifest = krew.load(ROOT_MANIFEST)
    assert krew.validate(manifest) == []
    assert real_validation(manifest) is None
    assert manifest["metadata"]["name"] == krew.DEFAULT_NAME
    assert manifest["spec"]["version"] == f"v{__version__}", "rerun `python -m release.build` after a version bump"
    for entry in manifest["spec"]["platforms"]:
        labels = entry["selector"]["matchLabels"]
        assert entry["bin"] == platforms.bin_path(labels["os"])
        assert entry["uri"].endswith(platforms.archive_name(manifest["spec"]["version"], labels["os"], labels["arch"]))


def test_the_root_manifest_is_what_the_release_code_writes():
    """krew-manifest.yaml is generated (python -m release.krew --root), never edited by hand."""
    assert ROOT_MANIFEST.read_text(encoding="utf-8") == krew.root_manifest(), \
        "krew-manifest.yaml is not what the release code writes: run python -m release.krew --root"


def test_the_root_manifest_lists_every_platform_the_release_builds_as_a_release_manifest_does():
    manifest = krew.load(ROOT_MANIFEST)
    listed = [(p["selector"]["matchLabels"]["os"], p["selector"]["matchLabels"]["arch"])
              for p in manifest["spec"]["platforms"]]
    assert listed == krew.release_platforms() and {("linux", "amd64"), ("windows", "amd64")} <= set(listed)
    # Below its comment lines, the very text a release's win.yaml has for those archives.
    tag = manifest["spec"]["version"]
    sha256s = {pair: entry["sha256"] for pair, entry in zip(listed, manifest["spec"]["platforms"], strict=True)}
    body = "".join(line for line in ROOT_MANIFEST.read_text().splitlines(keepends=True) if not line.startswith("#"))
    assert body == krew.render(tag, sha256s)
    recorded = krew.read_checksums()
    for (os_name, arch), digest in sha256s.items():
        assert digest == recorded.get(platforms.archive_name(tag, os_name, arch), krew.PLACEHOLDER_SHA256)


def test_a_recorded_release_build_gives_its_checksums_to_the_root_manifest(tmp_path):
    tag = f"v{__version__}"
    digests = {}
    for index, (os_name, arch) in enumerate(krew.release_platforms()):
        name = platforms.archive_name(tag, os_name, arch)
        digests[name] = f"{index + 1:x}" * 64
        (tmp_path / f"{name}.sha256").write_text(f"{digests[name]}  {name}\n")
    target = tmp_path / "checksums.txt"
    assert krew.record_checksums(tmp_path, target=target) == []
    assert krew.read_checksums(target) == digests
    text = krew.root_manifest(checksums=krew.read_checksums(target))
    manifest = yaml.safe_load(text)
    assert krew.validate(manifest, "win.yaml") == [] and "placeholder" not in text
    assert sorted(entry["sha256"] for entry in manifest["spec"]["platforms"]) == sorted(digests.values())
    # A partial build is not a release: nothing is recorded, and what is missing is said.
    (tmp_path / f"{platforms.archive_name(tag, 'darwin', 'arm64')}.sha256").unlink()
    target.unlink()
    assert krew.record_checksums(tmp_path, target=target) == [
        f"no {platforms.archive_name(tag, 'darwin', 'arm64')}.sha256 in {tmp_path}"]
    assert not target.exists()


def test_a_release_build_rewrites_the_root_manifest_only_with_every_platform(tmp_path, monkeypatch, capsys):
    import argparse

    from release import build

    root, checksums = tmp_path / "krew-manifest.yaml", tmp_path / "checksums.txt"
    monkeypatch.setattr(krew, "ROOT_MANIFEST", root)
    monkeypatch.setattr(krew, "CHECKSUMS", checksums)
    tag, dist = f"v{__version__}", tmp_path / "dist"
    dist.mkdir()
    args = argparse.Namespace(name="win", homepage=krew.DEFAULT_HOMEPAGE, base_url=None, root_manifest=True)

    def built(os_name: str, arch: str) -> None:
        target = dist / platforms.archive_name(tag, os_name, arch)
        target.write_bytes(f"{os_name}/{arch}".encode())
        (dist / f"{target.name}.sha256").write_text(f"{archive.sha256(target)}  {target.name}\n")

    built("linux", "amd64")  # one machine's build
    assert build.write_manifest(tag, dist, args) == 0
    assert "krew-manifest.yaml unchanged: " in capsys.readouterr().out and not root.exists() and not checksums.exists()
    for os_name, arch in krew.release_platforms():
        built(os_name, arch)
    assert build.write_manifest(tag, dist, args) == 0
    assert root.read_text() == krew.root_manifest(tag) and "placeholder" not in root.read_text()
    assert krew.read_checksums(checksums) == {p.name[:-len(".sha256")]: p.read_text().split()[0]
                                             for p in dist.glob("*.sha256")}


def test_a_stale_root_manifest_is_reported_and_rewritten(tmp_path, capsys):
    stale = tmp_path / "krew-manifest.yaml"
    one_platform = yaml.safe_load(krew.render(f"v{__version__}", {("windows", "amd64"): SHA}))
    stale.write_text(yaml.safe_dump(one_platform, sort_keys=False))
    assert krew.main(["--root", "--check", "--out", str(stale)]) == 1
    assert capsys.readouterr().err == ("error: krew-manifest.yaml is not what the release code writes; run: "
                                       "python -m release.krew --root\n")
    assert krew.main(["--root", "--out", str(stale)]) == 0
    assert capsys.readouterr().out == (f"krew-manifest.yaml: win v{__version__} for linux/amd64, linux/arm64, "
                                       "darwin/amd64, darwin/arm64, windows/amd64\n")
    assert stale.read_text() == krew.root_manifest()
    assert krew.main(["--root", "--check", "--out", str(stale)]) == 0


def test_docs_install_md_shows_what_python_m_release_krew_prints(tmp_path, capsys):
    import shlex

    from tests.support.readme_examples import console_examples, differences

    page = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    examples = [e for e in console_examples(page) if e.command.startswith("python -m release.krew ")]
    assert examples
    for example in examples:
        assert krew.main([*shlex.split(example.command)[3:], "--out", str(tmp_path / "krew-manifest.yaml")]) == 0
        assert differences(example.output, capsys.readouterr().out.splitlines()) == []


def test_a_full_release_manifest_is_valid_under_its_index_file_name(manifest):
    assert krew.validate(manifest, "win.yaml") == []
    assert real_validation(manifest, "win.yaml") is None
    assert len(manifest["spec"]["platforms"]) == 5


def test_windows_ships_a_zip_with_an_exe(manifest):
    (windows,) = [p for p in manifest["spec"]["platforms"] if p["selector"]["matchLabels"]["os"] == "windows"]
    assert windows["bin"] == "kubectl-win/kubectl-win.exe"
    assert windows["uri"].endswith(f"kubectl-win_v{__version__}_windows_amd64.zip")


def test_only_built_platforms_are_listed():
    manifest = yaml.safe_load(krew.render("v1.2.3", {("linux", "amd64"): SHA}))
    (only,) = manifest["spec"]["platforms"]
    assert only["uri"] == "https://github.com/kubectl-win/kubectl-win/releases/download/v1.2.3/" \
                          "kubectl-win_v1.2.3_linux_amd64.tar.gz"


def test_short_description_is_short_and_description_has_no_usage(manifest):
    assert len(manifest["spec"]["shortDescription"]) <= 50
    assert all(len(line) <= 80 for line in manifest["spec"]["description"].splitlines())
    assert "kubectl win " not in manifest["spec"]["description"]


def test_api_version_and_kind(manifest):
    assert any("apiVersion" in e for e in errors_after(manifest, lambda m: m.update(apiVersion="krew/v1")))
    assert any("kind" in e for e in errors_after(manifest, lambda m: m.update(kind="Tool")))


@pytest.mark.parametrize("name", ["win dows", "win/x", "", "ünï"])
def test_name_must_be_word_characters_and_dashes(manifest, name):
    assert any("name" in e for e in errors_after(manifest, lambda m: m["metadata"].update(name=name)))


@pytest.mark.parametrize("name", ["CON", "nul", "com1", "LPT9"])
def test_name_must_not_be_a_windows_device(manifest, name):
    assert any("reserved" in e for e in errors_after(manifest, lambda m: m["metadata"].update(name=name)))


def test_name_must_match_the_file_name(manifest):
    assert krew.validate(manifest, "win.yaml") == [] and real_validation(manifest, "win.yaml") is None
    assert any("file name" in e for e in krew.validate(manifest, "windows.yaml"))
    assert 'plugin should be named "windows", not "win"' in (real_validation(manifest, "windows.yaml") or "")
    assert any(".yaml" in e for e in krew.validate(manifest, "win.yml"))
    assert real_validation(manifest, "win.yml") is not None


@pytest.mark.parametrize("version", ["0.1.0", "v0.1", "v1", "V0.1.0", "v01.0.0", "latest", ""])
def test_version_must_be_semver_with_a_leading_v(manifest, version):
    assert any("version" in e for e in errors_after(manifest, lambda m: m["spec"].update(version=version)))


@pytest.mark.parametrize("version", ["v0.1.0", "v1.2.3-rc.1", "v1.2.3+build.5"])
def test_semver_prerelease_and_build_suffixes_are_allowed(manifest, version):
    assert errors_after(manifest, lambda m: m["spec"].update(version=version)) == []


@pytest.mark.parametrize("sha", [SHA.upper(), SHA[:-1], SHA + "0", "z" * 64, ""])
def test_sha256_must_be_64_lowercase_hex(manifest, sha):
    assert any("sha256" in e for e in errors_after(manifest, lambda m: m["spec"]["platforms"][0].update(sha256=sha)))


def test_short_description_is_one_line(manifest):
    assert any("shortDescription" in e
               for e in errors_after(manifest, lambda m: m["spec"].update(shortDescription="a\nb")))
    assert any("shortDescription" in e for e in errors_after(manifest, lambda m: m["spec"].pop("shortDescription")))


def test_at_least_one_platform(manifest):
    assert any("platform" in e for e in errors_after(manifest, lambda m: m["spec"].update(platforms=[])))


def test_overlapping_selectors_are_rejected(manifest):
    def duplicate_linux(m):
        m["spec"]["platforms"].append(copy.deepcopy(m["spec"]["platforms"][0]))

    def broad_linux(m):
        m["spec"]["platforms"].append({"selector": {"matchExpressions": [
            {"key": "os", "operator": "In", "values": ["linux"]}]}, "uri": "u", "sha256": SHA, "bin": "b"})

    assert any("both match linux/amd64" in e for e in errors_after(manifest, duplicate_linux))
    assert any("both match linux/arm64" in e for e in errors_after(manifest, broad_linux))


def test_selectors_use_only_os_and_arch_and_match_a_supported_pair(manifest):
    def extra_key(m):
        m["spec"]["platforms"][0]["selector"]["matchLabels"]["libc"] = "glibc"

    def unsupported(m):
        m["spec"]["platforms"][0]["selector"]["matchLabels"] = {"os": "plan9", "arch": "amd64"}

    assert any("only use os and arch" in e for e in errors_after(manifest, extra_key))
    assert any("supported" in e for e in errors_after(manifest, unsupported))
    assert any("selector" in e for e in errors_after(manifest, lambda m: m["spec"]["platforms"][0].pop("selector")))


def test_windows_bin_must_be_an_exe(manifest):
    def no_exe(m):
        for platform_entry in m["spec"]["platforms"]:
            if platform_entry["selector"]["matchLabels"]["os"] == "windows":
                platform_entry["bin"] = "kubectl-win/kubectl-win"

    # validate-krew-manifest v0.4.3 accepts it; kubectl cannot run such a plugin on Windows.
    assert any(".exe" in e for e in errors_after(manifest, no_exe, index_only=True))


def test_uri_and_bin_are_required_and_files_must_be_complete(manifest):
    assert any("uri" in e for e in errors_after(manifest, lambda m: m["spec"]["platforms"][0].pop("uri")))
    assert any("bin" in e for e in errors_after(manifest, lambda m: m["spec"]["platforms"][0].pop("bin")))
    assert any("files" in e for e in errors_after(manifest, lambda m: m["spec"]["platforms"][0].update(files=[])))
    assert any("files" in e for e in errors_after(
        manifest, lambda m: m["spec"]["platforms"][0].update(files=[{"from": "*"}])))


def _frozen_tree(tmp_path: Path, exe: str = "kubectl-win") -> Path:
    frozen = tmp_path / "frozen"
    (frozen / "_internal").mkdir(parents=True)
    (frozen / exe).write_text("#!/bin/sh\n")
    (frozen / exe).chmod(0o755)
    (frozen / "_internal" / "lib.so").write_text("x")
    return frozen


def test_archives_hold_license_and_bin_and_no_links(tmp_path):
    frozen = _frozen_tree(tmp_path)
    (frozen / "_internal" / "alias.so").symlink_to("lib.so")  # packed as a regular file
    target = archive.pack(frozen, ROOT / "LICENSE", tmp_path / platforms.archive_name("v0.1.0", "linux", "amd64"))
    assert archive.problems(target, "kubectl-win/kubectl-win") == []
    with tarfile.open(target) as bundle:
        members = {m.name: m for m in bundle.getmembers()}
    assert members["kubectl-win/_internal/alias.so"].isfile()
    assert "LICENSE" in members


def test_archive_checks_catch_what_krew_rejects(tmp_path):
    bad = tmp_path / "bad.tar.gz"
    with tarfile.open(bad, "w:gz") as bundle:
        link = tarfile.TarInfo("kubectl-win/kubectl-win")
        link.type, link.linkname = tarfile.SYMTYPE, "elsewhere"
        bundle.addfile(link)
    found = archive.problems(bad, "kubectl-win/kubectl-win")
    assert any("not a regular file" in p for p in found)
    assert any("LICENSE" in p for p in found)


def test_the_same_input_packs_to_the_same_sha256(tmp_path):
    frozen = _frozen_tree(tmp_path)
    first = archive.pack(frozen, ROOT / "LICENSE", tmp_path / "a.tar.gz", mtime=1)
    second = archive.pack(frozen, ROOT / "LICENSE", tmp_path / "b.tar.gz", mtime=1)
    assert archive.sha256(first) == archive.sha256(second)


def test_windows_archive_is_a_zip_with_the_exe(tmp_path):
    frozen = _frozen_tree(tmp_path, "kubectl-win.exe")
    target = archive.pack(frozen, ROOT / "LICENSE", tmp_path / platforms.archive_name("v0.1.0", "windows", "amd64"))
    assert target.suffix == ".zip"
    assert archive.problems(target, platforms.bin_path("windows")) == []


def test_release_workflow_builds_every_platform_the_manifest_template_lists():
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "release.yml").read_text())
    matrix = workflow["jobs"]["archive"]["strategy"]["matrix"]["include"]
    built = {(entry["os"], entry["arch"]) for entry in matrix}
    windows = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["windows-archive"]["steps"])
    assert "python -m release.build --platform windows/amd64" in windows  # built on Linux, as the tests build it
    built.add(("windows", "amd64"))
    smoke = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["windows-smoke"]["steps"])
    assert "kubectl-win.exe version" in smoke and workflow["jobs"]["windows-smoke"]["runs-on"].startswith("windows")
    assert built == set(krew.release_platforms())  # what the template, and so krew-manifest.yaml, lists
    runners = {(entry["os"], entry["arch"]): entry["runner"] for entry in matrix}
    assert all(runners[(os_name, arch)].startswith("macos") for os_name, arch in built if os_name == "darwin")
    steps = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["archive"]["steps"])
    assert "python -m release.build" in steps and "find smoke -type l" in steps
    publish = " ".join(str(step.get("run", "")) for step in workflow["jobs"]["publish"]["steps"])
    assert "--manifest-only" in publish
