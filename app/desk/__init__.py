"""The façade every front door shares: `DocDesk`, answering, settings, the crash marker, errors."""
