"""The `attnlens` command line: main.py parses and dispatches, a module per command."""
