"""One request to a backend: reasoning kept apart, loop guard, thinking budget."""
