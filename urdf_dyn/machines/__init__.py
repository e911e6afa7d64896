"""Machine analysis (layer 7): excavator and arm sizing on top of the closed-loop dynamics — ``soil``
(cutting resistance), ``loads`` (point loads, payloads, the soil's wrench), ``hydraulics``, ``iso6015`` (digging
forces), ``lift_chart`` (ISO 10567), ``stability`` (base reactions, ZMP, the tipping polygon), ``working_range``
(ISO 7135), ``stroke_map`` (poses over the cylinder strokes), ``sizing`` (cylinders), ``motors`` (motor-side
sizing through gears), the design cases (``pins``, ``stall``, ``buckling``, ``pumps``, ``fatigue``, ``cycle``,
``design_cases``) and the machine from its drawing (``pin_table``, ``excavator_builder``, ``calibration``).
Pure: results in, results out — ``urdf_dyn.reports`` writes them. No machine's numbers live here: they come
from ``robots/`` and the scenario files. The names below are imported on first use (PEP 562)."""
from __future__ import annotations

import importlib

_EXPORTS = {
    "Motor": "urdf_dyn.machines.motors",
    "Drive": "urdf_dyn.machines.motors",
    "motor_sizing": "urdf_dyn.machines.motors",
    "load_motor_catalogue": "urdf_dyn.machines.motors",
    "digging_forces": "urdf_dyn.machines.iso6015",
    "digging_forces_at": "urdf_dyn.machines.iso6015",
    "lift_chart": "urdf_dyn.machines.lift_chart",
    "LiftChartOptions": "urdf_dyn.machines.lift_chart",
    "working_range": "urdf_dyn.machines.working_range",
    "base_reaction": "urdf_dyn.machines.stability",
    "zmp_margin": "urdf_dyn.machines.stability",
    "tipping_polygon": "urdf_dyn.machines.stability",
    "tipping_load": "urdf_dyn.machines.stability",
    "StabilityWarning": "urdf_dyn.machines.stability",
    "soil_preset": "urdf_dyn.machines.soil",
    "soil_cutting": "urdf_dyn.machines.soil",
    "fee_force": "urdf_dyn.machines.soil",
    "Soil": "urdf_dyn.machines.soil",
    "point_wrench": "urdf_dyn.machines.loads",
    "payload_wrench": "urdf_dyn.machines.loads",
    "point_acceleration": "urdf_dyn.machines.loads",
    "size_motion": "urdf_dyn.machines.sizing",
    "Cylinder": "urdf_dyn.machines.sizing",
    "excavator_urdf": "urdf_dyn.machines.excavator_builder",
    "write_excavator_urdf": "urdf_dyn.machines.excavator_builder",
    "load_pin_table": "urdf_dyn.machines.pin_table",
    "PinTable": "urdf_dyn.machines.pin_table",
    "calibrate": "urdf_dyn.machines.calibration",
    "Calibration": "urdf_dyn.machines.calibration",
    "hydraulics": "urdf_dyn.machines.hydraulics",
    "HydraulicMotor": "urdf_dyn.machines.hydraulics",
}

__all__ = list(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'urdf_dyn.machines' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
