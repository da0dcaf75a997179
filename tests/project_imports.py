"""The import walk the tests share lives in the library (`microcoder deps` uses it:
pipeline/import_walk.py). This name stands for that module itself, so a test that patches
`project_imports.ROOT` patches the walk's."""

import sys

from microcoder.pipeline import import_walk

sys.modules[__name__] = import_walk
