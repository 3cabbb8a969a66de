"""The public API's and the staff API's shared serving stack: RPC errors, auth, paging, caching, serving."""
