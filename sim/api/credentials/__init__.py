"""What a client needs to get in: bearer tokens, the TLS certificate and the kubeconfigs handed out.

`tokens.py` (the garden's, the control endpoint's and the minted shoot tokens), `tls.py` (the CA made
at startup and the server certificate) and `kubeconfig.py` (the garden's kubeconfig and the minted
shoot ones).
"""
