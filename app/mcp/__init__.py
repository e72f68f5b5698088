"""`docdesk mcp`: the Model Context Protocol server over stdio."""
