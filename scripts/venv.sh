# Sourced by scripts/demo and scripts/test: check the Python, then make (once) and enter the
# project's own virtual environment.  A venv, not the system Python: Debian's and Ubuntu's Python
# refuse `pip install` outside one (PEP 668, "externally-managed-environment"), and a venv keeps
# the project's pinned packages away from everything else on the machine.
#
#   METASHELL_PYTHON  the interpreter to build the venv from (default: python3; 3.11 or newer)
#   METASHELL_VENV    where the venv lives (default: .venv in the checkout; .gitignore'd)

metashell_python="${METASHELL_PYTHON:-python3}"
if ! command -v "$metashell_python" >/dev/null 2>&1; then
    echo "metashell needs Python 3.11 or newer, and there is no '$metashell_python' on PATH" >&2
    exit 1
fi
if ! "$metashell_python" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    echo "metashell needs Python 3.11 or newer; '$metashell_python' is $("$metashell_python" -V 2>&1)" \
        "(set METASHELL_PYTHON to another interpreter)" >&2
    exit 1
fi

METASHELL_VENV="${METASHELL_VENV:-$PWD/.venv}"
if ! "$METASHELL_VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$METASHELL_VENV"   # a half-made venv (no pip) from an earlier failure
    if ! "$metashell_python" -m venv "$METASHELL_VENV"; then
        rm -rf "$METASHELL_VENV"
        echo "could not create a virtual environment in $METASHELL_VENV" \
            "(on Debian/Ubuntu: apt install python3-venv)" >&2
        exit 1
    fi
fi
export VIRTUAL_ENV="$METASHELL_VENV"
export PATH="$METASHELL_VENV/bin:$PATH"   # 'python3' for Spark's workers and every subprocess
