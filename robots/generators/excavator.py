"""robots/excavator.urdf is built from its side-view pin table robots/excavator_pins.yaml by the library
(urdf_dyn.machines.excavator_builder); edit the table, then regenerate with

    urdf-dyn excavator robots/excavator_pins.yaml -o robots/excavator.urdf

or, the same, ``python robots/generators/excavator.py [OUT.urdf]``. (Until the pin table, this script held the
machine's constants and its own geometry; the table was extracted from the URDF it wrote, commit 6bfaa15, and
tests/machines/test_pin_table.py holds the regenerated model to that one.)"""
import sys
from pathlib import Path

from urdf_dyn.machines.excavator_builder import write_excavator_urdf

if __name__ == "__main__":
    robots = Path(__file__).resolve().parents[1]
    out = sys.argv[1] if len(sys.argv) > 1 else robots / "excavator.urdf"
    write_excavator_urdf(robots / "excavator_pins.yaml", out)
    print(f"wrote {out}")
