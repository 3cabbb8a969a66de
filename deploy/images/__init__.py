"""The registry-free image build: every deployable's OCI image from Debian's packages and the locked wheels.

`scripts/build-images` (or `make images`) runs `python -m deploy.images`; docs/development.md explains it.
"""
