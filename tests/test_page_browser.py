"""The web page at GET /, driven in headless Chromium against a real local server with a table-driven linker.

Needs Debian's chromium and chromium-driver (`apt-get install -y chromium chromium-driver`) and selenium (the dev
extra); skipped without them.
"""
from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator, Sequence

import pytest
from werkzeug.serving import make_server

from annotator.data_types import Mention
from tests.support.dictionary_linker import DictionaryLinker
from annotator.service import create_app

webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install -e '.[dev]')")
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.wait import WebDriverWait  # noqa: E402

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
# Flags for a container: no sandbox (root), no GPU, and no traffic of Chromium's own to the network.
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1200,900")
TEXT = "Ada Lovelace wrote to Babbage 😀 from London."
SCORES = {"Ada Lovelace": 0.8, "Charles Babbage": 0.3, "London": 0.1}

# slow: Chromium takes seconds to start.
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None or CHROMEDRIVER is None,
                                 reason="Chromium is absent: apt-get install -y chromium chromium-driver")]


class ScoredLinker(DictionaryLinker):
    """Links the table's names, each with its own score and a description, above a γ of 0.05."""

    def link(self, text: str, spans: Sequence[tuple[int, int]] | None = None) -> list[Mention]:
        return [Mention(m.start, m.end, m.surface, m.title, m.uri, SCORES[m.title or ""], f"About {m.title}.")
                for m in super().link(text, spans) if m.title in SCORES]

    def describe(self) -> dict[str, str | int | float]:
        return {"model": "scored-test-linker", "kb": "test entries", "entities": len(SCORES), "threshold": 0.05}


@pytest.fixture(scope="module")
def page_url() -> Iterator[str]:
    server = make_server("127.0.0.1", 0, create_app({"TESTING": True}, linker=ScoredLinker()), threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/"
    finally:
        server.shutdown()
        thread.join()


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"):
        options.add_argument(flag)
    # The system's driver, given explicitly: selenium would otherwise look for (and download) one.
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=str(CHROMEDRIVER)))
    try:
        yield driver
    finally:
        driver.quit()


def test_page_links_a_text_and_the_slider_hides_low_scores(browser: webdriver.Chrome, page_url: str) -> None:
    browser.get(page_url)
    WebDriverWait(browser, 10).until(lambda b: b.find_element(By.ID, "service").text ==
                                     "Model scored-test-linker, KB test entries, 3 entities.")
    browser.find_element(By.ID, "text").send_keys(TEXT)
    browser.find_element(By.ID, "link-button").click()
    WebDriverWait(browser, 10).until(lambda b: b.find_elements(By.CSS_SELECTOR, "a.mention"))

    links = browser.find_elements(By.CSS_SELECTOR, "a.mention")
    assert [link.text for link in links] == ["Ada Lovelace", "Babbage", "London"]
    assert [link.get_attribute("href") for link in links] == [
        "https://en.wikipedia.org/wiki/Ada_Lovelace", "https://en.wikipedia.org/wiki/Charles_Babbage",
        "https://en.wikipedia.org/wiki/London"]
    assert links[1].get_attribute("data-card") == "Charles Babbage (score 0.300)\nAbout Charles Babbage."
    card = "return getComputedStyle(arguments[0], '::after').content"
    assert browser.execute_script(card, links[1]) == "none"
    ActionChains(browser).move_to_element(links[1]).perform()  # hovering shows the card
    shown = browser.execute_script(card, links[1])
    assert shown.startswith('"Charles Babbage (score 0.300)') and "About Charles Babbage." in shown
    # Offsets count code points: the text around the links, emoji and all, is shown as it was typed.
    assert browser.find_element(By.ID, "linked-text").text == TEXT

    slider = browser.find_element(By.ID, "threshold")
    assert float(slider.get_attribute("min")) == 0.05
    requests_before = browser.execute_script("return performance.getEntriesByType('resource').length")
    browser.execute_script("arguments[0].value = 0.5; arguments[0].dispatchEvent(new Event('input'))", slider)
    assert [link.text for link in browser.find_elements(By.CSS_SELECTOR, "a.mention")] == ["Ada Lovelace"]
    assert browser.find_element(By.ID, "linked-text").text == TEXT
    assert "1 of 3 linked mentions shown" in browser.find_element(By.ID, "summary").text
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == requests_before

    browser.execute_script("arguments[0].value = 0.2; arguments[0].dispatchEvent(new Event('input'))", slider)
    assert [link.text for link in browser.find_elements(By.CSS_SELECTOR, "a.mention")] == ["Ada Lovelace", "Babbage"]


def test_page_shows_the_reason_of_a_refused_text(browser: webdriver.Chrome, page_url: str) -> None:
    browser.get(page_url)
    browser.execute_script("document.getElementById('text').required = false")
    browser.find_element(By.ID, "link-button").click()
    error = browser.find_element(By.ID, "error")
    WebDriverWait(browser, 10).until(lambda b: error.is_displayed())
    assert "text: String should have at least 1 character" in error.text
