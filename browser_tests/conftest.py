"""Headless Chromium (Debian's chromium + chromium-driver, see .ci/browser-deps) over Selenium.

The server is pytest-django's ``live_server`` (the real URL conf, middleware and admin, with the
test database). A failing test leaves a screenshot and the page's HTML in the artefacts folder
(``TIDDLY_BROWSER_ARTIFACTS``, else a fresh temp folder) whose path is printed.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webdriver import WebDriver

# Never let Selenium Manager download a browser or driver: the system ones or nothing.
os.environ["SE_OFFLINE"] = "true"

ARTIFACTS = Path(
    os.environ.get("TIDDLY_BROWSER_ARTIFACTS") or tempfile.mkdtemp(prefix="tiddly-browser-")
)
PASSWORD = "browser-pw-1"


def pytest_report_header() -> str:
    return f"browser test artefacts (screenshots of failures): {ARTIFACTS}"


def _binary(*names: str) -> str:
    for name in names:
        found = shutil.which(name)
        if found:
            return found
    pytest.exit(f"{names[0]} is not installed: run .ci/browser-deps", returncode=3)
    raise AssertionError  # unreachable


@pytest.fixture(scope="session")
def browser() -> Iterator[WebDriver]:
    options = webdriver.ChromeOptions()
    options.binary_location = _binary("chromium", "chromium-browser")
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        "--window-size=1400,1000",
    ):
        options.add_argument(argument)
    driver = webdriver.Chrome(options=options, service=Service(_binary("chromedriver")))
    driver.implicitly_wait(5)
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and call.when == "call":
        driver = item.funcargs.get("browser") if hasattr(item, "funcargs") else None
        if driver is not None:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            stem = ARTIFACTS / item.name.replace("/", "_")
            driver.save_screenshot(str(stem.with_suffix(".png")))
            stem.with_suffix(".html").write_text(driver.page_source)
            report.sections.append(("browser artefacts", f"{stem}.png and .html"))
            print(f"\nscreenshot of the failure: {stem}.png")
    return report


@pytest.fixture
def staff(transactional_db: None, django_user_model: Any) -> Any:
    return django_user_model.objects.create_superuser(
        username="pat", email="pat@example.com", password=PASSWORD
    )


def log_in(browser: WebDriver, base_url: str, username: str) -> None:
    browser.delete_all_cookies()
    browser.get(f"{base_url}/admin/login/")
    browser.find_element(By.NAME, "username").send_keys(username)
    browser.find_element(By.NAME, "password").send_keys(PASSWORD)
    browser.find_element(By.CSS_SELECTOR, "input[type=submit]").click()
    browser.find_element(By.ID, "user-tools")  # waits until signed in


@pytest.fixture
def admin_browser(browser: WebDriver, live_server: Any, staff: Any) -> WebDriver:
    """The browser, signed in to the admin as ``staff``."""
    log_in(browser, live_server.url, staff.username)
    return browser


AXE = Path(__file__).resolve().parent.parent / ".ci/.npm-axe/node_modules/axe-core/axe.min.js"


@pytest.fixture(scope="session")
def axe_source() -> str:
    """axe-core's script, installed by .ci/browser-deps (run here when it is missing)."""
    if not AXE.exists():
        import subprocess

        script = AXE.parents[3] / "browser-deps"
        subprocess.run(["bash", str(script)], check=True)
    return AXE.read_text()


def assert_accessible(browser: WebDriver, axe_source: str) -> None:
    """axe-core in the page finds no serious or critical violation (WCAG 2.x A and AA rules)."""
    browser.execute_script(axe_source)
    found = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a',"
        " 'wcag21aa', 'best-practice']}}).then(r => done(r.violations.map(v => ({id: v.id,"
        " impact: v.impact, help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))))"
        ".catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e), nodes: []}]));"
    )
    bad = [v for v in found if v["impact"] in ("serious", "critical")]
    assert not bad, f"{browser.current_url}: {bad}"
