"""The one safe writer (``io.files.atomic_path``), the one bounded reader (``io.bounded``), escaping at the sinks
(``io.escape``), the schema's physical bounds and the calibration's budget.

Oracles: the file system itself (inode, file type, bytes before and after), Python's own parsers showing the
failure each mechanism prevents (``json`` recursing, ``csv`` refusing a 128 kB field unlocated, scipy's
``max_nfev`` not counting the Jacobian's evaluations), and lxml reading the generated XML back."""
import json
import os
import stat

import numpy as np
import pytest

from _robots import ROOT
from urdf_dyn.cli.main import main
from urdf_dyn.io.bounded import InputError, read_csv_rows, read_json, read_numeric_csv
from urdf_dyn.io.escape import NotFiniteFigure, md_document, md_text, xml_attr, xml_comment
from urdf_dyn.io.files import OutputError, atomic_path, note_input

PINS = ROOT / "robots" / "excavator_pins.yaml"


# -- the safe writer ---------------------------------------------------------------------------------------------
def test_an_output_that_is_an_input_is_refused_through_links_too(tmp_path):
    src = tmp_path / "in.yaml"
    src.write_text("keep")
    link, hard = tmp_path / "link.yaml", tmp_path / "hard.yaml"
    link.symlink_to(src)
    os.link(src, hard)
    for out in (src, link, hard):
        with pytest.raises(OutputError, match="the output is the input file"):
            with atomic_path(out, inputs=(src,)) as tmp:
                tmp.write_text("lost")
    note_input(src)                                    # the readers note theirs: no inputs= needed
    with pytest.raises(OutputError):
        with atomic_path(hard) as tmp:
            tmp.write_text("lost")
    assert src.read_text() == "keep" and link.is_symlink()


def test_a_runs_own_state_may_be_rewritten_and_a_deleted_inputs_inode_is_forgotten(tmp_path):
    rec = tmp_path / "case.json"                        # a sweep's record: read back, then rewritten on a retry
    rec.write_text('{"status": "failed"}')
    read_json(rec)
    with atomic_path(rec) as tmp:
        tmp.write_text('{"status": "ok"}')
    assert read_json(rec) == {"status": "ok"}
    for i in range(20):                                 # inode numbers are reused once a file is deleted
        src = tmp_path / f"robot{i}.urdf"
        src.write_text("x")
        note_input(src)
        src.unlink()
        out = tmp_path / f"out{i}.urdf"
        out.write_text("old")
        with atomic_path(out) as tmp:
            tmp.write_text("new")
        assert out.read_text() == "new"


def test_excavator_refuses_to_write_its_urdf_over_its_pin_table(tmp_path, capsys):
    pins = tmp_path / "pins.yaml"
    pins.write_bytes(PINS.read_bytes())
    assert main(["excavator", str(pins), "-o", str(pins)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the output is the input file" in err[0]
    assert pins.read_bytes() == PINS.read_bytes()


def test_a_target_that_is_not_a_regular_file_is_written_into_never_renamed_over(tmp_path):
    dev = tmp_path / "null"
    dev.symlink_to("/dev/null")
    with atomic_path(dev) as tmp:
        tmp.write_text("x" * 100)
    assert dev.is_symlink() and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        with atomic_path(fifo) as tmp:
            tmp.write_text("through the pipe")
        assert os.read(r, 100) == b"through the pipe" and stat.S_ISFIFO(os.lstat(fifo).st_mode)
    finally:
        os.close(r)
    real = tmp_path / "real.txt"
    real.write_text("old")
    link = tmp_path / "out.txt"
    link.symlink_to(real)
    with atomic_path(link) as tmp:
        tmp.write_text("new")
    assert link.is_symlink() and real.read_text() == "new"      # the link's target replaced, the link kept
    with pytest.raises(OutputError, match="is a folder"):
        with atomic_path(tmp_path) as tmp:
            pass
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "nowhere" / "x")
    with pytest.raises(OutputError, match="cannot be reached"):
        with atomic_path(dangling) as tmp:
            pass


def test_os_replace_alone_would_replace_the_link(tmp_path):
    """What the writer prevents: os.replace onto a link to a device replaces the link with a regular file."""
    link = tmp_path / "stdout"
    link.symlink_to("/dev/null")
    (tmp_path / "t").write_text("x")
    os.replace(tmp_path / "t", link)
    assert not link.is_symlink() and link.is_file()      # (a failed write keeping the old file: test_guards)


# -- the bounded reader --------------------------------------------------------------------------------------------
def test_json_size_and_depth_are_bounded_with_located_messages(tmp_path):
    big = tmp_path / "view.json"
    with open(big, "wb") as f:                         # 300 MB, sparse: refused by its size, never read
        f.truncate(300 << 20)
    with pytest.raises(InputError, match=r"view.json: 314572800 bytes, more than a JSON file may hold"):
        read_json(big)
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(RecursionError):                # what json alone does
        json.loads(deep.read_text())
    with pytest.raises(InputError, match="deep.json: nested more than 64 deep"):
        read_json(deep)
    for name, text, match in (("mid.json", "[" * 100 + "]" * 100, "nested more than 64 deep"),  # within recursion
                              ("bad.json", '{"a": 1,\n "b": }', r"bad.json:2:7: not JSON"),
                              ("nan.json", '{"a": NaN}', "NaN is not a number JSON allows")):
        _refused(tmp_path / name, text, read_json, match)
    nan = tmp_path / "nan.json"
    assert read_json(nan, allow_nan=True)["a"] != 0


def test_csv_fields_rows_and_values_are_bounded_and_located(tmp_path):
    import csv
    wide = tmp_path / "soil.csv"
    wide.write_text("t,F_x\n0,1\n" + "1," + "9" * 200_000 + "\n")
    with pytest.raises(csv.Error, match="field larger than field limit"):   # Python's csv: no file, no line
        list(csv.reader(open(wide)))
    with pytest.raises(InputError, match=r"soil.csv:3: a field longer than 65536 characters"):
        read_csv_rows(wide)
    for name, text, match in (("w.csv", "t,fx\n0,1\n0.1,a\n", r"w.csv:3: column 'fx': 'a' is not a number"),
                              ("n.csv", "t,fx\n0,1\n0.1,nan\n", r"n.csv:3: column 'fx': 'nan' is not finite")):
        _refused(tmp_path / name, text, read_numeric_csv, match)
    many = tmp_path / "m.csv"
    many.write_text("t\n" + "0\n" * 11)
    with pytest.raises(InputError, match=r"m.csv:12: more than 10 rows"):
        read_csv_rows(many, max_rows=10)
    header, data = read_numeric_csv(_ok(tmp_path))
    assert header == ["t", "fx"] and data.tolist() == [[0.0, 1.0], [0.1, 2.0]]


def _refused(path, text, reader, match):
    path.write_text(text)
    with pytest.raises(InputError, match=match):
        reader(path)


def _ok(tmp_path):
    p = tmp_path / "ok.csv"
    p.write_text("t, fx\n0,1\n\n0.1,2\n")
    return p


def test_view_json_of_the_wrong_shape_or_with_nan_positions_is_refused_by_key(tmp_path):
    viewer = pytest.importorskip("urdf_dyn_viewer.rundata")
    from urdf_dyn_viewer.backend import ViewerError
    v = tmp_path / "view.json"
    for text, where in (('{"edge": "bucket"}', "view.json: edge: expected an object, got a string"),
                        ('{"edge": {"link": "bucket", "xyz": [NaN, 0, 0]}}', "NaN is not a number"),
                        ('{"edge": {"link": "bucket", "xyz": [1e999, 0, 0]}}', "edge.xyz[0]: inf is not finite"),
                        ('{"edge": {"link": "bucket", "xyz": ["a", 0, 0]}}', "edge.xyz[0]: expected a number"),
                        ('{"payload": {"link": "b", "com": [0, 0]}}', "payload.com: expected 3 numbers"),
                        ('{"bench_height": "low"}', "bench_height: expected a number"),
                        ('[1, 2]', "view.json: expected an object, got an array")):
        v.write_text(text)
        with pytest.raises(ViewerError, match=where.replace("[", r"\[").replace("]", r"\]")):
            viewer.read_view(v)
    v.write_text('{"edge": {"link": "bucket", "xyz": [1, 0, 0], "rpy": [0, 0, 0]}, "bench_height": 0.5}')
    assert viewer.read_view(v)["edge"]["xyz"] == [1, 0, 0]


def test_a_wrench_csv_with_nan_names_the_file_line_and_column(tmp_path):
    from urdf_dyn.jobs.sizing_job import _wrench_csv
    from urdf_dyn.launch.document import Launch
    p = tmp_path / "wrench.csv"
    p.write_text("t,fx,fy,fz,nx,ny,nz\n0,0,0,0,0,0,0\n1,nan,0,0,0,0,0\n")
    launch = Launch(tmp_path / "x.scenario.yaml", {})
    with pytest.raises(Exception, match=r"loads\[0\].csv: .*wrench.csv:3: column 'fx': 'nan' is not finite"):
        _wrench_csv(launch, "loads[0].csv", p)


def test_a_motion_csv_with_a_long_field_is_one_located_line(tmp_path):
    from urdf_dyn.errors import LaunchError
    from urdf_dyn.simulation.trajectories import csv_motion
    p = tmp_path / "motion.csv"
    p.write_text("t,crank\n0,0\n0.1," + "1" * 100_000 + "\n")
    with pytest.raises(LaunchError, match=r"motion.csv:3: a field longer than"):
        csv_motion(p)


def test_a_sweep_record_with_a_word_for_a_number_names_the_file(tmp_path):
    from types import SimpleNamespace

    from urdf_dyn.errors import LaunchError
    from urdf_dyn.jobs.sweep_checks import check_record
    case = SimpleNamespace(index=0, hash="abc", job="size", params={"payload.mass": 1})
    p = tmp_path / "abc.json"
    rec = {"hash": "abc", "job": "size", "params": {"payload.mass": 1}, "status": "ok", "metrics": {"peak": 1.5}}
    p.write_text(json.dumps(rec))
    assert check_record(p, case)["metrics"]["peak"] == 1.5
    rec["metrics"]["peak"] = "huge"
    p.write_text(json.dumps(rec))
    with pytest.raises(LaunchError, match=r"abc.json: its metrics.peak is 'huge', not a number"):
        check_record(p, case)
    p.write_text("[" * 50_000)
    with pytest.raises(LaunchError, match=r"abc.json: not a record \(nested more than 32 deep\)"):
        check_record(p, case)


# -- escaping ---------------------------------------------------------------------------------------------------
def test_markdown_text_and_documents_carry_no_markup_and_no_inf():
    name = '<iframe srcdoc="<script>alert(1)</script>">|*x*'
    s = md_text(name)
    assert "<" not in s and ">" not in s and "\\|" in s and "\\*x\\*" in s
    doc = md_document(f"# {name}\n\n| a | `<b>` |\n|---|---|\n| 1.5 kN | x < y |")
    assert "<iframe" not in doc and "&lt;iframe" in doc and "`<b>`" in doc and "x &lt; y" in doc
    for bad in ("peak inf kN", "| nan |", "-inf m", "the cycle lasts 20600000000000000000000.5 s", "1e+300 kN"):
        with pytest.raises(NotFiniteFigure, match="line 1"):
            md_document(bad, "sizing_report.md")
    assert md_document("info: 1.5e-05 and 1e+99 fit; 12345678901234567 fits") is not None


def test_xml_attributes_and_comments_read_back_as_written():
    from lxml import etree
    name = 'x" onload="<script>&amp;\x01'
    text = 'a -- b --> c ---\x00 -'
    doc = f'<robot name="{xml_attr(name)}"><!--{xml_comment(text)}--></robot>'
    root = etree.fromstring(doc)
    assert root.get("name") == name.replace("\x01", "\ufffd")
    comment = etree.fromstring(f"<r><!--{xml_comment(text)}--></r>", etree.XMLParser(remove_comments=False))[0]
    assert comment.text.replace(" ", "") == text.replace(" ", "").replace("\x00", "\ufffd")


def test_a_hostile_pin_table_name_gives_a_urdf_that_loads_with_the_name(tmp_path):
    import yaml

    import urdf_dyn as ud
    data = yaml.safe_load(PINS.read_text())
    data["name"] = 'x" onload="<script>alert(1)</script>'
    data["description"] = "ends with -- and --> and -"
    pins = tmp_path / "pins.yaml"
    pins.write_text(yaml.safe_dump(data))
    assert main(["excavator", str(pins), "-o", str(tmp_path / "x.urdf")]) == 0
    m = ud.load(tmp_path / "x.urdf")
    assert m.name == data["name"]


# -- warnings made errors -----------------------------------------------------------------------------------------
def test_a_warning_made_an_error_is_one_line(tmp_path, capsys):
    import warnings
    src = ROOT / "tests" / "bad_inputs" / "atol_zero.scenario.yaml"
    old = tmp_path / "x.launch.yaml"
    old.write_text(src.read_text().replace("../../robots/", str(ROOT / "robots") + "/"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        assert main(["run", str(old), "--out-dir", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "the suffix .launch.yaml is deprecated" in err[0]


# -- floating bases --------------------------------------------------------------------------------------------
def test_a_floating_base_trajectory_with_a_zero_quaternion_names_file_and_columns(tmp_path):
    """The viewer poses a floating base with its nq coordinates (it reshaped q to nv: "cannot reshape array of
    size 8 into shape (7,)"), and a zero quaternion is named by file, row and columns."""
    pytest.importorskip("mujoco")
    viewer = pytest.importorskip("urdf_dyn_viewer.playback")
    import urdf_dyn as ud
    from urdf_dyn_viewer.backend import ViewerError
    from urdf_dyn_viewer.scene import RobotScene
    data = ROOT / "tests" / "bad_inputs" / "data"
    m = ud.load(data / "floating_free.xml")
    assert (m.nq, m.nv) == (8, 7)
    traj = ud.Trajectory.load(data / "floating_traj_zero_quaternion.csv")
    with pytest.raises(ViewerError, match=r"floating_traj_zero_quaternion.csv: row 1 of the samples: the columns "
                                          r"q\[root.qx\], q\[root.qy\], q\[root.qz\], q\[root.qw\]"):
        viewer.motion_from_trajectory(m, traj, label=str(data / "floating_traj_zero_quaternion.csv"))
    q = np.array(traj.q)
    q[:, 6] = 1.0                                     # qw = 1: the identity rotation
    q[:, 2] = [0.0, 0.5, 1.0]                         # the base rises 1 m
    import dataclasses
    good = dataclasses.replace(traj, q=q)
    mo = viewer.motion_from_trajectory(m, good)
    scene = RobotScene(m)
    scene.set_q(mo.q[2])
    assert scene.body_T.shape[0] == len(m.body_names)
    assert scene.body_T[m.body_names.index("b")][2, 3] == pytest.approx(1.0)
    pose = viewer.motion_from_pose(m, m.q_initial())
    assert pose.q.shape == (1, 8) and pose.qd.shape == (1, 7)
