"""Scripts that regenerate the committed example bundles byte for byte.

Run ``python -m example_bundles.make.make_all`` (``--check`` compares instead
of writing), or one generator alone with ``python -m example_bundles.make.<name>``.
Each generator module exposes ``build(out_dir: Path | None = None) -> Path``.

Generators, one per bundle (the story of each is in its docstring):

* ``air_quality``: LEDGER case study 1; with ``air_quality_data`` (the
  synthetic source file and an independent reading of it) and
  ``air_quality_claims`` (the findings and their evaluator);
* ``networkx_feature``: LEDGER case study 2; with ``networkx_repo`` (the
  ``minnx`` checkout, its patched states, and the commands run on it);
* ``multi_agent_paper``: a hub-and-spoke team; with ``multi_agent_drafts``
  (drafts, critic reviews, steering);
* ``unsupported_gain``: the profile paper's worked example;
* ``evolutionary_search``: a population of programs, evolved for real;
* ``closed_loop_lab``: delayed instrument evidence and a human re-plan; with
  ``closed_loop_xrd`` (simulated diffraction and phase matching).

Shared helpers:

* ``common``: demo key, fixed clock, fresh bundle folder, ``csv_bytes``, and
  ``source_bytes`` for the payload files under ``sources/<bundle>/``;
* ``bindings``: the binding field syntax and value comparison;
* ``recording``: ``Recorder``, the LEDGER vocabulary (artifact, node, phase,
  edge, checked claim);
* ``transcripts``: agent transcripts in their tools' formats, line by line;
* ``running``: run the agents' code for real, and shell transcripts;
* ``drawing``: hand-built SVG and PNG plots;
* ``zipped``: a deterministic zip of a bundle folder.

Payloads that are code (scripts, the ``minnx`` library, tests) are data files
under ``sources/``, not string literals; see ``sources/README.md``.
"""
