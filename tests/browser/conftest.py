"""A real browser against the live server: Debian's chromium driven by Playwright.

Playwright's own browser download is not used; CI installs the distribution's package
(see .ci/run). Without it the browser tests skip here and fail under CI=true.
"""

import os
from pathlib import Path

import environ
import pytest
from django.conf import settings

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


@pytest.fixture(scope="module")
def browser():
    if not CHROMIUM.exists():
        reason = (
            f"the browser tests need Debian's chromium at {CHROMIUM} (apt-get install chromium)"
        )
        # CI read as the test settings read it, so CI=true never silently skips the browser.
        if environ.Env().bool("CI", default=False):
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an asyncio loop running in this thread, which makes Django
    # refuse ORM calls from the test itself. Only the tests' own seeding and assertions run
    # here (the live server has its own thread), and only while the browser is up.
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def problems() -> list[str]:
    """What must not happen in the browser: dialogs, script errors, requests elsewhere."""
    return []


@pytest.fixture
def page(browser, live_server, transactional_db, problems):
    context = browser.new_context(base_url=live_server.url)
    page = context.new_page()
    page.set_default_timeout(10_000)

    def on_dialog(dialog):
        problems.append(f"a {dialog.type} dialog opened: {dialog.message!r}")
        dialog.dismiss()

    def on_request(request):
        if not request.url.startswith(live_server.url):
            problems.append(f"a request left the server: {request.url}")

    page.on("dialog", on_dialog)

    def on_console(message):
        # A resource the page could not load (a missing icon, script or style) shows here.
        if message.type == "error":
            problems.append(f"console error: {message.text} ({message.location.get('url')})")

    page.on("pageerror", lambda error: problems.append(f"script error: {error}"))
    page.on("console", on_console)
    page.on("request", on_request)
    yield page
    context.close()


@pytest.fixture
def screenshot_dir() -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS
