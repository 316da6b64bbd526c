"""Optional integrations with other tools (imported only by those tools)."""
