"""Input and output: robot-description readers (``urdf``: URDF/xacro; ``packages``: ``package://`` and
``$(find)``) and safe file writing (``files``). Readers only parse: ``urdf_dyn.load`` adds the checks that
need the solvers."""
