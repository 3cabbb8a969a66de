"""`fleet`: the operator's command for the database, tokens and the demo."""
