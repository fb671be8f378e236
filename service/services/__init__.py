"""The operations behind every door (REST, MCP, panel, CLI): plain async functions over a connection."""
