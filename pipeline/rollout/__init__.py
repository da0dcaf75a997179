"""Rollout: prompts, code extraction, generation backends and the sharded, resumable rollout stage.

Import the submodules directly (`microcoder.pipeline.generation.prompts`, `.extract`, `.backends`, `.runner`);
this package keeps its import light so training and evaluation can use the prompt builder cheaply.
"""
