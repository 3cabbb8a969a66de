"""Parsing the staff API's requests: `requests` turns each RPC's request into the inputs of its queries,
with the field checks of `fields` and the search patterns of `search`."""
