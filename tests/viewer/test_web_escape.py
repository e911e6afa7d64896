"""Names are data in the browser viewer: a robot whose joint, loop and robot names are HTML (an ``<iframe
srcdoc>`` holding a script, an ``<img onerror>``) shows them as text in headless Chromium (playwright, as
test_web.py drives it) and runs none of them. The same page with the escaping bypassed runs the script:
the check can fail. ``--host`` off loopback prints the address and a warning."""
import argparse
import socket

import pytest

import urdf_dyn as ud
from webrun import IN_CI, browser_or_skip, close_browser

viser = pytest.importorskip("viser", reason="pip install viser") if not IN_CI else __import__("viser")

from urdf_dyn_viewer.playback import motion_from_pose  # noqa: E402

IFRAME = '<iframe srcdoc="<script>parent.window.__pwned = 1</script>"></iframe>'
IMG = '<img src=x onerror="window.__pwned = 2">'


def _attr(s):
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


HOSTILE = f"""<robot name="{_attr(IMG)}">
  <link name="base"/>
  <link name="a"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial><visual><geometry><box size="0.1 0.1 0.3"/></geometry></visual></link>
  <joint name="{_attr(IFRAME)}" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <link name="b"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/>
    </inertial></link>
  <joint name="{_attr(IMG)}" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def browser():
    pw, br, profile = browser_or_skip()
    yield br
    close_browser(pw, br, profile)


def _serve_and_read(browser, model):
    """(window.__pwned after the page settled, dialogs opened, the page's text)."""
    from urdf_dyn_viewer.webapp import WebApp
    app = WebApp(model, motion_from_pose(model, model.q_initial()), port=0)
    page = browser.new_page()
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    try:
        page.goto(app.url)
        page.wait_for_function("document.body.innerText.includes(' · sample ')", timeout=30000)
        page.wait_for_timeout(1500)     # an iframe's srcdoc and an image's onerror run within a frame or two
        return page.evaluate("window.__pwned === undefined ? null : window.__pwned"), dialogs, page.inner_text("body")
    finally:
        page.close()
        app.close()


def test_hostile_names_are_shown_as_text_and_run_nothing(browser):
    m = ud.load(HOSTILE)
    assert IFRAME in m.joint_names and IMG in m.joint_names       # the names the loader keeps, verbatim
    pwned, dialogs, text = _serve_and_read(browser, m)
    assert pwned is None and dialogs == []
    assert IFRAME in text and IMG in text                          # shown, character for character


def test_the_same_page_without_escaping_runs_the_script(browser, monkeypatch):
    """The check above can fail: with md_text bypassed, viser renders the names as HTML and the script runs."""
    import urdf_dyn_viewer.webapp as webapp
    monkeypatch.setattr(webapp, "md_text", str)
    pwned, _, _ = _serve_and_read(browser, ud.load(HOSTILE))
    assert pwned in (1, 2)


def test_a_host_off_loopback_prints_its_address_and_a_warning(capsys):
    from urdf_dyn_viewer.cli import run_web
    from urdf_dyn_viewer.webapp import served_url
    assert served_url("127.0.0.1", 8080) == ("http://localhost:8080", False)
    assert served_url("::1", 8080) == ("http://localhost:8080", False)
    url, exposed = served_url("0.0.0.0", 8080)
    assert exposed and "localhost" not in url and "0.0.0.0" not in url and url.endswith(":8080")
    m = ud.load(HOSTILE)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = run_web(argparse.Namespace(port=port, host="0.0.0.0", loop_tol=None, speed=1.0), m, None,
                  motion_from_pose(m, m.q_initial()), block=False)
    try:
        out, err = capsys.readouterr()
        assert app.exposed and app.url in out and "localhost" not in app.url
        assert "on the network without authentication" in err and app.url in err
    finally:
        app.close()
    app = run_web(argparse.Namespace(port=port, host="127.0.0.1", loop_tol=None, speed=1.0), m, None,
                  motion_from_pose(m, m.q_initial()), block=False)
    try:
        assert "authentication" not in capsys.readouterr().err and not app.exposed
    finally:
        app.close()
