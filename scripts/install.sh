# Sourced by scripts/demo and scripts/test after scripts/venv.sh: install metashell into the venv
# from the locks in requirements/ (exact versions, sha256 of every file: pip --require-hashes), the
# way the Kafka jars and the crates are installed from theirs.  `bash scripts/lock` refreshes them.
#
#   metashell_install demo   what the shell needs (requirements/demo.txt)
#   metashell_install test   and the test and Spark extras (requirements/test.txt)
#
# The build system comes from requirements/build.txt and every build runs without isolation, so no
# build step fetches an unlocked setuptools.  Skipped when nothing it installs has changed (the
# locks, pyproject.toml, the native core's sources) and the native core it built is still there.
# METASHELL_LATEST=1 (scripts/test --latest) installs the newest versions the ranges in
# pyproject.toml allow instead, to show the ranges are true.

metashell_install() {
    local lock="$1" pip=(python -m pip install --quiet --disable-pip-version-check)
    if [ -z "${METASHELL_VENV:-}" ] || [ "${VIRTUAL_ENV:-}" != "$METASHELL_VENV" ]; then
        # without the venv, 'python' is the machine's own: the locks would overwrite its packages
        echo "metashell_install: source scripts/venv.sh first (no project venv is active)" >&2
        return 1
    fi
    local stamp="$METASHELL_VENV/.metashell-installed-$lock" want
    if [ "${METASHELL_LATEST:-}" = 1 ]; then
        echo "installing the newest versions pyproject.toml allows into $METASHELL_VENV ..." >&2
        "${pip[@]}" --upgrade --upgrade-strategy eager -e ".[test,spark]"
        return
    fi
    want="$(cat requirements/build.txt "requirements/$lock.txt" pyproject.toml native/Cargo.toml \
        native/Cargo.lock $(find native/src -type f | LC_ALL=C sort) | sha256sum | cut -d' ' -f1)"
    if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] \
        && { ! command -v cargo >/dev/null 2>&1 || compgen -G "metashell/_native*.so" >/dev/null; }; then
        return
    fi
    echo "installing metashell from requirements/$lock.txt into $METASHELL_VENV" \
        "(a first install downloads the packages and builds the native core: a few minutes) ..." >&2
    rm -f "$stamp"
    "${pip[@]}" --require-hashes --no-deps -r requirements/build.txt
    "${pip[@]}" --require-hashes --no-build-isolation -r "requirements/$lock.txt"
    # a build that fails installs pure Python (setuptools-rust's optional): the last build's core
    # must not stay behind and pass for this one
    rm -f metashell/_native*.so
    "${pip[@]}" --no-deps --no-build-isolation -e .
    if command -v cargo >/dev/null 2>&1 && ! compgen -G "metashell/_native*.so" >/dev/null; then
        echo "warning: the native core did not build; metashell runs on the Python engine" \
            "(rebuild with: python -m pip install --no-build-isolation -e . to see why)" >&2
    fi
    echo "$want" > "$stamp"
}
