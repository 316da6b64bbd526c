"""Page producers: each returns ``Page`` objects (path, template, context, graphs).

Producers never render or write; the site builder renders every page's
graphs in one Graphviz batch first, then the templates.
"""
