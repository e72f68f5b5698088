"""What DocDesk knows of models and machines: the catalog, GGUF headers, the doctor, threads."""
