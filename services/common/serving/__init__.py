"""Serving one service implementation over Connect and gRPC from one process, with one request stack.

    Connect (uvicorn, HTTP/1.1)  ─┐                        ┌─> the service class (one per API)
                                  ├─> RequestStack.run() ──┤
    gRPC (grpc.aio, HTTP/2)     ──┘                        └─  request id → log + metrics → errors → auth

Both paths build a connectrpc `RequestContext` and hand it to the same `RequestStack`
(`request_stack.py`), so request ids, logging, metrics, error mapping and authentication behave
identically on both protocols by construction: connectrpc's own interceptors never run on the
grpc.aio path. `grpc_bridge.py` derives the gRPC side from the generated descriptors; `http_app.py`
builds the HTTP port (Connect behind CORS plus the operations routes); `api_server.py` runs both
ports; `process.py` assembles and runs a whole API process.
"""
