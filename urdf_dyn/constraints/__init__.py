"""Closed-loop constraints (RBDA ch. 8): loop terms K, k, δ and mobility (``loops``), the explicit form G, g
(``explicit``), closed-loop forward dynamics (``forward``), assembly (``assembly``), passive forces
(``passive``) and their compiled kernels (``_kernels``)."""
