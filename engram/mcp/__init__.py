"""Engram as an MCP server (the official ``mcp`` SDK): tools, a resource and a prompt that call the REST API
through the Python SDK (``engram_client``), as the caller. ``server`` builds it, ``stdio`` runs it for
``engram mcp``; the gateway serves the same server over streamable HTTP at ``/mcp``."""
