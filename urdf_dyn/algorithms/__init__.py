"""Tree algorithms, bottom layer: spatial vector algebra (RBDA ch. 2), joint models (jcalc, §4.4; loop-joint
subspaces, §3.5), the compiled kernels (RNEA Table 5.1, CRBA Table 6.2, ABA Table 7.1, LᵀL §6.5) with their
checked wrappers (``dynamics``) and forward kinematics and Jacobians (``kinematics``)."""
