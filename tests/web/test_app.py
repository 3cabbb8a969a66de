"""The page apps (fleetctl/webapp.py) over real HTTP: routes, the generated /config.js, headers, bad URLs.

No browser here: what the pages do is tested in tests/web/test_console.py and tests/web/test_dcim.py.
"""

from __future__ import annotations

import json
import re

import httpx
import pytest

from fleetctl.webapp import WEB_ROOT, PageConfigError, api_url, config_script, console_app, dcim_app, serve_pages

CONFIG = re.compile(r"^window\.FLEET_CONFIG = Object\.freeze\((.*)\);\n$", re.DOTALL)


def parsed_config(script: str) -> dict[str, str]:
    match = CONFIG.match(script)
    assert match, f"unexpected /config.js: {script!r}"
    value = json.loads(match.group(1))
    assert isinstance(value, dict)
    return value


@pytest.mark.parametrize(
    ("given", "kept"),
    [
        ("", ""),
        ("   ", ""),
        ("/api/overview/", "/api/overview"),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("https://overview.example/base/", "https://overview.example/base"),
    ],
    ids=["empty", "blank", "same-origin-path", "loopback", "https-with-path"],
)
def test_usable_api_urls_are_kept_without_a_trailing_slash(given: str, kept: str) -> None:
    assert api_url("platformApiUrl", given) == kept


@pytest.mark.parametrize(
    "given",
    [
        "javascript:alert(1)",
        "ftp://files.example",
        "http://",
        "https://api.example/?debug=1",
        "https://api.example/#x",
        "//api.example",
        "api.example",
    ],
    ids=["javascript", "ftp", "no-host", "query", "fragment", "scheme-relative", "no-scheme"],
)
def test_unusable_api_urls_are_refused_with_the_setting_named(given: str) -> None:
    with pytest.raises(PageConfigError, match=r"^adminApiUrl="):
        api_url("adminApiUrl", given)
    with pytest.raises(PageConfigError):
        dcim_app(given)


def test_config_script_cannot_be_closed_early_by_a_value() -> None:
    script = config_script(platform_api_url="</script><script>alert(1)</script>")
    assert "<" not in script
    assert parsed_config(script)["platformApiUrl"] == "</script><script>alert(1)</script>"


async def test_console_app_serves_the_page_its_config_and_the_shared_files() -> None:
    async with serve_pages(console_app("http://127.0.0.1:8080/")) as url, httpx.AsyncClient(base_url=url) as client:
        page = await client.get("/platform")
        config = await client.get("/config.js")
        module = await client.get("/common/connect.js")
        home = await client.get("/", follow_redirects=False)
        missing = await client.get("/js/app.js")  # a DCIM file: not part of the console
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert '<script src="/config.js"></script>' in page.text
    csp = page.headers["content-security-policy"]
    assert "connect-src 'self' http://127.0.0.1:8080" in csp and "script-src 'self'" in csp
    assert page.headers["referrer-policy"] == "no-referrer"
    assert page.headers["x-content-type-options"] == "nosniff"
    assert parsed_config(config.text) == {"platformApiUrl": "http://127.0.0.1:8080", "adminApiUrl": ""}
    assert config.headers["content-type"].startswith("text/javascript")
    assert config.headers["cache-control"] == "no-cache"
    assert module.status_code == 200 and "javascript" in module.headers["content-type"]
    assert home.status_code == 307 and home.headers["location"] == "/platform"
    assert missing.status_code == 404


async def test_an_empty_platform_api_url_is_served_as_empty_and_allows_no_other_origin() -> None:
    async with serve_pages(console_app("")) as url, httpx.AsyncClient(base_url=url) as client:
        config = await client.get("/config.js")
        page = await client.get("/platform")
    assert parsed_config(config.text)["platformApiUrl"] == ""
    assert "connect-src 'self';" in page.headers["content-security-policy"]


async def test_dcim_app_serves_its_own_page_and_modules() -> None:
    async with serve_pages(dcim_app("https://fleet.example")) as url, httpx.AsyncClient(base_url=url) as client:
        page = await client.get("/platform")
        app = await client.get("/js/app.js")
        config = await client.get("/config.js")
        console_script = await client.get("/platform.js")  # the console's script: not part of DCIM
    assert page.status_code == 200 and 'src="/js/app.js"' in page.text
    assert app.status_code == 200
    assert parsed_config(config.text) == {"platformApiUrl": "", "adminApiUrl": "https://fleet.example"}
    assert "connect-src 'self' https://fleet.example" in page.headers["content-security-policy"]
    assert console_script.status_code == 404


async def test_dcim_app_hands_a_gardener_dashboard_url_to_the_page_and_refuses_a_relative_one() -> None:
    app = dcim_app("https://fleet.example", gardener_dashboard_url="https://dashboard.garden.example/")
    async with serve_pages(app) as url, httpx.AsyncClient(base_url=url) as client:
        config = await client.get("/config.js")
    assert parsed_config(config.text)["gardenerDashboardUrl"] == "https://dashboard.garden.example"
    with pytest.raises(PageConfigError, match=r"^gardenerDashboardUrl="):
        dcim_app("https://fleet.example", gardener_dashboard_url="/dashboard")
    with pytest.raises(PageConfigError, match=r"^gardenerDashboardUrl="):
        dcim_app("https://fleet.example", gardener_dashboard_url="javascript:alert(1)")


def test_the_dcim_page_preloads_every_module_it_imports_and_nothing_else() -> None:
    # Preloading flattens the import waterfall (one round of fetches instead of one per import level);
    # a module added without its preload would load late, a stale preload would fetch a missing file.
    page = (WEB_ROOT / "dcim" / "platform.html").read_text()
    preloaded = set(re.findall(r'<link rel="modulepreload" href="([^"]+)" />', page))
    modules = {
        f"/js/{p.relative_to(WEB_ROOT / 'dcim' / 'js').as_posix()}" for p in (WEB_ROOT / "dcim" / "js").rglob("*.js")
    }
    modules |= {f"/common/{p.name}" for p in (WEB_ROOT / "common").glob("*.js")}
    assert preloaded == modules - {"/js/app.js"}
