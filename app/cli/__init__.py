"""The command line: `docdesk add/ask/search/serve/mcp/models/...`, its parser, progress and repair."""
