"""``urdf-dyn loops``: the converted file and the printed mapping; bad input is one located line and exit
status 2; the input is never overwritten."""
import pytest

from conftest import SHARED, needs_shared
from urdf_dyn.cli.main import main

XACRO = SHARED / "fanuc_m900ib/fanuc_m900ib_support/urdf/m900ib700.xacro"


@needs_shared
@pytest.mark.filterwarnings("ignore::urdf_dyn.ModelWarning")
def test_loops_writes_the_loop_model_and_prints_the_mapping(tmp_path, capsys):
    out = tmp_path / "m900_loops.urdf"
    assert main(["loops", str(XACRO), "--package-dir", str(SHARED / "fanuc_m900ib"), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "pjoint_1 = joint_3 - joint_2" in text and "joint_3 = pjoint_1 + joint_2" in text
    assert f"wrote {out}: 3 loops, motors joint_1, joint_2, pjoint_1, joint_4, joint_5, joint_6" in text
    assert out.read_text().count("<loop ") == 3 and "<mimic" not in out.read_text()


@pytest.mark.filterwarnings("ignore::urdf_dyn.ModelWarning")
def test_loops_refusals_exit_2(tmp_path, capsys):
    src = tmp_path / "arm.urdf"
    text = ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>\n'
            '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 1 0"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>\n'
            '<joint name="f" type="continuous"><origin xyz="0 0 1"/><parent link="b"/><child link="c"/>'
            '<axis xyz="0 1 0"/><mimic joint="j" multiplier="0.5"/></joint></robot>')
    src.write_text(text)
    assert main(["loops", str(src), "-o", str(src)]) == 2
    assert "-o is the input file; refused" in capsys.readouterr().err
    assert src.read_text() == text                                     # never overwritten
    assert main(["loops", str(src), "-o", str(tmp_path / "out.urdf")]) == 2
    err = capsys.readouterr().err
    assert f"{src}:3: joint f: cannot decide where mimic follower link 'c'" in err and "--pin c:" in err
    assert err.count("\n") == 1
    assert main(["loops", str(src), "-o", str(tmp_path / "out.urdf"), "--pin", "c:b=1,2"]) == 2
    assert "expected LINK_A:LINK_B=x,y,z" in capsys.readouterr().err
    assert not (tmp_path / "out.urdf").exists()
