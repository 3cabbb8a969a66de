"""Control of a running simulator, from the same process or over HTTP.

`actions.py` (the Python control API), `endpoint.py` (the same over HTTP, `/_sim/...`),
`client.py` (the one HTTP client of that endpoint, for the demo, the soak and the benchmarks),
`statedir.py` (the files a running simulator leaves so others find it), `expected.py` (what a
correct collector finds in a shoot).
"""
