"""ingress"""
