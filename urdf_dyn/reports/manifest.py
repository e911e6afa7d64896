"""The one table of a run's output files: ``OUTPUTS`` maps each output key to its file name, its units and
what it holds; ``Manifest`` is what a render wrote (output key → file, in the order written). No other module
chooses an output file's name: a writer asks the manifest for the path of its key."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Output", "OUTPUTS", "Manifest"]


@dataclass(frozen=True)
class Output:
    """One output: its ``file`` name in the run folder, the ``units`` of its columns or axes, and ``what`` it
    holds."""
    file: str
    units: str
    what: str


#: every output of a sizing run: key -> Output (the viewer and the sweep find the files through these keys)
OUTPUTS = {
    "actuator_forces_csv": Output("actuator_forces.csv", "s, kN | kN·m, m | rad, kW, bar",
                                  "per actuator: force, stroke, power and cylinder pressures over time"),
    "pin_loads_csv": Output("pin_loads.csv", "s, kN, kN·m", "per loop joint: force and moment per pin over time"),
    "forces_png": Output("actuator_forces.png", "kN | kN·m over s", "actuator forces with their capacities"),
    "stroke_png": Output("force_vs_stroke.png", "kN | kN·m over m | rad", "actuator force against stroke"),
    "motion_npz": Output("motion.npz", "SI (rad, m, s)", "the consistent motion t, q, q̇, q̈ (a Trajectory)"),
    "f_ext_npz": Output("f_ext.npz", "s; N m, N", "external wrenches {link: (N, 6) [n; f] in the link frame} and t"),
    "soil_csv": Output("soil.csv", "s, m, N, m/s, deg, m³, kg", "the soil cut: depth, force, rake, volumes, payload"),
    "soil_png": Output("soil.png", "m, kN, m³, t over s", "the soil cut over time"),
    "soil_direction_png": Output("soil_direction.png", "deg over s", "the soil force's direction against the travel"),
    "pump_flow_png": Output("pump_flow.png", "L/min, bar over s", "pump flow demand and load-holding pressures"),
    "hydraulics_csv": Output("hydraulics.csv", "s, L/min, bar, kW", "pump demand, flows, pressures, power"),
    "envelope_png": Output("digging_envelope.png", "m, kN", "ISO 6015 digging forces over the envelope"),
    "working_range_png": Output("working_range.png", "m", "ISO 7135 working ranges of the tooth tip"),
    "lift_chart_png": Output("lift_chart.png", "m, kg", "ISO 10567 lift capacity"),
    "zmp_png": Output("zmp.png", "m over s", "ZMP tipping margin over the motion"),
    "pin_design_loads_csv": Output("pin_design_loads.csv", "N", "per pin: cycle peak, damage-equivalent range, "
                                   "design load and its case"),
    "pin_forces_csv": Output("pin_forces.csv", "s, N", "per pin: force components over time"),
    "pin_loads_png": Output("pin_loads.png", "kN", "per pin: cycle peak and damage-equivalent range"),
    "buckling_png": Output("buckling.png", "m, 1", "buckling factor (ISO/TS 13725 yield-based limit over the "
                           "head-end line relief force) over the stroke"),
    "pump_power_png": Output("pump_power.png", "kW over s", "pump shaft power against the engine"),
    "pump_power_csv": Output("pump_power.csv", "s, kW", "pump shaft power over time"),
    "stall_envelopes_png": Output("stall_envelopes.png", "m, kN", "stall envelopes at the lip"),
    "pin_design_loads_png": Output("pin_design_loads.png", "kN", "per pin: design load against the cycle peak"),
    "drive_csv": Output("drive_cycle.csv", "s, N m, rad/s, W, N", "per drive: joint torque, motor speed, torque and "
                        "power over time; balancer forces"),
    "drive_operating_points_png": Output("drive_operating_points.png", "N m over min⁻¹",
                                         "motor operating points on the torque–speed curves"),
    "drive_cycle_png": Output("drive_cycle.png", "kN m, kN over s", "reducer torques, balancer and pin forces"),
    "free_body_csv": Output("free_body_loads.csv", "m, N, N m", "FE export: per design case and body, every "
                            "load of its free body in the body frame (force at its point, moment about it)"),
    "free_body_bdf": Output("free_body_loads.bdf", "m, N, N m", "FE export: the same load sets as Nastran "
                            "GRID/FORCE/MOMENT bulk data, one SID per case and body"),
    "lateral_cases_png": Output("lateral_cases.png", "kN·m over case | deg", "out-of-plane cases: main pins' "
                                "moments, torsion of boom and stick, the slewing ring's tilting moment"),
    "report": Output("sizing_report.md", "SI", "the sizing report"),
    "report_json": Output("sizing_report.json", "SI", "the sizing report's figures"),
    "view_json": Output("view.json", "m", "what the viewer draws beside the motion: bench, edge, payload"),
    "pin_spectra_csv": Output("pin_spectra.csv", "N", "per pin: the duty mix's load spectrum (force-magnitude "
                              "range bins, cycles in the life per activity)"),
    "pin_bearings_csv": Output("pin_bearings.csv", "m, Pa, m/s, Pa m/s", "per pin and activity: bushing pressure, "
                               "sliding speed and p·v"),
    "pin_spectra_png": Output("pin_spectra.png", "kN over cycles", "per pin: cumulative load spectrum of the duty mix"),
    "pin_bearings_png": Output("pin_bearings.png", "MPa, MPa·m/s", "per pin: bushing pressure and p·v against "
                               "the allowables"),
}


class Manifest(Mapping):
    """What a render wrote into ``outdir``: {output key: str(path)} in the order written (a Mapping);
    ``path(key)`` the file of a key (from ``OUTPUTS``; an ``extra`` name for a user-named output such as the
    animation), ``add(key, path)`` records it (a None path, from a sink that draws nothing, is left out) and
    ``reserve(key)`` keeps a key's place for a file written later in the render."""

    def __init__(self, outdir, extra=None):
        self.outdir = Path(outdir)
        self._files: dict = {}
        self._extra = dict(extra or {})

    def path(self, key) -> Path:
        """The path of output ``key`` in the run folder."""
        name = self._extra.get(key) or OUTPUTS[key].file
        return self.outdir / name

    def add(self, key, path=None):
        """Record output ``key`` (its path by default); returns the path recorded (or None)."""
        self._files[key] = str(path) if path is not None else None
        return self._files[key]

    def reserve(self, key):
        """Keep ``key``'s place in the order (its file follows later in the render)."""
        self._files.setdefault(key, None)

    def describe(self, key) -> Output:
        """The Output of ``key`` (file, units, what)."""
        return OUTPUTS.get(key) or Output(self._extra.get(key, key), "", "")

    def __getitem__(self, key):
        v = self._files[key]
        if v is None:
            raise KeyError(key)
        return v

    def __iter__(self):
        return (k for k, v in self._files.items() if v is not None)

    def __len__(self):
        return sum(v is not None for v in self._files.values())
