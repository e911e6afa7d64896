"""The seven MuJoCo Menagerie models of ``../shared/data/mujoco_menagerie`` (licences and provenance there),
ready for MuJoCo's compiler: their large meshes are not in the shared folder, so ``scratch_copy`` copies a
model's folder to a scratch directory and writes a placeholder (a tetrahedron; a 2×2 PNG for a texture) for
every asset the XML names that is missing. A placeholder changes only the mass of a body whose inertia comes
from its mesh; both urdf_dyn and MuJoCo read the same compiled model, so the comparisons are unaffected."""
import shutil
import struct
from pathlib import Path

from conftest import SHARED

__all__ = ["MENAGERIE", "MODELS", "scratch_copy"]

MENAGERIE = SHARED / "mujoco_menagerie"
#: folder → MJCF file of each model
MODELS = {"robotiq_2f85": "2f85.xml", "robotiq_2f85_v4": "2f85.xml", "ufactory_xarm7": "hand.xml",
          "iit_softfoot": "softfoot.xml", "agility_cassie": "cassie.xml", "toddlerbot_2xc": "toddlerbot_2xc.xml",
          "pal_talos": "talos.xml"}

_TET = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def _write_mesh(path, size):
    """A tetrahedron of edge ``size`` in the mesh's own units (5 cm once MuJoCo applies its ``scale``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tet = [tuple(size * c for c in v) for v in _TET]
    if path.suffix.lower() == ".stl":
        data = bytearray(80) + struct.pack("<I", len(_FACES))
        for f in _FACES:
            data += struct.pack("<3f", 0, 0, 0) + b"".join(struct.pack("<3f", *tet[i]) for i in f) + b"\0\0"
        path.write_bytes(bytes(data))
    else:  # .obj (MuJoCo's other mesh format in these files)
        path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in tet)
                        + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in _FACES))


def _write_png(path):
    from PIL import Image
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (2, 2), (128, 128, 128)).save(path)


def scratch_copy(folder, tmp_path):
    """Copy ``MENAGERIE/folder`` into ``tmp_path`` with placeholders for its missing meshes and textures;
    returns the path of the copied MJCF file."""
    dst = Path(tmp_path) / folder
    shutil.copytree(MENAGERIE / folder, dst)
    xml = dst / MODELS[folder]
    import mujoco
    spec = mujoco.MjSpec.from_file(str(xml))  # parses (defaults applied) without reading the assets
    for mesh in spec.meshes:
        path = dst / (spec.meshdir or "") / mesh.file
        if mesh.file and not path.exists():
            _write_mesh(path, 0.05 / min(abs(v) for v in mesh.scale))
    for tex in spec.textures:
        path = dst / (spec.texturedir or "") / tex.file
        if tex.file and not path.exists():
            _write_png(path)
    return xml
