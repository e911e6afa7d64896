"""``python -m urdf_dyn.cli``: the urdf-dyn command."""
import sys

from urdf_dyn.cli.main import main

sys.exit(main())
