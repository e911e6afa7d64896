"""Scenario jobs (layer 9): ``simulate_job``, ``sizing_job`` (+ ``sizing_schema``), ``gauss_job``,
``sweep`` and ``sweep_job``. Each job module defines its schema and ``JOB``; ``urdf_dyn.launch.registry``
imports them by name on first use."""
