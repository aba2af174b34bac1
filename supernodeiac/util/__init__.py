"""Helpers with no domain words: the registry, the jinja2 environment, number formatting, child
processes and renameat2.
"""
