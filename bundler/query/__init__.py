"""Audit queries: the reviewer's questions, answered mechanically.

The inspection queries of the claim-aware observability profile (seed paper
002, section 5 and Appendix B), each a pure function of the graph index:
``run_query(idx, name, arg)`` returns a :class:`QueryResult` whose rows say
why they matched (a sentence, the event seqs, the object ids).  The CLI
(``review-bundler query``) and the site's audit pages are thin layers on
this package.
"""

from bundler.query.loading import open_index
from bundler.query.model import QueryDef, QueryResult, QueryRow
from bundler.query.registry import QUERIES, check_call, run_query

__all__ = ["QUERIES", "QueryDef", "QueryResult", "QueryRow", "check_call", "open_index",
           "run_query"]
