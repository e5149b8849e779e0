"""What ``make run`` starts (honcho over the Procfile), on a port of one's choosing: once
the web server answers, the address and the logins are printed again; a login works in a
real browser; a refused page is not logged as a fault; Ctrl-C stops every process cleanly,
none killed, and nothing warns of a missing broker host."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.contrib.auth.hashers import PBKDF2PasswordHasher

from dashboard.demo import DemoCredentials, credentials_save
from dashboard.settings.base import BASE_DIR
from gating.roles import Role
from tests.browser.helpers import PASSWORD
from tests.factories import UserFactory
from tests.processes import database_url, free_port


def _wait_for(log: Path, pattern: str, process: subprocess.Popen, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = log.read_text()
        if re.search(pattern, text):
            return text
        assert process.poll() is None, f"make run's processes ended early:\n{text[-3000:]}"
        time.sleep(0.5)
    raise AssertionError(f"{pattern!r} never showed:\n{log.read_text()[-3000:]}")


def test_make_run_serves_on_the_port_asked_and_stops_cleanly(browser, transactional_db, tmp_path):
    port = free_port()
    var = tmp_path / "var"
    credentials_save(DemoCredentials({"lena": PASSWORD}, "token-1"), var / "demo-credentials.json")
    reviewer = UserFactory(role=Role.REVIEWER, username="rita")
    # Hashed as make run's settings can check it (the tests' own hash with MD5, for speed).
    reviewer.password = PBKDF2PasswordHasher().encode(PASSWORD, "make-run-test-salt")
    reviewer.save(update_fields=["password"])
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "PORT"}}
    env |= {
        "DATABASE_URL": database_url(),
        "GATEHOUSE_VAR_DIR": str(var),
        "GATEHOUSE_PORT": str(port),
        "DJANGO_SETTINGS_MODULE": "dashboard.settings.base",
    }
    honcho = str(Path(sys.executable).with_name("honcho"))
    log = tmp_path / "run.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [honcho, "start", "-f", "Procfile", "-p", str(port)],
            cwd=BASE_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's Ctrl-C reaches
        )
    try:
        # Printed once the server answers, after the start-up lines.
        said = _wait_for(log, rf"Gatehouse demo at http://127\.0\.0\.1:{port}\n", process, 120)
        assert re.search(r"ready\.1 +\| +lena +password pw-for-tests", said)

        page = browser.new_page(base_url=f"http://127.0.0.1:{port}")
        page.goto("/login/")
        page.fill("#id_username", reviewer.username)
        page.fill("#id_password", PASSWORD)
        page.click("form[action='/login/'] button[type=submit]")
        page.wait_for_url(f"http://127.0.0.1:{port}/")
        assert page.goto("/dashboard/drift/").status == 403
        page.close()
    finally:
        os.killpg(process.pid, signal.SIGINT)  # Ctrl-C, to the whole group
        process.wait(timeout=60)

    said = log.read_text()
    assert "SIGKILL" not in said, said[-3000:]
    stopped = re.findall(r"(\w+)\.1 stopped \(rc=(-?\d+)\)", said)
    assert {name for name, _ in stopped} == {"web", "worker", "beat", "relay", "ready"}
    assert "No hostname was supplied" not in said
    # The refused page is in the access log, and nothing logged it as a fault.
    assert "GET /dashboard/drift/ 403 " in said
    assert "Traceback" not in said and "Forbidden (Permission denied)" not in said
