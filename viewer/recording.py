"""A recording to share: the browser viewer's scene over a whole motion, as ONE self-contained HTML file
that opens offline (viser's scene serialisation: the client and the recorded scene messages in the page;
``viser.infra.StateSerializer.as_html``).

The sizing job writes it beside its GIF when a scenario asks for ``outputs.recording: dig_cycle.html``.
The recording replays the scene (the machine, loop triads and segments, the arrows, the bench, the plot
with its cursor) at ``fps`` frames per second of motion time, looping; the control panel is not recorded
(viser keeps GUI messages out of a serialised scene).

A recording is the same file run to run: the run's pin loads are computed before the first frame and no
drawing thread runs meanwhile (``WebApp(live=False)``); the poses go through ``webscene.set_vector``
(viser's rule and messages without the cost of its setter, ~14 000 calls for the dig cycle).
"""
from __future__ import annotations

import os
from pathlib import Path

from .backend import ViewerError

__all__ = ["write_recording", "record_run"]


def write_recording(model, path, motion=None, run=None, fps=15.0, loop_tol=1e-3, robot=None):
    """Write the recording of ``run`` (rundata.RunData) or ``motion`` (playback.Motion) of ``model`` to
    ``path`` (.html). ``robot``: the model's scene.RobotScene when the caller has one (its meshes are not
    loaded again). Returns (path, frames). Raises ViewerError for another suffix, a fps ≤ 0 or without
    viser.

    The frames are posed inside one ``server.atomic()`` block: nobody is connected, and a block per frame
    woke viser's event loop thread ~900 times for nothing (a third of the recording's time)."""
    from .export import frame_times
    from .webapp import WebApp
    path = Path(path)
    if path.suffix.lower() != ".html":
        raise ViewerError(f"{path}: a recording is an .html file")
    if not fps > 0:
        raise ViewerError(f"{path}: fps must be > 0")
    app = WebApp(model, motion, run=run, port=0, loop_tol=loop_tol, live=False, robot=robot)
    try:
        mo = app.motion
        times = frame_times(float(mo.t[0]), float(mo.t[-1]), fps)
        with app.server.atomic():
            app.show(times[0], now=True)
            rec = app.server.get_scene_serializer()
            for t in times[1:]:
                rec.insert_sleep(1.0 / fps)
                app.show(float(t), now=True)
            rec.insert_sleep(1.0 / fps)
        html = rec.as_html()
    finally:
        app.close()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.stem}.tmp{os.getpid()}.html")
    try:
        tmp.write_text(html, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return path, len(times)


def record_run(model, run_dir, path, fps=15.0, robot=None):
    """The recording of a sizing job's output folder ``run_dir`` (what ``outputs.recording`` writes);
    ``robot`` as for ``write_recording``."""
    from .rundata import read_run
    run = read_run(run_dir, model)
    return write_recording(model, path, run=run, fps=fps, loop_tol=float(run.view.get("loop_tol") or 1e-3),
                           robot=robot)
