"""`fleet usage`: the ledger added up (platform-admin-api's ListUsage) as a table or a FOCUS-style CSV.

command.py  the command line, the token, every page of ListUsage
export.py   the answer as rows: printed as a table, written as RFC 4180 CSV
"""
