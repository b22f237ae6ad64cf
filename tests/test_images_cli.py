"""`kubectl win images` as a user runs it: the -o json contract, the table, exit codes, one-line errors, and
the workload modes (-f manifests, --from-dump) against images pushed to the reference registry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.registry.fixtures import WINDOWS_BUILDS
from tests.support.cli import run_cli
from tests.support.paths import ROOT


@pytest.fixture
def clean_env(tmp_path, monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setenv("DOCKER_CONFIG", str(tmp_path / "docker"))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


def test_the_json_contract(plain_registry, clean_env) -> None:
    host = plain_registry.host
    multi, linux = f"{host}/lib/multi:oci", f"{host}/lib/linux"
    result = run_cli("images", multi, linux, "--build", "ltsc2019", "--build", "10.0.20348.2700",
                     "--build", "ltsc2025", "--insecure-registry", host, "-o", "json")
    assert result.exit_code == 1, result.stderr  # the Linux-only image has no variant
    assert result.stderr == ""
    images = result.json["images"]
    assert [i["image"] for i in images] == [multi, linux]
    first = images[0]
    assert first["digest"] == plain_registry.seeded["lib"]["multi-oci"]
    assert first["platforms"][:3] == [{"os": "windows", "architecture": "amd64", "osVersion": v}
                                      for v in WINDOWS_BUILDS]
    assert {"os": "linux", "architecture": "arm64", "osVersion": None} in first["platforms"]
    assert [(v["build"], v["verdict"], v["variant"]) for v in first["verdicts"]] == [
        ("ltsc2019", "runs", WINDOWS_BUILDS[0]), ("10.0.20348.2700", "runs", WINDOWS_BUILDS[1]),
        ("ltsc2025", "runs", WINDOWS_BUILDS[2])]
    assert set(first["verdicts"][0]) == {"build", "verdict", "variant", "reason"}
    assert [v["verdict"] for v in images[1]["verdicts"]] == ["no-variant"] * 3
    assert images[1]["verdicts"][0]["reason"].startswith("not a Windows image")


def test_single_manifests_and_hyperv(plain_registry, clean_env) -> None:
    host = plain_registry.host
    result = run_cli("images", f"{host}/lib/single:ltsc2019", "--build", "ltsc2022", "--build", "ltsc2019",
                     "--insecure-registry", host, "-o", "json")
    assert result.exit_code == 0
    verdicts = result.json["images"][0]["verdicts"]
    assert verdicts[0]["verdict"] == "hyperv-only" and "runhcs-wcow-hypervisor" in verdicts[0]["reason"]
    digest = plain_registry.seeded["lib"]["ltsc2019-only"]
    assert verdicts[1] == {"build": "ltsc2019", "verdict": "runs", "variant": WINDOWS_BUILDS[0],
                           "reason": f"windows/amd64 {WINDOWS_BUILDS[0]} ({digest[:19]}) runs under process "
                                     "isolation on 10.0.17763"}


def test_the_table_names_the_chosen_variant(plain_registry, clean_env) -> None:
    host = plain_registry.host
    result = run_cli("images", f"{host}/lib/published:hello-world-latest", "--build", "ltsc2019",
                     "--build", "ltsc2025", "--insecure-registry", host)
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["IMAGE", "BUILD", "VERDICT", "VARIANT", "REASON"]
    assert lines[1].split()[1:4] == ["ltsc2019", "no-variant", "<none>"]
    assert lines[2].split()[1:4] == ["ltsc2025", "runs", "10.0.26100.33296"]


def test_an_unreadable_registry_is_unknown_with_its_reason(clean_env) -> None:
    from tests.registry.faults import dead_host

    dead = dead_host()
    result = run_cli("images", f"{dead}/app:1", "--build", "ltsc2022", "--insecure-registry", dead, "-o", "json")
    assert result.exit_code == 0
    verdict = result.json["images"][0]["verdicts"][0]
    assert verdict == {"build": "ltsc2022", "verdict": "unknown", "variant": None,
                       "reason": f"connection refused by {dead}"}
    assert result.json["images"][0]["digest"] is None


@pytest.mark.parametrize(("tag", "verdicts", "code"), [
    ("ltsc2019", [("ltsc2019", "runs"), ("ltsc2025", "hyperv-only")], 0),
    ("1.4.0-windowsservercore-ltsc2025", [("ltsc2019", "no-variant"), ("ltsc2025", "runs")], 1),
    ("10.0.20348.2700", [("ltsc2019", "no-variant"), ("ltsc2025", "runs")], 1),  # 2022's images run on 2025
])
def test_offline_a_tag_that_names_a_build_decides(clean_env, tag: str, verdicts: list, code: int) -> None:
    from tests.registry.faults import dead_host

    dead = dead_host()
    result = run_cli("images", f"{dead}/app:{tag}", "--build", "ltsc2019", "--build", "ltsc2025",
                     "--insecure-registry", dead, "-o", "json")
    assert result.exit_code == code, result.stdout
    found = result.json["images"][0]["verdicts"]
    assert [(v["build"], v["verdict"]) for v in found] == verdicts
    named = {"ltsc2019": 17763, "1.4.0-windowsservercore-ltsc2025": 26100, "10.0.20348.2700": 20348}[tag]
    assert all(v["reason"].endswith(f"(from the tag, which names build {named}: the registry could not be read: "
                                    f"connection refused by {dead})") for v in found)


@pytest.mark.parametrize(("argv", "message"), [
    (["images", "app:1"], "error: name the node builds to check with --build"),
    (["images", "app:1", "--build", "ltsc2030"], "error: unknown Windows build 'ltsc2030'"),
    (["images", "Bad Image", "--build", "ltsc2022"], "error: not an image reference: 'Bad Image'"),
    (["images", "UPPER/app:1", "--build", "ltsc2022"], "error: invalid repository name 'UPPER/app'"),
    (["images", "app:1", "--build", "ltsc2022", "--registry-mirror", "nope"], "error: --registry-mirror wants"),
    (["images", "app:1", "--build", "ltsc2022", "--registry-ca", "/no/such.pem"], "error: --registry-ca"),
    (["images", "app:1", "-f", "x.yaml"], "error: give images on the command line, or -f/--from-dump"),
    (["images", "-f", "x.yaml"], "error: -f checks manifests without a cluster"),
    (["images", "app:1", "--build", "ltsc2022", "--concurrency", "0"], "error: --concurrency must be 1"),
])
def test_bad_input_is_one_line_and_exit_2(argv, message, clean_env) -> None:
    result = run_cli(*argv)
    assert result.exit_code == 2
    assert result.stderr.startswith(message) and result.stderr.count("\n") == 1, result.stderr


WORKLOADS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {{name: web, namespace: shop, labels: {{app: web}}}}
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata: {{labels: {{app: web}}}}
    spec:
      nodeSelector: {{kubernetes.io/os: windows}}
      initContainers:
      - {{name: setup, image: "{host}/lib/single:ltsc2019"}}
      containers:
      - {{name: web, image: "{host}/lib/multi:docker"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: api, namespace: shop, labels: {{app: api}}}}
spec:
  selector: {{matchLabels: {{app: api}}}}
  template:
    metadata: {{labels: {{app: api}}}}
    spec:
      nodeSelector: {{kubernetes.io/os: windows, node.kubernetes.io/windows-build: "10.0.26100"}}
      containers:
      - {{name: api, image: "{host}/lib/single:ltsc2025"}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: linux-only, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: l}}}}
  template:
    metadata: {{labels: {{app: l}}}}
    spec:
      nodeSelector: {{kubernetes.io/os: linux}}
      containers:
      - {{name: x, image: "{host}/lib/linux"}}
"""


def _node(name: str, build: str) -> dict:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/os": "windows", "kubernetes.io/arch": "amd64",
                                                  "node.kubernetes.io/windows-build": build}},
            "status": {"nodeInfo": {"operatingSystem": "windows", "osImage": "Windows Server",
                                    "kernelVersion": f"{build}.1", "containerRuntimeVersion": "containerd://1.7.20",
                                    "kubeletVersion": "v1.31.0"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def test_manifests_are_checked_against_the_given_builds(plain_registry, clean_env) -> None:
    manifests = clean_env / "deploy.yaml"
    manifests.write_text(WORKLOADS.format(host=plain_registry.host))
    result = run_cli("images", "-f", str(manifests), "--build", "ltsc2019", "--build", "ltsc2022",
                     "--insecure-registry", plain_registry.host, "-o", "json")
    assert result.exit_code == 1, result.stderr  # the 2025-only image on 2019 and 2022
    workloads = {w["name"]: w for w in result.json["workloads"]}
    assert set(workloads) == {"web", "api"}  # the Linux deployment is not a Windows workload
    web = workloads["web"]["images"]
    assert [(i["container"], i["path"]) for i in web] == [
        ("web", "spec.template.spec.containers[0]"), ("setup", "spec.template.spec.initContainers[0]")]
    setup = next(i for i in web if i["container"] == "setup")
    assert [v["verdict"] for v in setup["verdicts"]] == ["runs", "hyperv-only"]
    api = workloads["api"]["images"][0]
    assert [v["verdict"] for v in api["verdicts"]] == ["no-variant", "no-variant"]


def test_a_dump_maps_each_workload_to_the_builds_of_its_nodes(plain_registry, clean_env) -> None:
    from kubectl_win.manifests.reader import read_objects

    manifests = clean_env / "deploy.yaml"
    manifests.write_text(WORKLOADS.format(host=plain_registry.host))
    from tests.support.kube_objects import deployment_pod

    items = [_node("win-2019", "10.0.17763"), _node("win-2025", "10.0.26100")]
    items += [o.obj for o in read_objects([str(manifests)])]
    web_spec = items[2]["spec"]["template"]["spec"]
    debug = deployment_pod("web", "x1y2z", dict(web_spec), node="win-2019")
    debug["spec"]["ephemeralContainers"] = [{"name": "debugger", "image": f"{plain_registry.host}/lib/linux"}]
    items.append(debug)
    dump = clean_env / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    result = run_cli("images", "--from-dump", str(dump), "--insecure-registry", plain_registry.host, "-o", "json")
    assert result.exit_code == 1  # the ephemeral container's Linux-only image
    web_images = next(w for w in result.json["workloads"] if w["name"] == "web")["images"]
    debugger = next(i for i in web_images if i["container"] == "debugger")
    assert debugger["path"] == "spec.ephemeralContainers[0]"
    assert [v["verdict"] for v in debugger["verdicts"]] == ["no-variant", "no-variant"]
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items[:-1]}))
    result = run_cli("images", "--from-dump", str(dump), "--insecure-registry", plain_registry.host, "-o", "json")
    assert result.exit_code == 0, result.stdout
    workloads = {w["name"]: w for w in result.json["workloads"]}
    assert workloads["web"]["nodes"] == ["win-2019", "win-2025"]
    assert workloads["api"]["nodes"] == ["win-2025"]  # its windows-build selector
    web = {i["container"]: i for i in workloads["web"]["images"]}
    assert [(v["build"], v["verdict"], v["nodes"]) for v in web["setup"]["verdicts"]] == [
        ("10.0.17763", "runs", ["win-2019"]), ("10.0.26100", "hyperv-only", ["win-2025"])]

    plan = run_cli("images", "--from-dump", str(dump), "--insecure-registry", plain_registry.host,
                   "--target-build", "ltsc2025", "-o", "json")
    assert plan.json["targetBuild"] == "ltsc2025"
    summary = plan.json["summary"]
    assert summary["namespaces"]["shop"] == {"runs": 2, "hyperv-only": 1, "no-variant": 0, "unknown": 0}
    assert summary["owners"]["shop/Deployment/web"] == {"runs": 1, "hyperv-only": 1, "no-variant": 0, "unknown": 0}

    table = run_cli("images", "--from-dump", str(dump), "--insecure-registry", plain_registry.host,
                    "--target-build", "ltsc2025", "-l", "app=web")
    assert table.exit_code == 0
    assert "Deployment/api" not in table.stdout
    assert "needs Hyper-V isolation or a rebuild" in table.stdout
    assert "NAMESPACE   RUNS   HYPERV-ONLY   REBUILD   UNKNOWN" in table.stdout


def test_help_and_completion_do_not_import_the_registry_client(tmp_path) -> None:
    import subprocess
    import sys

    code = ("import sys\nfrom kubectl_win.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "bad = sorted(m for m in sys.modules if m.startswith('kubectl_win.registry') or m in "
            "('ssl', 'http.client', 'kubernetes', 'kubectl_win.images.service'))\n"
            "open(sys.argv[0] + '.out', 'w').write(f'LOADED {bad}')\n")
    script = tmp_path / "probe.py"
    script.write_text(code)
    for argv in (["images", "--help"], ["completion", "__complete", "images", "--b"], ["--help"]):
        subprocess.run([sys.executable, str(script), *argv], cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert Path(f"{script}.out").read_text() == "LOADED []", argv


def test_a_live_cluster_is_only_read(plain_registry, clean_env, apiserver) -> None:
    from kubectl_win.manifests.reader import read_objects

    manifests = clean_env / "deploy.yaml"
    manifests.write_text(WORKLOADS.format(host=plain_registry.host))
    apiserver.put(_node("win-2019", "10.0.17763"), _node("win-2025", "10.0.26100"),
                  *[o.obj for o in read_objects([str(manifests)])])
    result = run_cli("images", "--kubeconfig", str(apiserver.kubeconfig), "-A", "--target-build", "ltsc2022",
                     "--insecure-registry", plain_registry.host, "-o", "json")
    assert result.exit_code == 1, result.stderr  # the 2025-only image cannot run on 2022
    targets = {w["name"]: [i["target"]["verdict"] for i in w["images"]] for w in result.json["workloads"]}
    assert targets == {"web": ["runs", "hyperv-only"], "api": ["no-variant"]}
    assert {method for method, _ in apiserver.server.requests} == {"GET"}


LEGACY = """\
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: legacy, namespace: shop}}
spec:
  selector: {{matchLabels: {{app: legacy}}}}
  template:
    metadata: {{labels: {{app: legacy}}}}
    spec:
      nodeSelector: {{kubernetes.io/os: windows}}
      tolerations: [{{operator: Exists}}]
      containers:
      - {{name: legacy, image: "{host}/lib/single:ltsc2025", resources: {{limits: {{memory: 1Gi}}}}}}
"""


def test_doctor_check_images_and_a_saved_dump_reproduce_offline(plain_registry, clean_env) -> None:
    from kubectl_win.manifests.reader import read_objects

    manifests = clean_env / "deploy.yaml"
    manifests.write_text(WORKLOADS.format(host=plain_registry.host) + LEGACY.format(host=plain_registry.host))
    items = [_node("win-2019", "10.0.17763"), _node("win-2025", "10.0.26100")]
    items += [o.obj for o in read_objects([str(manifests)])]
    dump = clean_env / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    offline = run_cli("doctor", "workloads", "--from-dump", str(dump), "-o", "json")
    assert "image-no-variant-for-node" not in {f["id"] for f in offline.json["findings"]}

    saved = clean_env / "saved.json"
    checked = run_cli("doctor", "workloads", "--from-dump", str(dump), "--check-images", "--insecure-registry",
                      plain_registry.host, "--save-dump", str(saved), "-o", "json")
    found = [f for f in checked.json["findings"] if f["id"] == "image-no-variant-for-node"]
    assert [(f["object"]["name"], f["severity"]) for f in found] == [("legacy", "error")], checked.stdout
    assert "node win-2019 (build 10.0.17763)" in found[0]["message"]
    assert "only newer Windows builds (10.0.26100.1742)" in found[0]["message"]
    fix = json.dumps(found[0]["fix"])
    assert "node.kubernetes.io/windows-build" in fix and "10.0.26100" in fix

    header = next(d for d in [json.loads(saved.read_text())] if "kubectlWin" in d)["kubectlWin"]
    assert set(header["images"]) == {f"{plain_registry.host}/lib/{n}" for n in
                                     ("single:ltsc2019", "multi:docker", "single:ltsc2025")}
    replay = run_cli("doctor", "workloads", "--from-dump", str(saved), "-o", "json")
    assert [f for f in replay.json["findings"] if f["id"] == "image-no-variant-for-node"] == found
    # images --from-dump answers from the recorded platforms without reading a registry.
    plan = run_cli("images", "--from-dump", str(saved), "--target-build", "ltsc2025", "-o", "json")
    assert plan.exit_code == 0 and plan.json["summary"]["namespaces"]["shop"]["unknown"] == 0


def test_doctor_check_images_decides_a_pull_failure_the_message_leaves_open(plain_registry, clean_env) -> None:
    """Docker's "no matching manifest for windows/amd64 10.0.17763" does not say whether the tag has any Windows
    entry; the registry does: offline the answer is unsure and names --check-images, with it the cause."""
    from tests.support.kube_objects import event, node, pod, windows_spec

    image = f"{plain_registry.host}/lib/linux:latest"
    text = "no matching manifest for windows/amd64 10.0.17763 in the manifest list entries"
    items = [node("win-0", build=17763), pod("web", windows_spec(image), node="win-0"),
             event(("Pod", "shop", "web"), "Failed", text, host="win-0")]
    dump = clean_env / "cluster.json"
    dump.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))

    def answer(*flags: str) -> dict:
        result = run_cli("doctor", "--from-dump", str(dump), *flags, "-o", "json")
        return next(f for f in result.json["findings"] if f["id"] == "symptom-no-matching-platform")

    offline = answer()
    assert offline["confidence"] == "unsure" and "--check-images" in offline["fix"]["note"]
    read = answer("--check-images", "--insecure-registry", plain_registry.host)
    assert read["confidence"] == "cause", read
    assert f"The registry says of {image}: not a Windows image (only linux/amd64" in read["fix"]["note"]


def test_explain_check_images_reports_with_file_and_line_in_sarif(plain_registry, clean_env) -> None:
    manifests = clean_env / "deploy"
    manifests.mkdir()
    (manifests / "apps.yaml").write_text(WORKLOADS.format(host=plain_registry.host))
    result = run_cli("explain", "-f", str(manifests), "--check-images", "--build", "ltsc2022",
                     "--insecure-registry", plain_registry.host, "-o", "json")
    assert result.exit_code == 1, result.stderr
    found = [(f["id"], f["object"]["name"], f["line"]) for f in result.json["findings"] if f["id"].startswith("image-")]
    assert found == [("image-hyperv-only-for-build", "web", 11), ("image-no-variant-for-build", "api", 25)]
    pinned = run_cli("explain", "-f", str(manifests), "--check-images", "--insecure-registry", plain_registry.host,
                     "-o", "json")  # only api pins a build (10.0.26100), and its image has it
    assert [f for f in pinned.json["findings"] if f["id"].startswith("image-")] == []
    sarif = json.loads(run_cli("explain", "-f", str(manifests), "--check-images", "--build", "ltsc2019",
                               "--insecure-registry", plain_registry.host, "-o", "sarif").stdout)
    results = [r for r in sarif["runs"][0]["results"] if r["ruleId"] == "image-no-variant-for-build"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in results] == [25]
    assert "image-no-variant-for-build" in {r["id"] for r in sarif["runs"][0]["tool"]["driver"]["rules"]}
    bad = run_cli("explain", "--check-images", "spec.containers")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --check-images and --build go with -f PATH")


def test_scaffold_check_image_picks_the_tag_that_has_the_build(plain_registry, clean_env) -> None:
    host = plain_registry.host
    for tag, build in (("1.0-windowsservercore-ltsc2019", WINDOWS_BUILDS[0]),
                       ("1.0-windowsservercore-ltsc2022", WINDOWS_BUILDS[1]),
                       ("2.0-nanoserver-ltsc2022", WINDOWS_BUILDS[1])):
        plain_registry.push_image("lib/app", tag, "windows", "amd64", build)
    given = f"{host}/lib/app:1.0-windowsservercore-ltsc2019"
    result = run_cli("scaffold", "deployment", "web", "--image", given, "--windows-build", "ltsc2022",
                     "--check-image", "--insecure-registry", host)
    assert result.exit_code == 0, result.stderr
    assert f"image: {host}/lib/app:1.0-windowsservercore-ltsc2022" in result.stdout
    assert f"picked {host}/lib/app:1.0-windowsservercore-ltsc2022: its manifest has {WINDOWS_BUILDS[1]}" \
        in result.stderr
    kept = run_cli("scaffold", "deployment", "web", "--image", given, "--windows-build", "ltsc2019",
                   "--check-image", "--insecure-registry", host)
    assert f"image: {given}" in kept.stdout and "picked" not in kept.stderr
    newer = run_cli("scaffold", "deployment", "web", "--image", given, "--windows-build", "ltsc2025",
                    "--check-image", "--insecure-registry", host)  # a 2025 node runs 2022 images
    assert f"image: {host}/lib/app:1.0-windowsservercore-ltsc2022" in newer.stdout
    missing = run_cli("scaffold", "deployment", "web", "--image", f"{host}/lib/app:nope", "--windows-build",
                      "ltsc2022", "--check-image", "--insecure-registry", host)
    assert missing.exit_code == 0 and f"image: {host}/lib/app:nope" in missing.stdout
    assert "not found: manifest lib/app:nope" in missing.stderr


def test_pull_secrets_are_used_only_with_the_flag_and_never_shown(token_registry, clean_env, apiserver) -> None:
    import base64

    from tests.registry.tokens import USERS

    host = token_registry.host
    auth = base64.b64encode(f"reader:{USERS['reader']}".encode()).decode()
    config = json.dumps({"auths": {host: {"auth": auth}}}).encode()
    secret = {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/dockerconfigjson",
              "metadata": {"name": "regcred", "namespace": "shop"},
              "data": {".dockerconfigjson": base64.b64encode(config).decode()}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "private", "namespace": "shop"},
                  "spec": {"selector": {"matchLabels": {"app": "p"}}, "template": {
                      "metadata": {"labels": {"app": "p"}},
                      "spec": {"nodeSelector": {"kubernetes.io/os": "windows"},
                               "imagePullSecrets": [{"name": "regcred"}],
                               "containers": [{"name": "p", "image": f"{host}/private/single:ltsc2019"}]}}}}
    apiserver.put(_node("win-2019", "10.0.17763"), secret, deployment)
    argv = ["images", "--kubeconfig", str(apiserver.kubeconfig), "-n", "shop", "--registry-ca",
            str(token_registry.ca_cert), "-o", "json"]
    without = run_cli(*argv)
    verdict = without.json["workloads"][0]["images"][0]["verdicts"][0]
    # Refused by the registry, the verdict comes from the tag alone (ltsc2019 on a 2019 node) and says so.
    assert verdict["variant"] is None and "unauthorized" in verdict["reason"], verdict
    with_secrets = run_cli(*argv, "--pull-secrets")
    read = with_secrets.json["workloads"][0]["images"][0]["verdicts"][0]
    assert read["verdict"] == "runs" and read["variant"] is not None, with_secrets.stderr  # from the manifest
    assert USERS["reader"] not in with_secrets.stdout + with_secrets.stderr and auth not in with_secrets.stdout
    bad = run_cli("images", "app:1", "--build", "ltsc2022", "--pull-secrets")
    assert bad.exit_code == 2 and bad.stderr.startswith("error: --pull-secrets reads Secrets from the live cluster")
