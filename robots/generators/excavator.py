"""Generator for robots/excavator.urdf (20 t class): python robots/generators/excavator.py robots/excavator.urdf
  Planar design in the x-z plane, then URDF.

2-D convention: a frame has origin O (x, z) and elevation e (CCW angle of its x axis in the side view,
x forward, z up).  URDF: xyz = (x, 0, z), rpy = (0, -e, 0) (a +y rotation is clockwise in side view).
"""
import numpy as np

d2r = np.pi / 180


def R(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s], [s, c]])


def elev(v):
    return float(np.arctan2(v[1], v[0]))


def circ(P1, r1, P2, r2, side=1):
    dv = P2 - P1
    dd = np.linalg.norm(dv)
    a = (r1**2 - r2**2 + dd**2) / (2 * dd)
    h = np.sqrt(r1**2 - a**2)
    n = np.array([-dv[1], dv[0]]) / dd
    return P1 + a * dv / dd + side * h * n


def fmt(v):
    s = "%.12f" % v
    s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def v3(x, y, z):
    return f"{fmt(x)} {fmt(y)} {fmt(z)}"


# ------------------------------------------------------------------ design inputs (see header comment)
Z_SWING = 1.00                      # slewing-ring top above ground
F_h = np.array([0.20, 1.00])        # boom foot pin, house frame (x, z)
C1_h = np.array([0.70, 0.32])       # boom cylinder base pin, house frame
L_BOOM = 5.70                       # boom pin to pin (foot -> stick pivot)
E1_b = np.array([2.70, 0.04])       # boom cylinder rod eye on boom, boom frame
C2_b = np.array([3.00, 1.05])       # stick cylinder base pin on boom top, boom frame
L_STICK = 2.90                      # stick pivot -> bucket pin
E2_s = np.array([-0.92, 0.06])      # stick cylinder rod eye on the stick tail, stick frame
C3_s = np.array([0.35, 0.45])       # bucket cylinder base pin on stick top, stick frame
K_s = np.array([2.55, 0.00])        # side (guide) link pivot on stick, stick frame
S_LEN, H_LEN, D_LEN = 0.66, 0.65, 0.40   # side link, H-link, bucket link-pin radius
PHI_D = 105 * d2r                   # angle of bucket link pin D from the B->tip line (bucket frame)
TIP_R = 1.47                        # bucket tip radius (CAT 320 HD bucket)

ALPHA0 = 35 * d2r                   # boom chord elevation at q = 0
BETA0 = -130 * d2r                  # stick x relative to boom chord at q = 0 (stick 95 deg below horizontal)
GAMMA0 = -50 * d2r                  # bucket x (pin->tip) relative to stick x at q = 0

P_SYS = 35e6                        # main relief, normal mode [Pa]
CYL = dict(  # bore, rod, stroke, closed (retracted) pin-to-pin length, number in parallel
    boom=dict(bore=0.120, rod=0.085, stroke=1.260, closed=1.880, n=2),
    stick=dict(bore=0.140, rod=0.100, stroke=1.504, closed=2.150, n=1),
    bucket=dict(bore=0.120, rod=0.085, stroke=1.104, closed=1.650, n=1),
)
Q_PUMP = 214.5e-3 / 60              # one pump [m^3/s]
CYL["boom"]["flow"] = 2 * Q_PUMP
CYL["stick"]["flow"] = 2 * Q_PUMP
CYL["bucket"]["flow"] = Q_PUMP

MASS = dict(undercarriage=7500.0, house=9000.0, counterweight=4200.0, boom=1900.0, stick=1000.0,
            bucket=950.0, side_link=60.0, h_link=90.0,
            boom_cyl_barrel=280.0, boom_cyl_rod=150.0, stick_cyl_barrel=220.0, stick_cyl_rod=120.0,
            bucket_cyl_barrel=150.0, bucket_cyl_rod=70.0)

# ------------------------------------------------------------------ planar kinematics at q = 0 (world 2-D)
Hw = np.array([0.0, Z_SWING])                # house origin
Fw = Hw + F_h
C1w = Hw + C1_h
Tw = Fw + R(ALPHA0) @ np.array([L_BOOM, 0.0])
E1w = Fw + R(ALPHA0) @ E1_b
C2w = Fw + R(ALPHA0) @ C2_b
e_stick = ALPHA0 + BETA0
E2w = Tw + R(e_stick) @ E2_s
Bw = Tw + R(e_stick) @ np.array([L_STICK, 0.0])
C3w = Tw + R(e_stick) @ C3_s
Kw = Tw + R(e_stick) @ K_s
e_bucket = e_stick + GAMMA0
Dw = Bw + R(e_bucket) @ (D_LEN * np.array([np.cos(PHI_D), np.sin(PHI_D)]))
Gw = circ(Kw, S_LEN, Dw, H_LEN, side=1)      # apex on the cylinder (+z stick) side
TIPw = Bw + R(e_bucket) @ np.array([TIP_R, 0.0])
e_side = elev(Gw - Kw)
e_h = elev(Dw - Gw)
e_c1, e_c2, e_c3 = elev(E1w - C1w), elev(E2w - C2w), elev(Gw - C3w)
L1_0, L2_0, L3_0 = (np.linalg.norm(E1w - C1w), np.linalg.norm(E2w - C2w), np.linalg.norm(Gw - C3w))
check_zero = (0.0, 0.0)


def inv2(O, e, P):
    """point P (world 2-D) in the frame (O, e)"""
    return R(-e) @ (P - O)


# ------------------------------------------------------------------ joint ranges implied by the strokes
def boom_alpha(L):  # elevation of chord for boom cylinder length L (house frame)
    from scipy.optimize import brentq
    f = lambda a: np.linalg.norm(F_h + R(a) @ E1_b - C1_h) - L
    return brentq(f, -55 * d2r, 85 * d2r)


def stick_beta(L):
    from scipy.optimize import brentq
    f = lambda b: np.linalg.norm(np.array([L_BOOM, 0]) + R(b) @ E2_s - C2_b) - L
    return brentq(f, -172 * d2r, -30 * d2r)


def bucket_state(L):
    """stick-frame linkage for bucket cylinder length L: side-link angle, H-link angle, bucket angle, pin angle"""
    G = circ(K_s, S_LEN, C3_s, L, side=-1)      # G on the far (bucket) side of line K-C3 ... chosen below
    return G


def bucket_from_L(L, Gref):
    # both intersections of circle(K, s) and circle(C3, L); take the one closest to the q=0 branch
    cands = [circ(K_s, S_LEN, C3_s, L, side=sd) for sd in (1, -1)]
    G = min(cands, key=lambda g: np.linalg.norm(g - Gref))
    B = np.array([L_STICK, 0.0])
    Dc = [circ(G, H_LEN, B, D_LEN, side=sd) for sd in (1, -1)]
    return G, Dc


if __name__ == "__main__":
    np.set_printoptions(precision=4, suppress=True)
    print("Fw", Fw, "Tw", Tw, "Bw", Bw, "TIP", TIPw, "G", Gw, "D", Dw)
    print("L0", L1_0, L2_0, L3_0)
    for k, L0 in (("boom", L1_0), ("stick", L2_0), ("bucket", L3_0)):
        c = CYL[k]
        print(k, "closed", c["closed"], "L0", round(L0, 4), "ext", c["closed"] + c["stroke"],
              "frac", round((L0 - c["closed"]) / c["stroke"], 3))


# ================================================================== inertia helpers (3-D, about COM, link axes)
def box_I(m, lx, ly, lz):
    return m / 12.0 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])


def cyl_x_I(m, r, L, hollow_ri=0.0):
    """cylinder along x (solid, or thick tube with inner radius hollow_ri)"""
    rr = r**2 + hollow_ri**2
    return np.diag([m * rr / 2, m * (3 * rr + L**2) / 12, m * (3 * rr + L**2) / 12])


def Ry(t):
    c, s = np.cos(t), np.sin(t)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def combine(parts):
    """parts: list of (m, c(3), I_c(3x3) in link axes) -> (m, c, I about c)"""
    m = sum(p[0] for p in parts)
    c = sum(p[0] * np.asarray(p[1], float) for p in parts) / m
    I = np.zeros((3, 3))
    for mi, ci, Ii in parts:
        d = np.asarray(ci, float) - c
        I += Ii + mi * (d @ d * np.eye(3) - np.outer(d, d))
    return m, c, I


def seg_box(m, p0, p1, wy, hz):
    """box of mass m along the 2-D segment p0->p1 (x-z of the link frame), width wy, depth hz"""
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    L = np.linalg.norm(p1 - p0)
    e = elev(p1 - p0)
    Rm = Ry(-e)
    c2 = (p0 + p1) / 2
    return (m, np.array([c2[0], 0, c2[1]]), Rm @ box_I(1.0, L, wy, hz) @ Rm.T * m), (L, e, c2)


# ================================================================== XML emitters
def origin(xyz, rpy=(0, 0, 0)):
    return f'<origin xyz="{v3(*xyz)}" rpy="{v3(*rpy)}"/>'


def o2(p2, e=0.0):
    """origin from a 2-D point (x, z) and a relative elevation"""
    return origin((p2[0], 0.0, p2[1]), (0.0, -e, 0.0))


def inertial_xml(m, c, I):
    return (f'    <inertial>\n      {origin(c)}\n      <mass value="{fmt(m)}"/>\n'
            f'      <inertia ixx="{I[0,0]:.6g}" ixy="{I[0,1]:.6g}" ixz="{I[0,2]:.6g}" '
            f'iyy="{I[1,1]:.6g}" iyz="{I[1,2]:.6g}" izz="{I[2,2]:.6g}"/>\n    </inertial>')


def vis_box(name, size, xyz, rpy=(0, 0, 0), mat="yellow"):
    return (f'    <visual name="{name}">\n      {origin(xyz, rpy)}\n'
            f'      <geometry><box size="{v3(*size)}"/></geometry>\n      <material name="{mat}"/>\n    </visual>')


def vis_cyl(name, r, L, xyz, rpy, mat):
    return (f'    <visual name="{name}">\n      {origin(xyz, rpy)}\n'
            f'      <geometry><cylinder radius="{fmt(r)}" length="{fmt(L)}"/></geometry>\n'
            f'      <material name="{mat}"/>\n    </visual>')


def vis_seg(name, p0, p1, wy, hz, mat="yellow", y=0.0, extend=0.0):
    p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
    L = np.linalg.norm(p1 - p0) + extend
    e = elev(p1 - p0)
    c = (p0 + p1) / 2
    return vis_box(name, (L, wy, hz), (c[0], y, c[1]), (0, -e, 0), mat)


def vis_pin(name, p2, r, wy, mat="grey"):
    return vis_cyl(name, r, wy, (p2[0], 0, p2[1]), (np.pi / 2, 0, 0), mat)


# ================================================================== ranges swept by the strokes
def sweep_ranges(n=401):
    from scipy.optimize import brentq
    out = {}
    # boom
    c = CYL["boom"]
    Ls = np.linspace(c["closed"], c["closed"] + c["stroke"], n)
    al = np.array([boom_alpha(L) for L in Ls])
    out["boom"] = -(al - ALPHA0)
    out["boom_cyl_pin"] = -(np.array([elev(F_h + R(a) @ E1_b - C1_h) for a in al]) - e_c1)
    out["boom_cyl"] = Ls - L1_0
    # stick
    c = CYL["stick"]
    Ls = np.linspace(c["closed"], c["closed"] + c["stroke"], n)
    be = np.array([stick_beta(L) for L in Ls])
    out["stick"] = -(be - BETA0)
    T_b = np.array([L_BOOM, 0.0])
    out["stick_cyl_pin"] = -(np.array([elev(T_b + R(b) @ E2_s - C2_b) for b in be]) - (e_c2 - ALPHA0))
    out["stick_cyl"] = Ls - L2_0
    # bucket linkage, tracked continuously from L3_0 in both directions (stick frame)
    c = CYL["bucket"]
    B = np.array([L_STICK, 0.0])
    G0, D0 = inv2(Tw, e_stick, Gw), inv2(Tw, e_stick, Dw)
    rows = []
    for Lend in (c["closed"], c["closed"] + c["stroke"]):
        G, D = G0, D0
        for L in np.linspace(L3_0, Lend, n):
            G = min((circ(K_s, S_LEN, C3_s, L, sd) for sd in (1, -1)), key=lambda g: np.linalg.norm(g - G))
            D = min((circ(G, H_LEN, B, D_LEN, sd) for sd in (1, -1)), key=lambda d: np.linalg.norm(d - D))
            es, eh = elev(G - K_s), elev(D - G)
            gam = elev(D - B) - PHI_D
            rows.append((L, es, eh, gam, elev(G - C3_s)))
    rows = np.array(rows)
    es0, eh0 = e_side - e_stick, e_h - e_stick
    wrap = lambda a: (a + np.pi) % (2 * np.pi) - np.pi
    out["bucket_cyl"] = rows[:, 0] - L3_0
    out["side_link_pin"] = -wrap(rows[:, 1] - es0)
    out["h_link_pin"] = -wrap((rows[:, 2] - rows[:, 1]) - (eh0 - es0))
    out["bucket"] = -wrap(rows[:, 3] - GAMMA0)
    out["bucket_cyl_pin"] = -wrap(rows[:, 4] - (e_c3 - e_stick))
    return {k: (float(v.min()), float(v.max())) for k, v in out.items()}


# ================================================================== build
def cyl_parts(key, twin_y=0.0):
    """(barrel inertial parts, rod inertial parts, visuals...) for cylinder `key` in its own frames"""
    c = CYL[key]
    ro = c["bore"] / 2 + 0.0125 + (0.005 if c["bore"] > 0.13 else 0.0)   # tube wall ~12.5-17.5 mm
    Lb = c["closed"] - 0.18                      # tube from x = 0.08 (cap/eye) to closed - 0.10 (gland)
    xb = 0.08 + Lb / 2
    Lr = c["stroke"] + 0.30                      # rod incl. piston, eye end at x = 0
    rr = c["rod"] / 2
    ys = (-twin_y, twin_y) if twin_y else (0.0,)
    mb, mr = MASS[f"{key}_cyl_barrel"] / len(ys), MASS[f"{key}_cyl_rod"] / len(ys)
    bparts = [(mb, (xb, y, 0), cyl_x_I(mb, ro, Lb, c["bore"] / 2)) for y in ys]
    rparts = [(mr, (-Lr / 2, y, 0), cyl_x_I(mr, rr, Lr)) for y in ys]
    bvis, rvis = [], []
    for i, y in enumerate(ys):
        sfx = "" if len(ys) == 1 else ("_right", "_left")[i]
        bvis.append(vis_cyl(f"barrel{sfx}", ro, Lb, (xb, y, 0), (0, np.pi / 2, 0), "yellow"))
        bvis.append(vis_cyl(f"base_eye{sfx}", ro, 0.12, (0, y, 0), (np.pi / 2, 0, 0), "dark_grey"))
        rvis.append(vis_cyl(f"rod{sfx}", rr, Lr, (-Lr / 2, y, 0), (0, np.pi / 2, 0), "grey"))
        rvis.append(vis_cyl(f"rod_eye{sfx}", rr + 0.03, 0.12, (0, y, 0), (np.pi / 2, 0, 0), "dark_grey"))
    return bparts, rparts, bvis, rvis, dict(ro=ro, Lb=Lb, Lr=Lr)


def link_xml(name, parts, visuals, comment=None):
    m, c, I = combine(parts)
    ev = np.linalg.eigvalsh(I)
    assert ev.min() > 0 and ev[0] + ev[1] >= ev[2] * (1 - 1e-12), (name, ev)
    s = f'  <link name="{name}">\n'
    if comment:
        s += f"    <!-- {comment} -->\n"
    s += inertial_xml(m, c, I) + "\n" + "\n".join(visuals) + "\n  </link>\n"
    return s, (m, c, I)


def joint_xml(name, jtype, parent, child, org, axis=(0, 1, 0), limit=None, comment=None):
    s = ""
    if comment:
        s += f"  <!-- {comment} -->\n"
    s += f'  <joint name="{name}" type="{jtype}">\n    <parent link="{parent}"/>\n    <child link="{child}"/>\n'
    s += f"    {org}\n    <axis xyz=\"{v3(*axis)}\"/>\n"
    if limit:
        s += "    <limit " + " ".join(f'{k}="{v if isinstance(v, str) else fmt(v)}"' for k, v in limit.items()) + "/>\n"
    s += "  </joint>\n"
    return s


def loop_xml(name, pred, p_org, succ, s_org, comment=None):
    s = ""
    if comment:
        s += f"  <!-- {comment} -->\n"
    s += (f'  <loop name="{name}" type="revolute">\n'
          f'    <predecessor link="{pred}">{p_org}</predecessor>\n'
          f'    <successor link="{succ}">{s_org}</successor>\n'
          f'    <axis xyz="0 1 0"/>\n  </loop>\n')
    return s


def transmission_xml(joint, iface="EffortJointInterface"):
    return (f'  <transmission name="{joint}_transmission">\n'
            f'    <type>transmission_interface/SimpleTransmission</type>\n'
            f'    <joint name="{joint}">\n      <hardwareInterface>hardware_interface/{iface}</hardwareInterface>\n'
            f'    </joint>\n    <actuator name="{joint}_actuator">\n'
            f'      <hardwareInterface>hardware_interface/{iface}</hardwareInterface>\n'
            f'      <mechanicalReduction>1</mechanicalReduction>\n    </actuator>\n  </transmission>\n')


def cyl_force(key, p=P_SYS):
    c = CYL[key]
    a_cap = np.pi / 4 * c["bore"] ** 2
    a_ann = np.pi / 4 * (c["bore"] ** 2 - c["rod"] ** 2)
    return c["n"] * p * a_cap, c["n"] * p * a_ann, c["flow"] / (c["n"] * a_cap)


def build():
    rng = sweep_ranges()
    MARG = 0.01
    L = {}   # link xml
    info = {}

    # ---- undercarriage (root, fixed on the ground)
    tr_y, tr_l, tr_w, tr_h = 2.38 / 2, 4.45, 0.79, 0.92
    parts = [(2900.0, (0, y, tr_h / 2), box_I(2900.0, tr_l, tr_w, tr_h)) for y in (-tr_y, tr_y)]
    parts.append((1700.0, (0, 0, 0.70), box_I(1700.0, 2.4, 1.6, 0.5)))
    vis = [vis_box(f"track_{s}", (tr_l, tr_w, tr_h), (0, y, tr_h / 2), mat="black")
           for s, y in (("right", -tr_y), ("left", tr_y))]
    vis += [vis_box("carbody", (2.4, 1.6, 0.5), (0, 0, 0.70), mat="black"),
            vis_cyl("swing_bearing", 0.55, 0.12, (0, 0, Z_SWING - 0.06), (0, 0, 0), "dark_grey")]
    L["undercarriage"], info["undercarriage"] = link_xml(
        "undercarriage", parts, vis,
        "frame on the ground under the swing centre; 2 track groups (4.45 m x 0.79 m shoes, gauge 2.38 m) + carbody")

    # ---- house (upper structure + counterweight)
    mcw = MASS["counterweight"]
    mrest = MASS["house"] - mcw
    parts = [(mcw, (-2.38, 0, 0.62), box_I(mcw, 0.70, 2.60, 1.10)),
             (mrest, (-0.30, 0, 0.75), box_I(mrest, 3.60, 2.70, 1.30))]
    vis = [vis_box("counterweight", (0.70, 2.60, 1.10), (-2.38, 0, 0.62), mat="dark_grey"),
           vis_box("engine_deck", (2.40, 2.70, 1.20), (-0.85, 0, 0.70)),
           vis_box("upper_frame", (3.90, 2.78, 0.20), (-0.70, 0, 0.10)),
           vis_box("cab", (1.55, 1.00, 1.70), (0.40, 0.85, 1.05), mat="glass"),
           vis_box("right_front_tank", (1.20, 1.00, 0.95), (0.55, -0.85, 0.57)),
           vis_box("boom_foot_bracket", (0.95, 0.60, 1.00), (0.42, 0, 0.55)),
           vis_pin("boom_foot_pin", F_h, 0.06, 0.70),
           vis_pin("boom_cyl_base_pin", C1_h, 0.05, 1.05)]
    L["house"], info["house"] = link_xml(
        "house", parts, vis,
        "upper structure: frame, engine, pumps, tanks, cab (4800 kg, box) + counterweight (4200 kg, box at the tail)")

    # ---- boom: banana boom, chord foot -> tip along x
    KNEE = np.array([3.00, 0.70])
    TIP_b = np.array([L_BOOM, 0.0])
    p1, g1 = seg_box(1000.0, (0, 0), KNEE, 0.55, 0.65)
    p2, g2 = seg_box(750.0, KNEE, TIP_b, 0.45, 0.50)
    brk_lo = np.array([E1_b[0], (E1_b[1] + 0.30) / 2])
    brk_hi = np.array([C2_b[0], 1.00])
    parts = [p1, p2, (75.0, (brk_lo[0], 0, brk_lo[1]), box_I(75.0, 0.35, 0.50, 0.30)),
             (75.0, (brk_hi[0], 0, brk_hi[1]), box_I(75.0, 0.40, 0.30, 0.25))]
    vis = [vis_seg("boom_rear", (0, 0), KNEE, 0.55, 0.65, extend=0.3),
           vis_seg("boom_front", KNEE, TIP_b, 0.45, 0.50, extend=0.3),
           vis_box("boom_cyl_bracket", (0.35, 0.50, 0.34), (brk_lo[0], 0, brk_lo[1])),
           vis_box("stick_cyl_bracket", (0.40, 0.30, 0.25), (brk_hi[0], 0, brk_hi[1])),
           vis_pin("boom_cyl_eye_pin", E1_b, 0.05, 1.05),
           vis_pin("stick_cyl_base_pin", C2_b, 0.055, 0.45),
           vis_pin("stick_pin", TIP_b, 0.06, 0.60)]
    L["boom"], info["boom"] = link_xml(
        "boom", parts, vis, f"5.70 m banana boom; knee at (3.0, 0.7) in the boom frame (x = foot pin -> stick pin)")

    # ---- stick: pivot at origin, bucket pin at (2.9, 0), tail (stick cylinder eye) at E2_s
    p1, _ = seg_box(900.0, E2_s, (L_STICK, 0.0), 0.42, 0.45)
    brk = np.array([C3_s[0], 0.32])
    parts = [p1, (50.0, (brk[0], 0, brk[1]), box_I(50.0, 0.30, 0.30, 0.30)),
             (50.0, (L_STICK, 0, 0), box_I(50.0, 0.25, 0.50, 0.25))]
    vis = [vis_seg("stick_beam", E2_s, (L_STICK, 0.0), 0.42, 0.45, extend=0.2),
           vis_box("bucket_cyl_bracket", (0.30, 0.30, 0.30), (brk[0], 0, brk[1])),
           vis_pin("stick_cyl_eye_pin", E2_s, 0.055, 0.45),
           vis_pin("bucket_cyl_base_pin", C3_s, 0.05, 0.40),
           vis_pin("side_link_pivot_pin", K_s, 0.045, 0.65),
           vis_pin("bucket_pin", (L_STICK, 0.0), 0.05, 0.50)]
    L["stick"], info["stick"] = link_xml("stick", parts, vis, "2.90 m stick (pivot -> bucket pin along x)")

    # ---- bucket: pin at origin, x towards the tip, shell on +z (link pin D side), mouth on -z
    Db = D_LEN * np.array([np.cos(PHI_D), np.sin(PHI_D)])
    shell = [np.array([-0.15, 0.30]), np.array([0.35, 0.80]), np.array([1.05, 0.70]), np.array([TIP_R, 0.0])]
    BW = 1.30
    parts, vis = [], []
    for i, mseg in enumerate((150.0, 230.0, 220.0)):
        p, _ = seg_box(mseg, shell[i], shell[i + 1], BW, 0.04)
        parts.append(p)
        vis.append(vis_seg(f"shell_{i}", shell[i], shell[i + 1], BW, 0.06, extend=0.05))
    side_c, side_sz = np.array([0.60, 0.38]), (1.10, 0.025, 0.60)
    for s, y in (("right", -BW / 2), ("left", BW / 2)):
        parts.append((100.0, (side_c[0], y, side_c[1]), box_I(100.0, side_sz[0], side_sz[1], side_sz[2])))
        vis.append(vis_box(f"side_plate_{s}", side_sz, (side_c[0], y, side_c[1])))
    parts.append((80.0, (TIP_R - 0.08, 0, 0.05), box_I(80.0, 0.20, BW, 0.08)))
    vis.append(vis_box("cutting_edge_teeth", (0.25, BW, 0.07), (TIP_R - 0.10, 0, 0.03), mat="dark_grey"))
    parts.append((70.0, (Db[0] / 2, 0, Db[1] / 2), box_I(70.0, 0.25, 0.50, 0.45)))
    vis.append(vis_box("hinge_ears", (0.30, 0.45, 0.50), (Db[0] / 2, 0, Db[1] / 2)))
    vis.append(vis_pin("link_pin", Db, 0.045, 0.50))
    L["bucket"], info["bucket"] = link_xml(
        "bucket", parts, vis, "1.19 m^3 HD bucket, tip radius 1.47 m, width 1.3 m; frame x = bucket pin -> tip")

    # ---- side (guide / dogbone) links: pair of plates K -> G
    parts = [(MASS["side_link"] / 2, (S_LEN / 2, y, 0), box_I(MASS["side_link"] / 2, S_LEN + 0.15, 0.04, 0.14))
             for y in (-0.30, 0.30)]
    vis = [vis_box(f"plate_{s}", (S_LEN + 0.15, 0.04, 0.14), (S_LEN / 2, y, 0))
           for s, y in (("right", -0.30), ("left", 0.30))]
    vis.append(vis_pin("common_pin", (S_LEN, 0.0), 0.045, 0.66))
    L["side_link"], info["side_link"] = link_xml("side_link", parts, vis,
                                                 "guide links (pair), stick pin K -> common pin G along x")

    # ---- H-link (power link): G -> D
    parts = [(35.0, (H_LEN / 2, y, 0), box_I(35.0, H_LEN + 0.12, 0.05, 0.16)) for y in (-0.20, 0.20)]
    parts.append((20.0, (H_LEN / 2, 0, 0), box_I(20.0, 0.10, 0.40, 0.10)))
    vis = [vis_box(f"bar_{s}", (H_LEN + 0.12, 0.05, 0.16), (H_LEN / 2, y, 0))
           for s, y in (("right", -0.20), ("left", 0.20))]
    vis.append(vis_box("cross_tube", (0.10, 0.40, 0.10), (H_LEN / 2, 0, 0)))
    L["h_link"], info["h_link"] = link_xml("h_link", parts, vis,
                                           "H-link (power link), common pin G -> bucket link pin D along x")

    # ---- cylinders
    cyl_geo = {}
    for key, twin in (("boom", 0.42), ("stick", 0.0), ("bucket", 0.0)):
        bp, rp, bv, rv, geo = cyl_parts(key, twin)
        cyl_geo[key] = geo
        c = CYL[key]
        txt = (f"bore {c['bore']*1e3:.0f} mm, rod {c['rod']*1e3:.0f} mm, stroke {c['stroke']*1e3:.0f} mm"
               + (", two cylinders in parallel (drawn at y = +-0.42 m), one equivalent joint" if twin else ""))
        L[f"{key}_cyl_barrel"], info[f"{key}_cyl_barrel"] = link_xml(
            f"{key}_cyl_barrel", bp, bv, f"{key} cylinder barrel (tube + head + oil): {txt}; x = base pin -> rod eye")
        L[f"{key}_cyl_rod"], info[f"{key}_cyl_rod"] = link_xml(
            f"{key}_cyl_rod", rp, rv, f"{key} cylinder rod + piston; frame origin = rod eye pin, rod extends along -x")

    # ---- joints
    J = []
    lim_rev = lambda k: dict(lower=rng[k][0] - MARG, upper=rng[k][1] + MARG, effort=0, velocity=10)
    J.append(joint_xml("swing", "continuous", "undercarriage", "house", origin((0, 0, Z_SWING)), (0, 0, 1),
                       dict(effort=74000, velocity=round(11.3 * 2 * np.pi / 60, 4)),
                       "slewing ring; swing motor: max swing torque 74 kN m, 11.3 rpm (CAT 320 spec)"))
    J.append(joint_xml("boom", "revolute", "house", "boom", o2(F_h, ALPHA0), limit=lim_rev("boom"),
                       comment=f"boom foot pin; q = 0: boom chord {np.degrees(ALPHA0):.0f} deg above horizontal; "
                               "q > 0 lowers the boom; limits = range swept by the boom cylinder stroke"))
    J.append(joint_xml("boom_cyl_pin", "revolute", "house", "boom_cyl_barrel", o2(C1_h, e_c1),
                       limit=lim_rev("boom_cyl_pin"), comment="boom cylinder base pin (passive)"))
    fb, fr, vb = cyl_force("boom")
    J.append(joint_xml("boom_cyl", "prismatic", "boom_cyl_barrel", "boom_cyl_rod", origin((L1_0, 0, 0)), (1, 0, 0),
                       dict(lower=rng["boom_cyl"][0], upper=rng["boom_cyl"][1], effort=round(fb), velocity=round(vb, 3)),
                       f"boom cylinder(s), actuated: pin-to-pin length = {L1_0:.6f} + q (closed "
                       f"{CYL['boom']['closed']:.3f}, extended {CYL['boom']['closed']+CYL['boom']['stroke']:.3f} m)"))
    J.append(joint_xml("stick", "revolute", "boom", "stick", o2((L_BOOM, 0.0), BETA0), limit=lim_rev("stick"),
                       comment=f"stick pin at the boom tip; q = 0: stick {np.degrees(BETA0):.0f} deg from the boom "
                               "chord; q > 0 crowds the stick in"))
    J.append(joint_xml("stick_cyl_pin", "revolute", "boom", "stick_cyl_barrel", o2(C2_b, e_c2 - ALPHA0),
                       limit=lim_rev("stick_cyl_pin"), comment="stick cylinder base pin on the boom (passive)"))
    fb, fr, vb = cyl_force("stick")
    J.append(joint_xml("stick_cyl", "prismatic", "stick_cyl_barrel", "stick_cyl_rod", origin((L2_0, 0, 0)), (1, 0, 0),
                       dict(lower=rng["stick_cyl"][0], upper=rng["stick_cyl"][1], effort=round(fb), velocity=round(vb, 3)),
                       f"stick cylinder, actuated: pin-to-pin length = {L2_0:.6f} + q (closed "
                       f"{CYL['stick']['closed']:.3f}, extended {CYL['stick']['closed']+CYL['stick']['stroke']:.3f} m)"))
    J.append(joint_xml("bucket", "revolute", "stick", "bucket", o2((L_STICK, 0.0), GAMMA0), limit=lim_rev("bucket"),
                       comment=f"bucket pin; q = 0: pin->tip line {np.degrees(GAMMA0):.0f} deg from the stick axis; "
                               "q > 0 curls the bucket in"))
    J.append(joint_xml("side_link_pin", "revolute", "stick", "side_link", o2(K_s, e_side - e_stick),
                       limit=lim_rev("side_link_pin"), comment="guide (side) link pivot on the stick (passive)"))
    J.append(joint_xml("h_link_pin", "revolute", "side_link", "h_link", o2((S_LEN, 0.0), e_h - e_side),
                       limit=lim_rev("h_link_pin"), comment="common pin G: side link -> H-link (passive)"))
    J.append(joint_xml("bucket_cyl_pin", "revolute", "stick", "bucket_cyl_barrel", o2(C3_s, e_c3 - e_stick),
                       limit=lim_rev("bucket_cyl_pin"), comment="bucket cylinder base pin on the stick (passive)"))
    fb, fr, vb = cyl_force("bucket")
    J.append(joint_xml("bucket_cyl", "prismatic", "bucket_cyl_barrel", "bucket_cyl_rod", origin((L3_0, 0, 0)),
                       (1, 0, 0),
                       dict(lower=rng["bucket_cyl"][0], upper=rng["bucket_cyl"][1], effort=round(fb), velocity=round(vb, 3)),
                       f"bucket cylinder, actuated: pin-to-pin length = {L3_0:.6f} + q (closed "
                       f"{CYL['bucket']['closed']:.3f}, extended {CYL['bucket']['closed']+CYL['bucket']['stroke']:.3f} m)"))

    # ---- loops (Fs computed so that Fs == Fp in the world at q = 0, orientation included)
    LP = []
    LP.append(loop_xml("boom_cylinder_eye", "boom_cyl_rod", origin((0, 0, 0)), "boom", o2(E1_b, e_c1 - ALPHA0),
                       "boom cylinder rod eye on the boom bracket"))
    LP.append(loop_xml("stick_cylinder_eye", "stick_cyl_rod", origin((0, 0, 0)), "stick", o2(E2_s, e_c2 - e_stick),
                       "stick cylinder rod eye on the stick tail"))
    LP.append(loop_xml("bucket_cylinder_eye", "bucket_cyl_rod", origin((0, 0, 0)), "side_link",
                       o2((S_LEN, 0.0), e_c3 - e_side), "bucket cylinder rod eye on the common pin G (side link end)"))
    LP.append(loop_xml("h_link_bucket_pin", "h_link", origin((H_LEN, 0, 0)), "bucket", o2(Db, e_h - e_bucket),
                       "H-link to bucket link pin D"))

    TR = [transmission_xml(j) for j in ("swing", "boom_cyl", "stick_cyl", "bucket_cyl")]
    return L, J, LP, TR, info, rng, cyl_geo


def header(info, rng, geo):
    fb = {k: cyl_force(k) for k in CYL}
    fl = {k: cyl_force(k, 38e6)[0] for k in CYL}
    tot = sum(v[0] for v in info.values())
    deg = lambda k: f"{np.degrees(rng[k][0]):+.1f} .. {np.degrees(rng[k][1]):+.1f} deg"
    return f"""<?xml version="1.0"?>
<!--
  excavator.urdf : a 20 t class crawler hydraulic excavator (CAT 320 / Komatsu PC210 / Volvo EC220 class)
  with its three hydraulic cylinders and the bucket H-link (four-bar) linkage closed by <loop> elements
  (urdf_dyn extension, DESIGN.md section 3; stock URDF tools ignore <loop> and see the spanning tree).

  Conventions: SI units, REP-103 (x forward along the boom at swing = 0, y left, z up); fixed base: the root
  link `undercarriage` stands on the ground (z = 0), origin under the swing centre. All pin axes are y.
  The tree is planar apart from `swing` (about z). q = 0 is an ASSEMBLED working pose (every loop closed
  exactly, loop frames Fp and Fs coincide in position AND orientation): boom chord 35 deg above horizontal,
  stick 95 deg below horizontal, bucket curled 50 deg from the stick axis, bucket tip at
  x = {TIPw[0]:.2f} m, z = {TIPw[1]:.2f} m.

  Topology (13 links, 12 tree joints, 4 revolute loops):
    undercarriage -swing(z)-> house -boom-> boom -stick-> stick -bucket-> bucket
    house -boom_cyl_pin-> boom_cyl_barrel -boom_cyl (prismatic)-> boom_cyl_rod   ==loop==> boom
    boom  -stick_cyl_pin-> stick_cyl_barrel -stick_cyl (prismatic)-> stick_cyl_rod ==loop==> stick
    stick -bucket_cyl_pin-> bucket_cyl_barrel -bucket_cyl (prismatic)-> bucket_cyl_rod ==loop==> side_link (pin G)
    stick -side_link_pin-> side_link -h_link_pin-> h_link                        ==loop==> bucket (pin D)
  Mobility = 12 tree dof - rank(K) = 12 - 8 = 4 (swing + three cylinders); the planar loops are redundant
  in 3-D (4 loops x 5 = 20 constraint rows, rank 8).
  Actuated (ROS <transmission>, SimpleTransmission): swing, boom_cyl, stick_cyl, bucket_cyl.
  Each rod frame has its origin at the rod-eye pin and x along the cylinder, so the prismatic q is the
  change of pin-to-pin length from its value at q = 0 (written in each joint comment).

  SOURCES (public data; located by web search; numbers copied by hand):
  [1] Caterpillar, "320 Hydraulic Excavator - Technical Specifications" (Tier 4 Final / Stage IV
      versions, e.g. copies at vdocuments.mx/technical-specifications-for-320-hydraulic-320-hydraulic-
      excavator-specifications.html and pdfcoffee.com/manual-cat-320-5-pdf-free.html):
      operating weight 21 600 - 22 500 kg (reach boom 5.7 m, R2.9 stick, 1.19 m3 HD bucket, 4.2 t
      counterweight); max swing torque 74 kN m, swing speed 11.3 rpm; main relief 35 000 kPa (38 000 kPa
      lift mode); implement flow 429 L/min (2 x 214.5); boom cylinder bore 120 mm / stroke 1260 mm;
      stick cylinder 140 / 1504 mm; bucket cylinder 120 / 1104 mm; ISO digging forces bucket 31 586 lbf
      (140.5 kN), stick 23 987 lbf (106.7 kN) (stowerscat.com 320 page).
  [2] codeready.org/excavators/cat-excavators/cat-320-excavator (CAT 320 dimension table): boom 5.7 m,
      stick 2.9 m, bucket tip radius 1470 mm, track length 4450 mm, track gauge 2380 mm, 790 mm shoes,
      upper-frame width 2780 mm, tail swing radius 2830 mm, counterweight clearance 1050 mm,
      cab height 2960 mm.
  [3] "How much do 20-ton excavator parts weigh" (panswork.com forum article): boom 1200 - 1600 kg, stick
      800 - 1100 kg, bucket 500 - 1000 kg, upper structure incl. counterweight 8000 - 9500 kg,
      undercarriage 6000 - 7500 kg, counterweight 3000 - 4500 kg.
  ENGINEERING ESTIMATES (not from a data sheet; chosen to be consistent with [1]-[3]):
  * pin coordinates of the boom foot, the cylinder brackets, the stick tail and the bucket linkage: no
    manufacturer publishes them; they were designed here so that each published stroke [1] sweeps a
    realistic joint range with realistic closed lengths (closed = stroke + 0.55 ... 0.65 m):
      boom  cylinder closed {CYL['boom']['closed']:.3f} m  -> boom chord elevation {np.degrees(ALPHA0 - rng['boom'][1]):+.1f} .. {np.degrees(ALPHA0 - rng['boom'][0]):+.1f} deg
      stick cylinder closed {CYL['stick']['closed']:.3f} m  -> stick joint range {deg('stick')} (from q = 0)
      bucket cylinder closed {CYL['bucket']['closed']:.3f} m -> bucket rotation {np.degrees(rng['bucket'][1]-rng['bucket'][0]):.0f} deg ({deg('bucket')})
    linkage: side (guide) link K-G {S_LEN} m, H-link G-D {H_LEN} m, bucket pin to link pin B-D {D_LEN} m,
    K 0.35 m above the bucket pin on the stick axis. Cross-check: max stick-cylinder lever ~0.9 m and max
    bucket-linkage ratio ~0.49 m/rad give tip forces of ~110 kN (stick) and ~130 kN (bucket) at 35 MPa,
    close to the ISO figures in [1]. Computed through the loops (urdf_dyn.machines.iso6015, virtual
    work with G; docs/excavator_checks.md): ISO 6015 bucket 131.3 kN (-6.6 % vs 140.5 kN), stick 115.9 kN
    (+8.6 % vs 106.7 kN) at 35 MPa, tip radius 1.47 m. Both are within 15 %, so this geometry was left
    unchanged; the gaps would close with a 1.373 m lip radius (bucket) and a 0.85 m stick tail (stick).
  * rod diameters (85 / 100 / 85 mm) are typical for these bores; boom foot pin 2.0 m above ground.
  * masses (total {tot:.0f} kg vs 21 600 - 22 500 kg in [1]): undercarriage {MASS['undercarriage']:.0f}, house
    {MASS['house']:.0f} (incl. {MASS['counterweight']:.0f} kg counterweight), boom {MASS['boom']:.0f}, stick {MASS['stick']:.0f}, bucket {MASS['bucket']:.0f},
    side links {MASS['side_link']:.0f}, H-link {MASS['h_link']:.0f}; cylinder barrels / rods: boom pair {MASS['boom_cyl_barrel']:.0f} / {MASS['boom_cyl_rod']:.0f},
    stick {MASS['stick_cyl_barrel']:.0f} / {MASS['stick_cyl_rod']:.0f}, bucket {MASS['bucket_cyl_barrel']:.0f} / {MASS['bucket_cyl_rod']:.0f} kg (steel tube/rod volumes + heads + oil).
  * inertias: every body is a union of uniform boxes / tubes / solid cylinders of its visual size and the
    mass above (parallel-axis theorem), so every tensor is positive definite and obeys the triangle
    inequality; house = counterweight box at x = -2.38 m + 4800 kg box for the rest.
  CYLINDER FORCE LIMITS (<limit effort> of the prismatic joints, N) = cap-end (push) force at the normal
  main relief 35 MPa [1]:  F = n * 35e6 * pi/4 * bore^2
      boom   2 x 120 mm: {fb['boom'][0]:9.0f} N  (rod-side pull {fb['boom'][1]:.0f} N; lift mode 38 MPa: {fl['boom']:.0f} N)
      stick  1 x 140 mm: {fb['stick'][0]:9.0f} N  (rod-side pull {fb['stick'][1]:.0f} N; 38 MPa: {fl['stick']:.0f} N)
      bucket 1 x 120 mm: {fb['bucket'][0]:9.0f} N  (rod-side pull {fb['bucket'][1]:.0f} N; 38 MPa: {fl['bucket']:.0f} N)
  URDF <limit effort> is symmetric; the rod-side (retracting) capacity is about half of it.
  velocity = pump flow / cap area: boom and stick 2 pumps (7.15e-3 m3/s), bucket 1 pump (3.58e-3 m3/s).
  Passive pin joints carry effort="0" and the range swept by the cylinder strokes (+-0.01 rad).
-->
"""


MATERIALS = """  <material name="yellow"><color rgba="1.0 0.76 0.0 1"/></material>
  <material name="black"><color rgba="0.08 0.08 0.08 1"/></material>
  <material name="grey"><color rgba="0.72 0.72 0.75 1"/></material>
  <material name="dark_grey"><color rgba="0.25 0.25 0.25 1"/></material>
  <material name="glass"><color rgba="0.25 0.35 0.45 0.8"/></material>
"""


def write(path):
    L, J, LP, TR, info, rng, geo = build()
    order = ["undercarriage", "house", "boom", "stick", "bucket", "side_link", "h_link",
             "boom_cyl_barrel", "boom_cyl_rod", "stick_cyl_barrel", "stick_cyl_rod",
             "bucket_cyl_barrel", "bucket_cyl_rod"]
    s = header(info, rng, geo)
    s += '<robot name="excavator_20t">\n' + MATERIALS + "\n"
    s += "\n".join(L[k] for k in order) + "\n"
    s += "\n".join(J) + "\n"
    s += "  <!-- ===== loop closures (urdf_dyn <loop>): Fp = predecessor/origin, Fs = successor/origin; both\n" \
         "       coincide in the world at q = 0 (position and orientation); revolute about y ===== -->\n"
    s += "\n".join(LP) + "\n"
    s += '  <initial_configuration name="assembled">\n'
    for j in ("swing", "boom", "boom_cyl_pin", "boom_cyl", "stick", "stick_cyl_pin", "stick_cyl", "bucket",
              "side_link_pin", "h_link_pin", "bucket_cyl_pin", "bucket_cyl"):
        s += f'    <joint_position joint="{j}" value="0"/>\n'
    s += "  </initial_configuration>\n\n"
    s += "  <!-- ===== actuators (ROS transmissions): swing motor and the three cylinders ===== -->\n"
    s += "\n".join(TR)
    s += "</robot>\n"
    open(path, "w").write(s)


if __name__ == "__main__" and len(__import__("sys").argv) > 1:
    write(__import__("sys").argv[1])
