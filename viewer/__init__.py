"""urdf_dyn_viewer: trimesh/pyglet scenes, trajectory player and offscreen export for urdf_dyn models.
Imports urdf_dyn; urdf_dyn never imports it (only the ``urdf-dyn view`` command and a launch file's
``outputs.animation`` do, lazily).

Modules (importing this package imports none of them, and no GL):
    scene     RobotScene: the URDF's visuals as a trimesh.Scene posed by forward kinematics; loop frames
    playback  Motion (samples to play), demo_motion, Playback (the clock: speed, pause, step, repeat)
    forces    ForceSource: actuator and pin (loop-joint) forces per sample, as arrows
    balancers the model's balancers (springs between two pins) at a pose: pins, length, force, label
    backend   select(headless): pyglet window vs offscreen EGL, decided before pyglet.gl is imported
    window    RobotViewer (trimesh's SceneViewer + loop overlay, arrows, heads-up text), play()
    meshes    BodyMeshes: the visuals in static GPU buffers, one draw per body
    text      GlyphText: screen text from pyglet's glyph atlas, one draw per frame
    gif       one palette for a whole animation, frames mapped from the framebuffer, GIF writing
    export    render_trajectory / render_motion to .png, .gif, .mp4 (offscreen)
    cli       run_view(args) for ``urdf-dyn view``
"""
