"""deploy/: the Containerfile, the compose file, the Kubernetes manifests and the systemd units, as
far as this machine can check them without a container engine or a cluster:

- `kubectl kustomize` renders deploy/kubernetes, and every rendered object validates against
  Kubernetes' own schemas (`kubernetes-validate`, strict: an unknown field fails);
- the probes send a Host header that ALLOWED_HOSTS accepts, the worker's grace period covers its
  drain, a beat rollout starts the new pod first (the beat lock makes that safe), every container
  requests resources, the budgets select real pods;
- `systemd-analyze verify` accepts the units (with the paths pointed at this checkout);
- the container's entry point runs, for each role, the command the production smoke run executes
  (smoke/__main__.py), and its web role serves /readyz from this checkout.
"""

import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import kubernetes_validate
import pytest
import requests
import yaml

from smoke.__main__ import BEAT_COMMAND, MIGRATE_COMMAND, WEB_COMMAND, WORKER_COMMAND
from tests.support.outages import free_port
from webhooks.conf import DEFAULTS as WEBHOOK_DEFAULTS

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
ROLES = {"web", "worker", "beat", "migrate"}


def kubectl() -> str:
    found = shutil.which("kubectl")
    assert found, "kubectl is needed to render deploy/kubernetes (`make deploy-tools` installs Debian's)"
    return found


@pytest.fixture(scope="module")
def rendered() -> list[dict]:
    output = subprocess.run(
        [kubectl(), "kustomize", str(DEPLOY / "kubernetes")], check=True, capture_output=True, text=True, timeout=60
    ).stdout
    return [document for document in yaml.safe_load_all(output) if document]


def of_kind(rendered, kind: str) -> dict[str, dict]:
    return {item["metadata"]["name"]: item for item in rendered if item["kind"] == kind}


def pod_specs(rendered) -> dict[str, dict]:
    workloads = {**of_kind(rendered, "Deployment"), **of_kind(rendered, "Job")}
    return {name: item["spec"]["template"]["spec"] for name, item in workloads.items()}


def test_the_kustomization_renders_every_part(rendered):
    kinds = sorted((item["kind"], item["metadata"]["name"]) for item in rendered)
    names = {name for _, name in kinds}

    assert {"scheduling-web", "scheduling-worker", "scheduling-beat", "scheduling-migrate"} <= names
    assert [kind for kind, _ in kinds].count("PodDisruptionBudget") == 2
    assert all(item["metadata"].get("namespace") == "scheduling" for item in rendered if item["kind"] != "Namespace")


@pytest.mark.parametrize("version", ["1.30.0", kubernetes_validate.latest_version()])
def test_every_rendered_object_validates_against_the_kubernetes_schema(rendered, version):
    for item in rendered:
        kubernetes_validate.validate(item, version, strict=True)


def test_an_invalid_manifest_is_refused_by_the_validator(rendered):
    broken = yaml.safe_load(yaml.safe_dump(of_kind(rendered, "Deployment")["scheduling-web"]))
    broken["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "eight thousand"

    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, kubernetes_validate.latest_version(), strict=True)


def test_probes_send_a_host_that_allowed_hosts_accepts(rendered):
    (config,) = of_kind(rendered, "ConfigMap").values()
    allowed = config["data"]["ALLOWED_HOSTS"].split(",")
    web = pod_specs(rendered)["scheduling-web"]["containers"][0]
    probes = [web[name] for name in ("readinessProbe", "livenessProbe", "startupProbe")]

    assert web["readinessProbe"]["httpGet"]["path"] == "/readyz"
    for probe in probes:
        hosts = [header["value"] for header in probe["httpGet"]["httpHeaders"] if header["name"] == "Host"]
        assert hosts and hosts[0] in allowed


def test_grace_periods_cover_the_drains_and_a_beat_rollout_starts_the_new_pod_first(rendered):
    specs = pod_specs(rendered)
    drain = WEBHOOK_DEFAULTS["CONNECT_TIMEOUT_SECONDS"] + WEBHOOK_DEFAULTS["TIMEOUT_SECONDS"] + 5  # webhooks.tasks
    beat = of_kind(rendered, "Deployment")["scheduling-beat"]

    assert specs["scheduling-worker"]["terminationGracePeriodSeconds"] >= drain
    assert specs["scheduling-web"]["terminationGracePeriodSeconds"] >= 30 + 5  # gunicorn's graceful timeout
    # The beat lock (core/beat.py) lets the new pod wait beside the old one: no gap in a rollout.
    assert beat["spec"]["replicas"] == 1
    assert beat["spec"]["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}


def test_every_container_requests_resources_runs_unprivileged_and_plays_one_role(rendered):
    for name, spec in pod_specs(rendered).items():
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        for container in spec.get("initContainers", []) + spec["containers"]:
            assert {"cpu", "memory"} <= set(container["resources"]["requests"]), name
            assert container["securityContext"]["allowPrivilegeEscalation"] is False
        roles = {container["args"][0] for container in spec["containers"]}
        assert roles <= ROLES, name


def test_the_disruption_budgets_select_the_web_and_worker_pods(rendered):
    deployments = of_kind(rendered, "Deployment")
    for budget in of_kind(rendered, "PodDisruptionBudget").values():
        selector = budget["spec"]["selector"]["matchLabels"]
        matched = [
            name
            for name, item in deployments.items()
            if selector.items() <= item["spec"]["template"]["metadata"]["labels"].items()
        ]
        assert matched == [budget["metadata"]["name"]]
    assert (
        of_kind(rendered, "PodDisruptionBudget")["scheduling-web"]["spec"]["minAvailable"]
        < (deployments["scheduling-web"]["spec"]["replicas"])
    )


def test_systemd_accepts_the_units():
    with tempfile.TemporaryDirectory() as directory:
        for unit in sorted((DEPLOY / "systemd").glob("*.service")):
            text = unit.read_text().replace("/srv/scheduling/venv", str(Path(sys.executable).parents[1]))
            (Path(directory) / unit.name).write_text(text.replace("/srv/scheduling/app", str(ROOT)))
        units = sorted(str(path) for path in Path(directory).glob("*.service"))
        result = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True, timeout=60)

    assert len(units) == 4
    assert result.returncode == 0 and result.stdout + result.stderr == "", result.stdout + result.stderr


def entrypoint_commands() -> dict[str, list[str]]:
    """role -> the words the entry point execs, its variables at their defaults."""
    text = (DEPLOY / "entrypoint.sh").read_text()
    commands = {}
    for role, line in re.findall(r"^(\w+)\)\n\s+exec (.+)$", text, flags=re.MULTILINE):
        line = re.sub(r"\$\{(\w+):-([^}$]*)\}", r"\2", line)
        commands[role] = shlex.split(line)
    return commands


def smoke(command: str, **replace) -> list[str]:
    return [replace.get(word, word) for word in shlex.split(command)]


def test_the_entry_point_runs_the_commands_of_the_smoke_run():
    commands = entrypoint_commands()

    assert set(commands) == ROLES
    assert commands["web"] == smoke(WEB_COMMAND, **{"127.0.0.1:8000": "0.0.0.0:8000"})  # all interfaces in a pod
    assert commands["worker"][:-2] == smoke(WORKER_COMMAND) and commands["worker"][-2] == "-n"
    assert commands["beat"] == [*smoke(BEAT_COMMAND), "--schedule", "/tmp/celerybeat-schedule"]
    assert commands["migrate"] == smoke(MIGRATE_COMMAND)


def test_the_systemd_units_run_the_commands_of_the_smoke_run():
    def exec_start(unit: str) -> list[str]:
        text = (DEPLOY / "systemd" / f"scheduling-{unit}.service").read_text()
        words = shlex.split(re.search(r"^ExecStart=(.+)$", text, flags=re.MULTILINE).group(1))
        return [words[0].removeprefix("/srv/scheduling/venv/bin/"), *words[1:]]

    assert exec_start("web") == smoke(WEB_COMMAND)
    assert exec_start("worker")[:-2] == smoke(WORKER_COMMAND)
    assert exec_start("beat")[:-2] == smoke(BEAT_COMMAND)
    assert exec_start("migrate") == smoke(MIGRATE_COMMAND)


def test_the_compose_file_runs_each_role_from_one_image():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    roles = {name: service["command"] for name, service in services.items() if "command" in service}

    assert roles == {role: [role] for role in ROLES}
    assert {services[role]["build"]["dockerfile"] for role in ROLES} == {"deploy/Containerfile"}
    assert services["worker"]["stop_grace_period"] == "60s"
    assert services["web"]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_the_containerfile_is_slim_unprivileged_and_installs_requirements_txt_alone():
    text = (DEPLOY / "Containerfile").read_text()
    instructions = [line for line in text.splitlines() if line and not line.startswith((" ", "#"))]

    assert re.fullmatch(r"FROM \S+/python:3\.\d+-slim(-\w+)?", instructions[0])
    assert "pip install --require-hashes -r /tmp/requirements.txt" in text
    assert "requirements-dev" not in text
    assert re.search(r"^USER 10001(:10001)?$", text, flags=re.MULTILINE)
    assert 'ENTRYPOINT ["/srv/scheduling/deploy/entrypoint.sh"]' in text
    assert instructions[-1] == 'CMD ["web"]'


@pytest.mark.django_db(transaction=True)
def test_the_entry_points_web_role_serves_readyz_from_this_checkout(live_database_url):
    port = free_port()
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "DATABASE_URL": live_database_url,
        "SECRET_KEY": "entrypoint-test-secret-key-not-for-production-0123456789",
        "BIND_ADDRESS": f"127.0.0.1:{port}",
        "WEB_WORKERS": "1",
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    process = subprocess.Popen(
        [str(DEPLOY / "entrypoint.sh"), "web"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        answer = None
        for _ in range(600):
            try:
                answer = requests.get(f"http://127.0.0.1:{port}/readyz", headers={"Host": "localhost"}, timeout=30)
                break
            except requests.ConnectionError:
                assert process.poll() is None, "gunicorn exited"
                time.sleep(0.1)
        assert answer is not None and answer.status_code == 200
        assert answer.json()["checks"]["database"] == "ok"
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)


@pytest.fixture
def live_database_url():
    from django.db import connection

    database = connection.settings_dict
    return f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}"
