"""DocDesk for other programs: an OpenAI-compatible endpoint (`docdesk serve`, or the window's
"Serve to editors") that answers from the library with sources, for editors and a small team."""
