"""The eager half: its kernel rows, their figures line by line, its round trips through memory."""
