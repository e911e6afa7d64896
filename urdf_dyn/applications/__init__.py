"""What users do with the dynamics: actuator forces and closed-loop inverse dynamics (``actuators``),
motions through closed loops (``motion``), actuator sizing (``sizing``), simulation (``simulate``),
controllers and reference trajectories, reports, and the launch jobs ``simulate_job`` and ``sizing_job``."""
