"""Stage 4, render: pages, graphs and viewers.  Pure functions of the index."""
