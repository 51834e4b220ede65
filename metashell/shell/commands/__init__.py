"""The shell's commands, one module per command or family.

Each module registers its commands with :func:`metashell.shell.registry.register`; the registry
imports every module of this package, so a new module needs no list entry anywhere.
"""
