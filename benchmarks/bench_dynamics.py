"""Dynamics benchmarks side by side with Pinocchio and MuJoCo (tree per call, batched, closed loops, growth,
memory); called by ``run.py``."""
import subprocess
import sys

import numpy as np

from bench_common import (ROOT, SHARED, _per_call, chain_urdf, erd_package_dirs, erd_path, ladder_urdf, timeit,
                          ud)


def tree_per_call(rows, quick):
    import pinocchio as pin
    n, rep = (300, 3) if quick else (3000, 7)
    robots = {"UR5": (erd_path("ur5_robot.urdf"), erd_package_dirs()),
              "Panda": (erd_path("panda.urdf"), erd_package_dirs()),
              "chain30": (chain_urdf(30), None)}
    for name, (src, pk) in robots.items():
        model = ud.load(src, package_dirs=pk) if not isinstance(src, str) else ud.load(src)
        pm = pin.buildModelFromXML(model.urdf_xml)
        pd = pm.createData()
        rng = np.random.default_rng(0)
        q, qd, qdd = rng.uniform(-1, 1, (3, model.nv))
        perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
        if pm.nq != pm.nv:
            continue
        qp, vp, ap = q[perm], qd[perm], qdd[perm]
        _per_call(rows, name, model, pm, pd, (q, qd, qdd), (qp, vp, ap), n, rep)


def floating_per_call(rows, quick):
    """Free-flyer robots: urdf_dyn with floating_base=True against Pinocchio's JointModelFreeFlyer
    model of the same file, one call, the same state (q, v, a laid out by joint name; the base block is the
    same layout in both)."""
    import pinocchio as pin
    n, rep = (300, 3) if quick else (3000, 7)
    for name, file in (("Talos (free-flyer)", "talos_full_v2.urdf"), ("Solo-12 (free-flyer)", "solo12.urdf")):
        path = erd_path(file)
        model = ud.load(path, package_dirs=erd_package_dirs(), floating_base=True)
        pm = pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
        pd = pm.createData()
        qp = pin.neutral(pm)
        rng = np.random.default_rng(0)
        vp, ap = rng.uniform(-1, 1, (2, pm.nv))
        q, v, a = np.zeros(model.nq), np.zeros(model.nv), np.zeros(model.nv)
        q[:7], v[:6], a[:6] = qp[:7], vp[:6], ap[:6]
        for k in range(2, pm.njoints):
            j = pm.joints[k]
            if j.nq != 1:
                break
            q[model.q_index(pm.names[k])] = qp[j.idx_q]
            v[model.joint_index(pm.names[k])] = vp[j.idx_v]
            a[model.joint_index(pm.names[k])] = ap[j.idx_v]
        else:
            _per_call(rows, name, model, pm, pd, (q, v, a), (qp, vp, ap), n, rep)


def batched_id(rows, quick):
    import pinocchio as pin
    robots = {"UR5": ud.load(erd_path("ur5_robot.urdf"), package_dirs=erd_package_dirs()),
              "chain30": ud.load(chain_urdf(30))}
    sizes = (1, 100, 1000) if quick else (1, 100, 10000)
    for name, model in robots.items():
        pm = pin.buildModelFromXML(model.urdf_xml)
        pd = pm.createData()
        pool = pin.ModelPool(pm, 1)
        perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
        for N in sizes:
            rng = np.random.default_rng(1)
            Q, QD, QDD = rng.uniform(-1, 1, (3, N, model.nv))
            Qp, Vp, Ap = (np.asfortranarray(X[:, perm].T) for X in (Q, QD, QDD))
            rep = 3 if (quick or N >= 10000) else 7
            num = max(1, 3000 // N)
            ours = timeit(lambda: ud.inverse_dynamics(model, Q, QD, QDD), num, rep)

            def loop():
                for k in range(N):
                    pin.rnea(pm, pd, Qp[:, k], Vp[:, k], Ap[:, k])
            peer = timeit(loop, num, rep)
            tau = np.zeros((model.nv, N), order="F")
            par = timeit(lambda: pin.rneaInParallel(1, pool, Qp, Vp, Ap, tau), num, rep)
            rows.append((name, N, ours[0] / N, peer[0] / N, par[0] / N))


def closed_loop_fd(rows, quick):
    import mujoco
    from urdf_dyn.constraints.forward import METHODS, constrained_forward_dynamics
    model = ud.load(SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_loops.urdf")
    mm = mujoco.MjModel.from_xml_path(str(SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_dynamics_only.xml"))
    md = mujoco.MjData(mm)
    q, z = model.q_initial(), np.zeros(model.nv)
    n, rep = (20, 3) if quick else (200, 5)
    peer = timeit(lambda: mujoco.mj_forward(mm, md), n * 10, rep)
    for m in METHODS:
        ours = timeit(lambda: constrained_forward_dynamics(model, q, z, z, loop_solver=m), n, rep)
        rows.append((m, ours, peer))
    from urdf_dyn.constraints.forward import fast_qdd
    data = ud.Data(model)          # as simulate does: the independent rows are remembered between steps
    rows.append(("fast_qdd (simulate's inner loop, method 2 + Baumgarte)",
                 timeit(lambda: fast_qdd(model, q, z, z, 0.1, data=data), n, rep), peer))


def growth(rows, quick):
    sizes = (6, 12, 25, 50) if quick else (6, 12, 25, 50, 100)
    for n in sizes:
        model = ud.load(chain_urdf(n))
        q = np.random.default_rng(2).uniform(-1, 1, model.nv)
        num, rep = (200, 3) if quick else (1000, 5)
        rows.append((n, timeit(lambda: ud.inverse_dynamics(model, q, q, q), num, rep)[0],
                     timeit(lambda: ud.forward_dynamics(model, q, q, q), num, rep)[0],
                     timeit(lambda: ud.mass_matrix(model, q), num, rep)[0]))


def ladder(rows, quick):
    from urdf_dyn.constraints.forward import constrained_forward_dynamics
    for k in ((2, 4, 8) if quick else (2, 4, 8, 16, 32)):
        model = ud.load(ladder_urdf(k))
        q, z = model.q_initial(), np.zeros(model.nv)
        num, rep = (5, 3) if quick else (20, 3)
        rows.append((k, model.nv, timeit(lambda: constrained_forward_dynamics(model, q, z, z, loop_solver="nullspace"), num, rep)[0],
                     timeit(lambda: constrained_forward_dynamics(model, q, z, z, loop_solver="lambda"), num, rep)[0],
                     timeit(lambda: constrained_forward_dynamics(model, q, z, z, loop_solver="sparse"), num, rep)[0]))


def dig_cycle(dt):
    """The main job's motion (scenarios/excavator_dig.scenario.yaml) at sampling step dt, and its models per
    sample: a 1.8 t payload at the soil payload's centroid from the end of the `curl` phase to the middle of
    the `dump` phase (the main job builds its payload up continuously from the soil it cuts, as an external
    wrench; a rigid payload group keeps this benchmark's work the same as before that change)."""
    import yaml
    d = yaml.safe_load((ROOT / "scenarios" / "excavator_dig.scenario.yaml").read_text())
    model = ud.load(ROOT / "robots" / "excavator.urdf")
    names = d["motion"]["independent"]
    way = [[w[n] for n in names] for w in d["motion"]["waypoints"]]
    mo = ud.spline_motion(names, way, d["motion"]["durations"], dt=dt, kind=d["motion"]["type"])
    pl = d.get("payload") or {"link": "bucket", "mass": 1800.0, "com": d["soil"]["payload"]["com"]}
    if "from" in pl:
        t0, t1 = pl["from"], pl["until"]
    else:
        ph, du = d["motion"]["phases"], d["motion"]["durations"]
        ends = np.cumsum(du)
        t0 = ends[ph.index("curl")]
        t1 = ends[ph.index("dump")] - 0.5 * du[ph.index("dump")]
    loaded = model.with_payload(pl["link"], pl["mass"], pl["com"])
    models = [loaded if t0 <= t <= t1 else model for t in mo.t]
    return model, mo, models


def trajectory_dynamics(rows, quick):
    """Main-job dynamics: consistent_motion + size_motion over the main job's cycle at 1 ms, compiled path vs
    the readable reference path (per sample, on the first samples of the same motion)."""
    from urdf_dyn.machines.sizing import size_motion
    import warnings
    dt = 0.01 if quick else 0.001
    model, mo, models = dig_cycle(dt)
    N = len(mo.t)

    def ours():
        Q, QD, QDD = ud.consistent_motion(model, mo, progress=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            size_motion(model, mo.t, Q, QD, QDD, models=models)
    ours()
    t_m = timeit(lambda: ud.consistent_motion(model, mo, progress=False), 1, 3 if quick else 5)
    t_all = timeit(ours, 1, 3 if quick else 5)
    n_ref = 100 if quick else 400
    sub = type(mo)(mo.names, mo.t[:n_ref], mo.y[:n_ref], mo.yd[:n_ref], mo.ydd[:n_ref])

    def ref():
        Q, QD, QDD = ud.consistent_motion(model, sub, progress=False, compiled=False)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ud.actuator_forces(model, Q, QD, QDD, compiled=False, warn=False)
    t_ref = timeit(ref, 1, 3)
    rows.append(("consistent_motion", N, t_m, None))
    rows.append(("consistent_motion + size_motion (payload groups)", N, t_all, (t_ref[0] / n_ref, t_ref[1] / n_ref)))


def closed_loop_id(rows, quick):
    """Closed-loop ID + actuator forces + loop forces per sample on the shared excavator, against MuJoCo's
    mj_inverse on the shared MJCF (same machine, 12 dof, 4 loops as equality constraints)."""
    import mujoco
    import warnings
    from urdf_dyn.constraints.inverse import actuator_forces
    model = ud.load(SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_loops.urdf")
    mm = mujoco.MjModel.from_xml_path(str(SHARED / "excavator_simulator_mujoco" / "_derived" / "excavator_dynamics_only.xml"))
    md = mujoco.MjData(mm)
    q0 = ud.assemble(model, model.q_initial())
    names = ud.explicit_constraint(model, q0, np.zeros(model.nv)).independent
    y0 = np.array([q0[model.joint_index(j)] for j in names])
    N = 1000 if quick else 10000
    mo = ud.spline_motion(names, [y0, y0 + 0.05, y0], [N * 0.0005, N * 0.0005], dt=0.001, kind="quintic")
    Q, QD, QDD = ud.consistent_motion(model, mo, q_start=q0, progress=False)
    N = len(Q)
    md.qpos[:] = 0.0
    mujoco.mj_forward(mm, md)
    md.qacc[:] = 0.0
    peer = timeit(lambda: mujoco.mj_inverse(mm, md), 20000 if not quick else 2000, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        actuator_forces(model, Q[:2], QD[:2], QDD[:2])
        batch = timeit(lambda: actuator_forces(model, Q, QD, QDD, warn=False), 1, 5 if not quick else 3)
        # the same work in calls of 200 samples (~3 ms each): timed within quiet slices of a shared machine
        chunk = timeit(lambda: actuator_forces(model, Q[:200], QD[:200], QDD[:200], warn=False), 1, 25)
        one = timeit(lambda: actuator_forces(model, Q[5], QD[5], QDD[5], warn=False), 2000 if not quick else 200, 5)
        ref = timeit(lambda: actuator_forces(model, Q[:50], QD[:50], QDD[:50], warn=False, compiled=False), 1, 3)
    o = mm.opt
    settings = (f"MuJoCo {mujoco.__version__}, mj_inverse on excavator_dynamics_only.xml: nv {mm.nv}, {mm.neq} equality "
                f"constraints, solver {mujoco.mjtSolver(o.solver).name}, cone {mujoco.mjtCone(o.cone).name}, jacobian "
                f"{mujoco.mjtJacobian(o.jacobian).name}, timestep {o.timestep:g} s, iterations {o.iterations}, tolerance "
                f"{o.tolerance:g}, state qpos = 0, qvel = 0, qacc = 0 after mj_forward")
    rows.append((f"batches of N = 200, per sample", (chunk[0] / 200, chunk[1] / 200), peer, settings))
    rows.append((f"one batch of N = {N}, per sample", (batch[0] / N, batch[1] / N), peer, settings))
    rows.append(("one state (N = 1)", one, peer, settings))
    rows.append(("readable reference, per sample", (ref[0] / 50, ref[1] / 50), peer, settings))


def batched_threads(rows, quick):
    """Batched tree ID at equal threads: ours with numba on 1 and 2 threads vs pin.rneaInParallel(1 | 2)."""
    import numba
    import pinocchio as pin
    model = ud.load(erd_path("ur5_robot.urdf"), package_dirs=erd_package_dirs())
    pm = pin.buildModelFromXML(model.urdf_xml)
    perm = [model.joint_index(pm.names[i]) for i in range(1, pm.njoints)]
    N = 10000
    rng = np.random.default_rng(1)
    Q, QD, QDD = rng.uniform(-1, 1, (3, N, model.nv))
    Qp, Vp, Ap = (np.asfortranarray(X[:, perm].T) for X in (Q, QD, QDD))
    tau = np.zeros((model.nv, N), order="F")
    base = numba.get_num_threads()
    for th in (1, 2):
        if th > numba.config.NUMBA_NUM_THREADS:
            continue
        numba.set_num_threads(th)
        pool = pin.ModelPool(pm, th)
        ours = timeit(lambda: ud.inverse_dynamics(model, Q, QD, QDD), 1, 3 if quick else 9)
        par = timeit(lambda: pin.rneaInParallel(th, pool, Qp, Vp, Ap, tau), 1, 3 if quick else 9)
        rows.append(("UR5", N, th, ours[0] / N, par[0] / N))
    numba.set_num_threads(base)


MEMORY_SNIPPET = """
import resource, sys, numpy as np
sys.path.insert(0, {root!r})
import urdf_dyn as ud
m = ud.load({src!r}, package_dirs={pk!r})
q = np.zeros((2, m.nv)); ud.inverse_dynamics(m, q, q, q)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
N = 100000
Q = np.random.default_rng(0).uniform(-1, 1, (N, m.nv))
tau = ud.inverse_dynamics(m, Q, Q, Q)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(base, peak)
"""


def memory(rows):
    src = str(erd_path("ur5_robot.urdf"))
    out = subprocess.run([sys.executable, "-c", MEMORY_SNIPPET.format(root=str(ROOT), src=src, pk=erd_package_dirs())],
                         capture_output=True, text=True, check=True).stdout.split()
    base, peak = (int(x) / 1024 for x in out)  # KiB -> MiB
    rows.append(("UR5", 100000, base, peak))
