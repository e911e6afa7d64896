"""Scenario files (layer 9): one YAML file names the robot, the job, its sections and outputs (ROS-launch
style); ``Scenario`` is one read file, ``read_scenario`` reads it, ``run_scenario`` runs it.

``document`` reads and validates them (pydantic schemas; errors name the file and key path), ``registry``
maps ``job:`` names to the modules that run them. The format is documented in ``urdf_dyn.launch.document``
and in each job's module; ``urdf-dyn run --schema`` prints the JSON Schema.
"""
from urdf_dyn.launch.document import Scenario, LaunchDocument, read_scenario, validate
from urdf_dyn.launch.registry import Job, get_job, launch_schema, register_job, run_scenario

__all__ = ["run_scenario", "read_scenario", "validate", "launch_schema", "register_job", "get_job", "Job", "Scenario",
           "LaunchDocument"]


from urdf_dyn._deprecated import deprecated_getattr  # noqa: E402 - the old names, with a FutureWarning

__getattr__ = deprecated_getattr(__name__)
