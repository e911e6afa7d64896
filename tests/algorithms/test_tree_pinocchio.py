"""urdf_dyn against Pinocchio, an independent implementation, on real fixed-base robot descriptions.

Oracle: Pinocchio built from the very same URDF (``pin.buildModelFromUrdf(path)``, fixed base, no free
flyer, ``mimic=False`` so that mimic joints stay independent coordinates as in urdf_dyn), or from
urdf_dyn's expanded ``model.urdf_xml`` for xacro sources and sanitised copies. Joints are matched by
name (``model.joint_names`` -> ``pin_model.idx_qs / idx_vs``); continuous joints are nq = 2 (cos, sin) in
Pinocchio. Conventions bridged here:

- spatial vectors: Featherstone [angular; linear] (urdf_dyn) vs [linear; angular] (Pinocchio);
- f_ext: urdf_dyn takes {link: [n; f]} in the link frame about the link origin; Pinocchio takes one
  force per joint in the joint frame, so a link wrench is moved by the link frame's placement
  (``frame.placement.act``) onto ``frame.parentJoint``;
- ``pin.crba`` fills the upper triangle only: it is symmetrised before comparing.

Every comparison uses a norm-based relative error ||a - b|| <= 1e-9 max(1, ||b||). The largest error seen
per robot and quantity is printed as a table in pytest's terminal summary (no ``-s`` needed).
"""
from __future__ import annotations

import importlib.metadata
import math
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

pin = pytest.importorskip("pinocchio")
etree = pytest.importorskip("lxml.etree")

import urdf_dyn  # noqa: E402

TOL = 1e-9
N_STATES = 6
SUITE = "tree dynamics vs Pinocchio"
from conftest import SHARED
# Pinocchio orders spatial vectors [linear; angular]; this maps urdf_dyn rows [angular; linear] onto it.
TO_PIN_ROWS = [3, 4, 5, 0, 1, 2]


# ---------------------------------------------------------------------------------------------------------
# record of the largest errors, printed at the end of the session
# ---------------------------------------------------------------------------------------------------------
_RECORD: dict = {}  # robot -> {"nv": int, quantity: largest relative error}
_PLUGIN = "urdf_dyn-tree-pinocchio-summary"


class _Summary:
    def pytest_terminal_summary(self, terminalreporter):
        if not _RECORD:
            return
        cols = []
        for row in _RECORD.values():
            cols += [c for c in row if c not in cols]
        w = max(len("robot"), *(len(r) for r in _RECORD))
        tr = terminalreporter
        tr.section(f"largest relative errors, {SUITE}")
        tr.write_line(f"{'robot':<{w}}  " + "  ".join(f"{c:>8}" for c in cols))
        for r in sorted(_RECORD):
            cells = (_RECORD[r].get(c) for c in cols)
            tr.write_line(f"{r:<{w}}  " + "  ".join(
                f"{'-' if v is None else (f'{v:.1e}' if isinstance(v, float) else v):>8}" for v in cells))


@pytest.fixture(scope="session")
def tree_record(request):
    manager = request.config.pluginmanager
    if not manager.has_plugin(_PLUGIN):
        manager.register(_Summary(), _PLUGIN)
    return _RECORD


# ---------------------------------------------------------------------------------------------------------
# where the robots are
# ---------------------------------------------------------------------------------------------------------
def _erd_robots_dir():
    """The ``robots`` folder of example-robot-data (Python helper if present, else the cmeel wheel)."""
    try:
        import example_robot_data as erd  # not shipped by every build of the wheel
        return Path(erd.getModelPath("ur_description"))
    except Exception:
        pass
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        return None
    d = Path(dist.locate_file("cmeel.prefix/share/example-robot-data/robots"))
    return d if d.is_dir() else None


ERD = _erd_robots_dir()
# package://example-robot-data/robots/... and package://<pkg>_description/... both resolve from these.
ERD_PACKAGE_DIRS = [str(ERD.parents[1]), str(ERD)] if ERD is not None else []


@dataclass(frozen=True)
class Source:
    path: Path
    package_dirs: list
    xacro: bool = False
    strip_transmissions: bool = False  # see talos_left_arm
    note: str = ""


def _erd(rel, **kw):
    return Source(ERD / rel if ERD is not None else Path("/nonexistent") / rel, ERD_PACKAGE_DIRS, **kw)


def _shared(rel, pkg_root):
    # $(find pkg) must resolve inside the shared snapshot, never to example-robot-data's ur_description.
    return Source(SHARED / rel, [str(SHARED / pkg_root)], xacro=True)


ROBOTS = {
    # ROS-Industrial descriptions, expanded by urdf_dyn's xacro front end.
    "ur5e": _shared("universal_robot/ur_description/urdf/ur5e.xacro", "universal_robot"),
    "kuka_kr16": _shared("kuka_experimental/kuka_kr16_support/urdf/kr16_2.xacro", "kuka_experimental"),
    "kuka_kr210": _shared("kuka_experimental/kuka_kr210_support/urdf/kr210l150.xacro", "kuka_experimental"),
    "kuka_kr5": _shared("kuka_experimental/kuka_kr5_support/urdf/kr5_arc.xacro", "kuka_experimental"),
    "kuka_kr120": _shared("kuka_experimental/kuka_kr120_support/urdf/kr120r2500pro.xacro", "kuka_experimental"),
    # example-robot-data: every fixed-base arm it ships (ur3.urdf is an empty <robot/>, ur*_joint_limited
    # only narrow the limits; there is no iiwa and no Kinova Gen3 in 6.0).
    "erd_ur3": _erd("ur_description/urdf/ur3_robot.urdf"),
    "erd_ur3_gripper": _erd("ur_description/urdf/ur3_gripper.urdf"),
    "erd_ur5": _erd("ur_description/urdf/ur5_robot.urdf"),
    "erd_ur5_gripper": _erd("ur_description/urdf/ur5_gripper.urdf"),
    "erd_ur10": _erd("ur_description/urdf/ur10_robot.urdf"),
    "erd_panda": _erd("panda_description/urdf/panda.urdf",
                      note="finger_joint2 <mimic>s finger_joint1: both are independent coordinates here"),
    "erd_xarm7": _erd("xarm_description/urdf/xarm7.urdf"),
    "erd_z1": _erd("z1_description/urdf/z1.urdf"),
    "erd_kinova_jaco": _erd("kinova_description/robots/kinova.urdf", note="3 continuous joints (pin nq=2)"),
    "erd_so100": _erd("so_arm_description/urdf/so100.urdf"),
    "erd_so101": _erd("so_arm_description/urdf/so101.urdf"),
    "erd_talos_arm": _erd("talos_data/robots/talos_left_arm.urdf", strip_transmissions=True,
                          note="its <transmission arm_left_1_trans> names joint arm_left_1_joint, absent from "
                               "the file (the chain starts at arm_left_1_link); urdf_dyn refuses that, so both "
                               "sides load the file with <transmission> elements removed"),
    "erd_baxter": _erd("baxter_description/urdf/baxter.urdf", note="dual-arm tree with 2 <mimic> gripper joints"),
    "erd_finger_edu": _erd("finger_edu_description/robots/finger_edu.urdf"),
    "erd_asr_twodof": _erd("asr_twodof_description/urdf/TwoDofs.urdf"),
    "erd_double_pendulum_continuous": _erd("double_pendulum_description/urdf/double_pendulum_continuous.urdf"),
    # larger branched trees (fixed-base here): a mobile manipulator and a humanoid, both with mimics.
    "erd_tiago_pro": _erd("tiago_pro_description/robots/tiago_pro.urdf"),
    "erd_talos_full_v2": _erd("talos_data/robots/talos_full_v2.urdf"),
}


# ---------------------------------------------------------------------------------------------------------
# one robot on both sides
# ---------------------------------------------------------------------------------------------------------
@dataclass
class Case:
    name: str
    model: object
    pm: object
    pd: object
    jid: np.ndarray      # Pinocchio joint id of model.joint_names[k]
    iq: np.ndarray       # Pinocchio idx_q of coordinate k
    iv: np.ndarray       # Pinocchio idx_v of coordinate k
    nqk: np.ndarray      # Pinocchio nq of coordinate k (1, or 2 for continuous joints)
    q: np.ndarray        # (N, nv) states in urdf_dyn's order
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    errors: dict = field(default_factory=dict)

    # urdf_dyn order <-> Pinocchio order
    def pin_q(self, q):
        qp = np.zeros(self.pm.nq)
        one = self.nqk == 1
        qp[self.iq[one]] = q[one]
        two = ~one
        qp[self.iq[two]] = np.cos(q[two])
        qp[self.iq[two] + 1] = np.sin(q[two])
        return qp

    def pin_v(self, v):
        vp = np.zeros(self.pm.nv)
        vp[self.iv] = v
        return vp

    def from_pin_v(self, vp):
        return np.asarray(vp)[self.iv]

    def from_pin_mat(self, Mp):
        return np.asarray(Mp)[np.ix_(self.iv, self.iv)]

    def frame_id(self, link):
        fid = self.pm.getFrameId(link, pin.BODY)
        assert fid < len(self.pm.frames), f"{self.name}: Pinocchio has no BODY frame for link {link!r}"
        return fid

    def check(self, quantity, got, want, where=""):
        """Assert rel(got, want) <= TOL; keep the largest error per quantity; say which joint differs."""
        got, want = np.asarray(got, float), np.asarray(want, float)
        assert got.shape == want.shape, f"{self.name} {quantity}: shape {got.shape} != {want.shape}"
        e = float(np.linalg.norm(got - want) / max(1.0, np.linalg.norm(want)))
        self.errors[quantity] = max(self.errors.get(quantity, 0.0), e)
        if e > TOL:
            d = np.abs(got - want)
            idx = np.unravel_index(int(np.argmax(d)), d.shape)
            names = self.model.joint_names  # name the joint along every joint-space axis
            what = ", ".join(names[i] if n == len(names) else str(i) for i, n in zip(idx, d.shape))
            pytest.fail(f"{self.name} {quantity} {where}: relative error {e:.3e} > {TOL:g}; largest |diff| "
                        f"{d.max():.3e} at [{what}] (urdf_dyn {got[idx]:.9g}, Pinocchio {want[idx]:.9g})")


def _load(src: Source):
    if src.strip_transmissions:
        root = etree.fromstring(src.path.read_bytes())
        for el in root.findall("transmission"):
            root.remove(el)
        xml = etree.tostring(root).decode()
        return urdf_dyn.load(xml, package_dirs=src.package_dirs), pin.buildModelFromXML(xml)
    model = urdf_dyn.load(src.path, package_dirs=src.package_dirs)
    if src.xacro:
        return model, pin.buildModelFromXML(model.urdf_xml)
    return model, pin.buildModelFromUrdf(str(src.path))


def _states(model, rng, n):
    lo = np.where(np.isfinite(model.lower), model.lower, -math.pi)
    up = np.where(np.isfinite(model.upper), model.upper, math.pi)
    up = np.maximum(up, lo)
    q = rng.uniform(lo, up, size=(n, model.nv))
    return q, rng.standard_normal((n, model.nv)), rng.standard_normal((n, model.nv)), \
        rng.standard_normal((n, model.nv))


@pytest.fixture(scope="module", params=list(ROBOTS))
def case(request, tree_record):
    name = request.param
    src = ROBOTS[name]
    if not src.path.is_file():
        pytest.skip(f"{name}: {src.path} not found")
    try:
        model, pm = _load(src)
    except urdf_dyn.UnsupportedError as e:
        pytest.skip(f"{name}: urdf_dyn refuses the description: {e}")
    names = list(model.joint_names)
    assert sorted(names) == sorted(pm.names[1:]), f"{name}: joint sets differ"
    assert pm.nv == model.nv == len(names)
    jid = [int(pm.getJointId(n)) for n in names]
    nqk = np.array([pm.nqs[j] for j in jid])
    assert set(nqk) <= {1, 2}
    assert all(pm.nvs[j] == 1 for j in jid)
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    q, qd, qdd, tau = _states(model, rng, N_STATES)
    c = Case(name, model, pm, pm.createData(), np.array(jid), np.array([pm.idx_qs[j] for j in jid]),
             np.array([pm.idx_vs[j] for j in jid]), nqk, q, qd, qdd, tau)
    yield c
    row = tree_record.setdefault(name, {"nv": model.nv})
    for k, v in c.errors.items():
        row[k] = max(row.get(k, 0.0), v)


# ---------------------------------------------------------------------------------------------------------
# the comparisons
# ---------------------------------------------------------------------------------------------------------
def test_structure(case):
    """Same joints, continuous joints as (cos, sin) pairs, every urdf_dyn link has a Pinocchio frame."""
    m = case.model
    n_cont = sum(t == "continuous" for t in m.joint_types)
    assert int(np.sum(case.nqk == 2)) == n_cont
    assert case.pm.nq == m.nv + n_cont
    for link in m.link_names:
        case.frame_id(link)
    # a joint's Pinocchio parent is the Pinocchio joint of urdf_dyn's parent body
    for k in range(m.nv):
        p = int(m.parent[k + 1])
        assert case.pm.parents[int(case.jid[k])] == (0 if p == 0 else case.jid[p - 1]), m.joint_names[k]


def test_inverse_dynamics(case):
    for k in range(N_STATES):
        want = pin.rnea(case.pm, case.pd, case.pin_q(case.q[k]), case.pin_v(case.qd[k]), case.pin_v(case.qdd[k]))
        case.check("ID", urdf_dyn.inverse_dynamics(case.model, case.q[k], case.qd[k], case.qdd[k]),
                   case.from_pin_v(want), f"state {k}")


def _pin_H(case, q):
    H = np.array(pin.crba(case.pm, case.pd, case.pin_q(q)))
    H = np.triu(H) + np.triu(H, 1).T
    return case.from_pin_mat(H)


def test_mass_matrix(case):
    for k in range(N_STATES):
        case.check("H", urdf_dyn.mass_matrix(case.model, case.q[k]), _pin_H(case, case.q[k]), f"state {k}")


def test_bias_force(case):
    for k in range(N_STATES):
        want = pin.nonLinearEffects(case.pm, case.pd, case.pin_q(case.q[k]), case.pin_v(case.qd[k]))
        case.check("C", urdf_dyn.bias_force(case.model, case.q[k], case.qd[k]), case.from_pin_v(want),
                   f"state {k}")


def test_gravity_torques(case):
    for k in range(N_STATES):
        want = pin.computeGeneralizedGravity(case.pm, case.pd, case.pin_q(case.q[k]))
        case.check("g", urdf_dyn.gravity_torques(case.model, case.q[k]), case.from_pin_v(want), f"state {k}")


@pytest.mark.parametrize("method", ["aba", "crba"])
def test_forward_dynamics(case, method):
    for k in range(N_STATES):
        want = pin.aba(case.pm, case.pd, case.pin_q(case.q[k]), case.pin_v(case.qd[k]), case.pin_v(case.tau[k]))
        got = urdf_dyn.forward_dynamics(case.model, case.q[k], case.qd[k], case.tau[k], algorithm=method)
        case.check(f"FD_{method}", got, case.from_pin_v(want), f"state {k}")


def test_batch(case):
    """All states at once, (N, nv) in and out, compared row by row."""
    m, N = case.model, N_STATES
    out = {
        "ID": urdf_dyn.inverse_dynamics(m, case.q, case.qd, case.qdd),
        "H": urdf_dyn.mass_matrix(m, case.q),
        "C": urdf_dyn.bias_force(m, case.q, case.qd),
        "g": urdf_dyn.gravity_torques(m, case.q),
        "FD_aba": urdf_dyn.forward_dynamics(m, case.q, case.qd, case.tau, algorithm="aba"),
        "FD_crba": urdf_dyn.forward_dynamics(m, case.q, case.qd, case.tau, algorithm="crba"),
    }
    fk = urdf_dyn.forward_kinematics(m, case.q)
    assert out["H"].shape == (N, m.nv, m.nv)
    for key in out:
        if key != "H":
            assert out[key].shape == (N, m.nv), key
    link = m.body_names[-1]
    for k in range(N):
        qp, vp = case.pin_q(case.q[k]), case.pin_v(case.qd[k])
        case.check("batch", out["ID"][k],
                   case.from_pin_v(pin.rnea(case.pm, case.pd, qp, vp, case.pin_v(case.qdd[k]))), f"ID row {k}")
        case.check("batch", out["H"][k], _pin_H(case, case.q[k]), f"H row {k}")
        case.check("batch", out["C"][k], case.from_pin_v(pin.nonLinearEffects(case.pm, case.pd, qp, vp)),
                   f"C row {k}")
        case.check("batch", out["g"][k], case.from_pin_v(pin.computeGeneralizedGravity(case.pm, case.pd, qp)),
                   f"g row {k}")
        want = case.from_pin_v(pin.aba(case.pm, case.pd, qp, vp, case.pin_v(case.tau[k])))
        case.check("batch", out["FD_aba"][k], want, f"FD aba row {k}")
        case.check("batch", out["FD_crba"][k], want, f"FD crba row {k}")
        pin.framesForwardKinematics(case.pm, case.pd, qp)
        case.check("batch", fk[link][k], case.pd.oMf[case.frame_id(link)].homogeneous, f"FK {link} row {k}")


def _wrench_links(m):
    """The last moving link (its frame is its joint frame) and, if any, a link hung on fixed joints from a
    moving body with a non-trivial offset (e.g. a tool frame)."""
    links = [m.body_names[-1]]
    offset = [n for n, lf in m.links.items()
              if lf.body > 0 and not np.allclose(np.asarray(lf.T_body_link), np.eye(4))]
    if offset:
        links.append(max(offset, key=lambda n: m.links[n].body))
    return links


def _pin_fext(case, wrenches):
    """{link: [n; f] in the link frame} -> Pinocchio's per-joint forces [f; n] in joint frames."""
    fext = pin.StdVec_Force()
    for _ in range(case.pm.njoints):
        fext.append(pin.Force.Zero())
    for link, w in wrenches.items():
        fr = case.pm.frames[case.frame_id(link)]
        body = case.model.links[link].body
        assert fr.parentJoint == case.jid[body - 1], link  # same supporting joint on both sides
        fext[fr.parentJoint] = fext[fr.parentJoint] + fr.placement.act(pin.Force(np.r_[w[3:], w[:3]]))
    return fext


def test_external_wrench(case):
    m = case.model
    links = _wrench_links(m)
    rng = np.random.default_rng(zlib.crc32(("fext" + case.name).encode()))
    for k in range(N_STATES):
        W = {ln: 10 * rng.standard_normal(6) for ln in links}
        for sel in [[ln] for ln in links] + ([links] if len(links) > 1 else []):
            w = {ln: W[ln] for ln in sel}
            qp, vp = case.pin_q(case.q[k]), case.pin_v(case.qd[k])
            fext = _pin_fext(case, w)
            want = pin.rnea(case.pm, case.pd, qp, vp, case.pin_v(case.qdd[k]), fext)
            got = urdf_dyn.inverse_dynamics(m, case.q[k], case.qd[k], case.qdd[k], f_ext=w)
            case.check("fext", got, case.from_pin_v(want), f"ID state {k} wrench on {sel}")
            want = pin.aba(case.pm, case.pd, qp, vp, case.pin_v(case.tau[k]), fext)
            for method in ("aba", "crba"):
                got = urdf_dyn.forward_dynamics(m, case.q[k], case.qd[k], case.tau[k], f_ext=w, algorithm=method)
                case.check("fext", got, case.from_pin_v(want), f"FD {method} state {k} wrench on {sel}")
    # batch: one wrench per state
    ln = links[0]
    Wb = 10 * rng.standard_normal((N_STATES, 6))
    got = urdf_dyn.inverse_dynamics(m, case.q, case.qd, case.qdd, f_ext={ln: Wb})
    for k in range(N_STATES):
        want = pin.rnea(case.pm, case.pd, case.pin_q(case.q[k]), case.pin_v(case.qd[k]), case.pin_v(case.qdd[k]),
                        _pin_fext(case, {ln: Wb[k]}))
        case.check("fext", got[k], case.from_pin_v(want), f"batch ID row {k} wrench on {ln}")


def test_forward_kinematics(case):
    for k in range(N_STATES):
        fk = urdf_dyn.forward_kinematics(case.model, case.q[k])
        assert set(fk) == set(case.model.link_names)
        pin.framesForwardKinematics(case.pm, case.pd, case.pin_q(case.q[k]))
        for link, T in fk.items():
            case.check("FK", T, case.pd.oMf[case.frame_id(link)].homogeneous, f"state {k} link {link}")
            if k == 0:
                case.check("FK", urdf_dyn.link_pose(case.model, case.q[k], link), T, f"link_pose {link}")


@pytest.mark.parametrize("frame, ref", [("local", "LOCAL"), ("local_world_aligned", "LOCAL_WORLD_ALIGNED"),
                                        ("world", "WORLD")])
def test_link_jacobian(case, frame, ref):
    ref = getattr(pin.ReferenceFrame, ref)
    for k in range(N_STATES):
        qp = case.pin_q(case.q[k])
        for link in case.model.link_names:
            J = urdf_dyn.link_jacobian(case.model, case.q[k], link, frame=frame)
            Jp = np.asarray(pin.computeFrameJacobian(case.pm, case.pd, qp, case.frame_id(link), ref))[:, case.iv]
            case.check("J", J[TO_PIN_ROWS], Jp, f"{frame} state {k} link {link}")


def test_mass_matrix_spd(case):
    for k in range(N_STATES):
        H = urdf_dyn.mass_matrix(case.model, case.q[k])
        assert np.linalg.norm(H - H.T) <= 1e-14 * np.linalg.norm(H), f"{case.name}: H not symmetric"
        ev = np.linalg.eigvalsh(H)
        assert ev[0] > 0, f"{case.name}: H not positive definite at state {k} (eigenvalues {ev[:3]} ...)"
        np.linalg.cholesky(H)


@pytest.mark.parametrize("method", ["aba", "crba"])
def test_fd_inverts_id(case, method):
    m = case.model
    for k in range(N_STATES):
        tau = urdf_dyn.inverse_dynamics(m, case.q[k], case.qd[k], case.qdd[k])
        qdd = urdf_dyn.forward_dynamics(m, case.q[k], case.qd[k], tau, algorithm=method)
        case.check("FD(ID)", qdd, case.qdd[k], f"{method} state {k}")
