"""The shell's commands, one module per command or family.

Each module defines its commands as ``NAME_COMMAND = Command(...)``; :data:`metashell.shell.registry.HOMES`
is the one table that names them (``tests/test_shell_registry.py`` fails on one left out).
"""
