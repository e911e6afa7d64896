"""The machine kinds a sizing scenario can be (``jobs.machine_kind``'s plug-ins): ``KINDS``, and ``kind_of``
that picks a scenario's kind by the sections it has."""
from __future__ import annotations

from urdf_dyn.jobs.excavator_kind import EXCAVATOR
from urdf_dyn.jobs.machine_kind import GENERIC, MachineKind

__all__ = ["KINDS", "kind_of"]

#: the machine kinds, in the order they are asked (append a ``MachineKind`` to add one)
KINDS: list = [EXCAVATOR]


def kind_of(scenario, kinds=None) -> MachineKind:
    """The kind whose sections ``scenario`` has (``GENERIC`` when none; ``kinds`` default ``KINDS``); a
    ScenarioError when the sections of two kinds are mixed."""
    found = [k for k in (KINDS if kinds is None else kinds) if k.applies(scenario.doc)]
    if len(found) > 1:
        a, b = found[:2]
        raise scenario.err(next(s for s in b.sections if getattr(scenario.doc, s, None)),
                           f"sections of two machine kinds: {a.name} ({', '.join(a.sections)}) and {b.name} "
                           f"({', '.join(b.sections)}); a scenario sizes one kind")
    return found[0] if found else GENERIC
