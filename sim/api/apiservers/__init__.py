"""The two kinds of Kubernetes API server the simulator plays on its one port.

`garden.py` is the garden's (gardener-apiserver: project namespaces, projects, shoots, the kubeconfig
subresources and the monitoring secrets); `shoot.py` is one shoot's kube-apiserver. Both answer
through `sim/api/machinery/` and render through `sim/api/objects/`.
"""
