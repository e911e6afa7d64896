"""Machine analysis (layer 6): excavator and arm sizing on top of the closed-loop dynamics — ``soil``
(cutting resistance), ``loads`` (point loads and payloads), ``hydraulics``, ``iso6015`` (digging forces),
``lift_chart`` (ISO 10567), ``stability`` (base reactions, ZMP, the tipping polygon), ``working_range``
(ISO 7135), ``stroke_map`` (poses over the cylinder strokes), ``sizing`` (cylinders) and ``motors``
(motor-side sizing through gears). No machine's numbers live here: they come from ``robots/`` and the
scenario files."""
