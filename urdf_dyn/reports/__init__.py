"""Reports (layer 7): ``plotting`` (the figure/save helpers every plot uses), ``report`` (tables, the
sizing report, the plot worker) and ``sweep_results`` (sweep tables, envelopes, plots)."""
