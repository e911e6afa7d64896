"""urdf_dyn_viewer: trimesh/pyglet scenes, trajectory player and offscreen export for urdf_dyn models.
Imports urdf_dyn; urdf_dyn never imports it (only the ``urdf-dyn view`` command does, lazily)."""
