"""Click command groups. Each command parses options, calls one library function and prints."""
