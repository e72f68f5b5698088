"""From a question to passages: search, keywords across languages, relevance, reranking, context."""
