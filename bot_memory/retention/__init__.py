"""retention"""
