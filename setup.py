"""The package-dir mapping pyproject.toml cannot say: every package under pipeline/, training/ and
stages/ installs under the `microcoder` namespace (pipeline/dedup -> microcoder.pipeline.dedup)."""

from setuptools import find_packages, setup

LAYERS = ("pipeline", "training", "stages")
packages = find_packages(include=[f"{layer}*" for layer in LAYERS])
setup(packages=[f"microcoder.{p}" for p in packages],
      package_dir={f"microcoder.{layer}": layer for layer in LAYERS})
