"""MicroCoder: the one installed package. Its subpackages are the repository's top-level folders
(`pipeline/`, `training/`, `stages/`), linked here so that an installed `microcoder.pipeline.io` is
`pipeline/io.py`: the editable install puts this `src/` folder on the path (a plain `.pth` line that
editors and type checkers read), and a wheel holds copies of the linked files."""
