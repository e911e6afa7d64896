"""Reports (layer 8): the only code that names and writes a run's files — ``manifest`` (the file names),
``sizing_render`` (the sizing run's files), the machine kinds' report parts (``excavator_report`` with
``excavator_plots``, ``check_plots``, ``design_report``), ``actuator_report``, ``motor_report``, ``report``
(torque tables), ``sweep_results`` (sweep tables, envelopes, plots) and ``plotting`` (figures, the plot sinks)."""
