"""deploy/: the systemd units (systemd-analyze verify where present), the compose file, the Dockerfile and the
reverse-proxy recipes. No container engine can pull images on the test machines (no registry access), so the
container files are checked statically: they parse, name the right command, ports, variables and health checks."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rldp.aggregator.services.config import _ENV

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
RLDP = Path(sys.executable).with_name("rldp")


@pytest.mark.parametrize("units", [("rldp.service",), ("rldp-backup.service", "rldp-backup.timer")])
def test_systemd_units_verify(tmp_path, units):
    if shutil.which("systemd-analyze") is None:
        pytest.skip("systemd-analyze is not installed here")
    if not RLDP.exists():
        pytest.skip(f"no rldp command next to {sys.executable}")
    paths = []
    for name in units:  # ExecStart must exist: point it at this environment's rldp
        text = (DEPLOY / name).read_text().replace("/opt/rldp/bin/rldp", str(RLDP))
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *paths], capture_output=True, text=True, timeout=60, check=False
    )
    # a misspelt key is only a warning ("Unknown key …, ignoring"): any output is a failure
    assert done.returncode == 0 and not done.stderr.strip() and not done.stdout.strip(), done.stderr


def test_systemd_unit_is_hardened():
    unit = (DEPLOY / "rldp.service").read_text()
    for setting in (
        "DynamicUser=yes",
        "StateDirectory=rldp",
        "ProtectSystem=strict",
        "ProtectHome=yes",
        "PrivateTmp=yes",
        "NoNewPrivileges=yes",
        "CapabilityBoundingSet=\n",
        "RLDP_DATABASE_URL=sqlite:////var/lib/rldp/rldp.sqlite3",
    ):
        assert setting in unit, setting
    assert re.search(r"^ExecStart=/opt/rldp/bin/rldp serve --host 127\.0\.0\.1 ", unit, re.M)


def test_compose_file_wires_the_aggregator_to_postgresql():
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    db, app = compose["services"]["db"], compose["services"]["rldp"]
    assert db["image"].startswith("postgres:") and "pg_isready" in " ".join(db["healthcheck"]["test"])
    assert app["depends_on"]["db"]["condition"] == "service_healthy"
    assert app["build"]["dockerfile"] == "deploy/Dockerfile" and (DEPLOY / app["build"]["context"]).is_dir()
    env = app["environment"]
    assert set(env) <= set(_ENV.values())  # only variables the service reads
    assert re.fullmatch(r"postgresql://rldp:\$\{POSTGRES_PASSWORD[^}]*\}@db:5432/rldp", env["RLDP_DATABASE_URL"])
    assert env["RLDP_DATABASE_URL"].split("@db:5432/")[1] == db["environment"]["POSTGRES_DB"]
    assert "RLDP_ADMIN_TOKEN_SHA256" in env and "RLDP_ADMIN_TOKEN" not in env  # hashes only, never plain tokens
    assert app["ports"] == ["127.0.0.1:8000:8000"]
    assert "http://127.0.0.1:8000/healthz" in " ".join(app["healthcheck"]["test"])


def test_dockerfile_runs_rldp_serve_with_a_health_check():
    text = (DEPLOY / "Dockerfile").read_text()
    cmd = re.search(r"^CMD (\[.*\])$", text, re.M)
    assert cmd is not None
    import json

    argv = json.loads(cmd.group(1))
    assert argv[:2] == ["rldp", "serve"] and argv[argv.index("--port") + 1] == "8000" and "0.0.0.0" in argv
    assert re.search(r"^EXPOSE 8000$", text, re.M) and "/healthz" in text and re.search(r"^USER rldp$", text, re.M)
    root = DEPLOY.parent
    for source in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M):  # every file it copies exists
        for name in source.split():
            assert (root / name).exists(), name


def test_proxy_recipes_forward_to_the_service_and_keep_its_body_limit():
    nginx, caddy = (DEPLOY / "nginx.conf").read_text(), (DEPLOY / "Caddyfile").read_text()
    assert "proxy_pass http://127.0.0.1:8000;" in nginx and "client_max_body_size 32m;" in nginx
    assert "ssl_certificate " in nginx and "X-Request-Id" in nginx
    assert "reverse_proxy 127.0.0.1:8000" in caddy and "max_size 32MB" in caddy


def _rldp_argv(line: str) -> list[str]:
    """The rldp command line in a unit's ExecStart (possibly inside ``sh -c 'exec …'``), from ``rldp`` on."""
    import shlex

    argv = shlex.split(line)
    if argv[:2] == ["/bin/sh", "-c"]:
        argv = shlex.split(argv[2].replace("%%", "%"))
        argv = argv[1:] if argv[0] == "exec" else argv
    assert argv[0].endswith("/rldp"), line
    return ["rldp", *argv[1:]]


def test_every_rldp_command_line_parses_with_rldps_own_parser():
    from rldp.cli import build_parser

    text = (DEPLOY / "Dockerfile").read_text()
    import json

    lines = [json.loads(re.search(r"^CMD (\[.*\])$", text, re.M).group(1))]  # type: ignore[union-attr]
    for name in ("rldp.service", "rldp-backup.service"):
        lines += [_rldp_argv(m) for m in re.findall(r"^ExecStart=(.+)$", (DEPLOY / name).read_text(), re.M)]
    assert [argv[1] for argv in lines] == ["serve", "serve", "backup"]
    for argv in lines:
        args = build_parser(argv[1]).parse_args(argv[1:])  # an unknown flag or value: SystemExit
        assert callable(args.func), argv
    restore = re.search(r"rldp restore (.+?)`", (DEPLOY / "README.md").read_text().replace("\n", " "))
    assert restore is not None and build_parser("restore").parse_args(["restore", *restore.group(1).split()]).force


def test_env_example_and_compose_name_only_settings_that_exist():
    names = re.findall(r"^#? ?([A-Z][A-Z0-9_]*)=", (DEPLOY / "rldp.env.example").read_text(), re.M)
    assert names and all(n in _ENV.values() or n.startswith("PG") for n in names), names
    yaml = pytest.importorskip("yaml")
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    volume = compose["services"]["rldp"]["volumes"][0].split(":")
    assert volume[1] == "/var/lib/rldp" and volume[0] in compose["volumes"]  # named: `compose run` shares it
    assert re.search(r"^VOLUME /var/lib/rldp$", (DEPLOY / "Dockerfile").read_text(), re.M)


def test_dockerfile_copies_every_package_directory():
    import tomllib

    root = DEPLOY.parent
    project = tomllib.loads((root / "pyproject.toml").read_text())
    text = (DEPLOY / "Dockerfile").read_text()
    copied = {name.rstrip("/") for src in re.findall(r"^COPY (?!--from)(.+) \S+$", text, re.M) for name in src.split()}
    for package, folder in project["tool"]["setuptools"]["package-dir"].items():
        assert folder in copied, f"{package} lives in {folder}/, which the Dockerfile does not copy"
    for extra in ("readme", "license-files"):
        value = project["project"][extra]
        for name in [value] if isinstance(value, str) else value:
            assert name in copied, name


def test_proxy_recipes_limit_report_uploads_per_source_address():
    """Report uploads are anonymous: both recipes rate-limit POST /v1/reports per client address."""
    nginx, caddy = (DEPLOY / "nginx.conf").read_text(), (DEPLOY / "Caddyfile").read_text()
    zone = re.search(r"limit_req_zone \$binary_remote_addr zone=(\w+):\d+m rate=(\d+)r/s;", nginx)
    assert zone, "nginx: a per-address limit_req_zone"
    block = re.search(r"location = /v1/reports \{(.*?)\n    \}", nginx, re.S)
    assert block and f"limit_req zone={zone.group(1)}" in block.group(1) and "proxy_pass" in block.group(1)
    assert "rate_limit {" in caddy and "path /v1/reports" in caddy and "key {remote_host}" in caddy
