"""colcon / ament_python entry point. The package's metadata and dependencies live in pyproject.toml (pip
reads that); this file adds what a ROS 2 workspace needs: the ament index marker and package.xml under
share/urdf_dyn.

colcon-core#208: colcon reads the distribution's attributes back with ``ast.literal_eval``, which fails on
the ``SpecifierSet`` object setuptools makes of pyproject's ``requires-python``; the distribution class
below keeps that value a string (setuptools writes it to the metadata unchanged), so ``pip install`` and
``colcon build`` both work from the same pyproject.toml."""
from setuptools import setup
from setuptools.dist import Distribution


class _Distribution(Distribution):
    def parse_config_files(self, *args, **kwargs):
        super().parse_config_files(*args, **kwargs)
        for obj in (self, self.metadata):
            if getattr(obj, "python_requires", None) is not None:
                obj.python_requires = str(obj.python_requires)


setup(distclass=_Distribution,
      data_files=[("share/ament_index/resource_index/packages", ["resource/urdf_dyn"]),
                  ("share/urdf_dyn", ["package.xml"])])
