"""Take docs/dashboards.md's screenshots from a running demo (`make run`), as its admin.

    make run PORT=8000          # prints the admin's password once the server answers
    .venv/bin/python docs/screenshots.py --port 8000 --password <admin's password>

Uses Debian's chromium through Playwright (the browser tests' own), at 1280 px wide, over the
last 30 days, and writes docs/img/<page>.png, the whole page (and scorers.png, one chart),
and review.png: the next summarize item in the queue, which the admin then gives back (s).
"""

import argparse
from pathlib import Path

from playwright.sync_api import sync_playwright

IMG = Path(__file__).resolve().parent / "img"
RANGE = "range=30d"
PAGES = {
    "overview": f"/?{RANGE}",
    "queue": f"/dashboard/queue/?{RANGE}",
    "drift": f"/dashboard/drift/?{RANGE}",
    "validators": f"/dashboard/validators/?{RANGE}",
    "reviewers": f"/dashboard/reviewers/?{RANGE}",
    "calibration": f"/dashboard/calibration/?{RANGE}",
    "alerts": "/dashboard/alerts/",
    "outputs": f"/dashboard/outputs/?{RANGE}",
    "thresholds": f"/dashboard/thresholds/?{RANGE}",
    "rubric": "/rubrics/summarize/",
    "datasets": "/dashboard/datasets/",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    base = f"http://127.0.0.1:{args.port}"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=args.chromium)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(f"{base}/login/")
        page.fill("input[name=username]", args.username)
        page.fill("input[name=password]", args.password)
        page.click("form [type=submit]")
        page.wait_for_load_state()
        for name, path in PAGES.items():
            page.goto(base + path)
            # Charts draw after the page loads.
            page.wait_for_load_state("networkidle")
            page.wait_for_timeout(500)
            page.screenshot(path=IMG / f"{name}.png", full_page=True)
            print(IMG / f"{name}.png")
            if name == "calibration":
                page.locator("#scorers-vs-truth").screenshot(path=IMG / "scorers.png")
        # A summarize item: its task type has the demo's rubric, shown beside the item.
        page.goto(f"{base}/queue/?task_type=summarize")
        page.keyboard.press("n")
        page.wait_for_url("**/review/**")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=IMG / "review.png", full_page=True)
        print(IMG / "review.png")
        page.keyboard.press("s")  # the item goes back to the queue
        page.wait_for_load_state("networkidle")
        browser.close()


if __name__ == "__main__":
    main()
