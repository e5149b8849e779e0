"""The web server as each deployment starts it: gunicorn writes nothing outside the app.

gunicorn 27 opens a control socket under the user's home by default; every way Gatehouse
starts gunicorn (the Procfile, the Dockerfile and docker-compose.yml) turns it off.
"""

import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dashboard.settings.base import BASE_DIR
from tests.processes import free_port


def _web_commands() -> dict[str, list[str]]:
    procfile = dict(
        line.split(": ", 1) for line in (BASE_DIR / "Procfile").read_text().splitlines() if line
    )
    [dockerfile_cmd] = [
        line.removeprefix("CMD ")
        for line in (BASE_DIR / "Dockerfile").read_text().splitlines()
        if line.startswith("CMD ")
    ]
    # The compose file's commands are JSON arrays, each on its own line.
    [compose_cmd] = [
        line.strip().removeprefix("command: ")
        for line in (BASE_DIR / "docker-compose.yml").read_text().splitlines()
        if line.strip().startswith('command: ["gunicorn"')
    ]
    return {
        "Procfile": shlex.split(procfile["web"]),
        "Dockerfile": json.loads(dockerfile_cmd),
        "docker-compose.yml": json.loads(compose_cmd),
    }


@pytest.mark.parametrize("where", ["Procfile", "Dockerfile", "docker-compose.yml"])
def test_every_deployment_turns_gunicorns_control_socket_off(where):
    command = _web_commands()[where]
    assert Path(command[0]).name == "gunicorn"
    assert "--no-control-socket" in command


def test_the_procfiles_web_server_writes_nothing_in_the_home_directory(tmp_path):
    command = _web_commands()["Procfile"]
    port = free_port()
    command[command.index("--bind") + 1] = f"127.0.0.1:{port}"
    command[command.index("--workers") + 1] = "1"
    command[0] = str(Path(sys.executable).with_name("gunicorn"))
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "dashboard.settings.base",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "SECRET_KEY": "test",
    }
    server = subprocess.Popen(
        command, cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert server.poll() is None, server.stderr.read().decode()
                time.sleep(0.2)
        else:
            pytest.fail("gunicorn did not listen within 30 s")
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert list(home.iterdir()) == []
