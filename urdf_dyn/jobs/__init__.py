"""Scenario jobs (layer 10): ``simulate_job``, ``sizing_job`` (the pipeline ``sizing_plan`` → ``sizing_run``
→ ``reports.sizing_render`` → ``outputs``, with the machine kinds ``machine_kind``, ``kinds``,
``excavator_kind``), ``gauss_job``, ``sweep`` and ``sweep_job``. Each job module defines its schema and ``JOB``;
``urdf_dyn.launch.registry`` imports them by name on first use."""
