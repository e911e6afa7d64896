"""Simulation (layer 6): ``simulate`` (the tree and closed-loop integrator) with its ``Trajectory`` and
readers/writers, ``controllers`` (joint-force laws), ``trajectories`` (reference motions and the
waypoint/CSV builders of ``CoordinateMotion``)."""
