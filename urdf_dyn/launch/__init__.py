"""Launch files: one YAML file names the robot, the job, its scenario and outputs (ROS-launch style).

``document`` reads and validates them (pydantic schemas; errors name the file and key path), ``registry``
maps ``job:`` names to the modules that run them. The format is documented in ``urdf_dyn.launch.document``
and in each job's module; ``urdf-dyn run --schema`` prints the JSON Schema.
"""
from urdf_dyn.launch.document import Launch, LaunchDocument, read_launch, validate
from urdf_dyn.launch.registry import Job, get_job, launch_schema, register_job, run_launch

__all__ = ["run_launch", "read_launch", "validate", "launch_schema", "register_job", "get_job", "Job", "Launch",
           "LaunchDocument"]
