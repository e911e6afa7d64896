"""Closed-loop dynamics (layer 4; RBDA ch. 8): the loop terms K, k, δ and the mobility (``loops``), the
explicit form G, g (``explicit``), closed-loop forward dynamics (``forward``, five methods of §8.5 and §8.13)
and inverse dynamics with the actuator forces (``inverse``, ``actuators``: eqs. 8.62–8.63), consistent motions
through the loops (``motion``), assembly and the closure diagnosis (``assembly``, ``closure``), couplings
(``couplings``: ``<mimic>``, ``<coupling>``), passive forces (``passive``), the shared solves (``solve``), and
the compiled twins of these formulas (``_kernels``, ``_linalg``, ``_sample``, ``_path``)."""
