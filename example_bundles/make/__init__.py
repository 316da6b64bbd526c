"""Scripts that regenerate the committed example bundles byte for byte."""
