/**
 * What `site` does at start-up that the sandbox needs, without the rest (the interpreter runs with -S, ADR 0061):
 * the image's package directories on sys.path and the builtins exit/quit/help/copyright. Not done: the .pth files of
 * those directories (they import at every start what no program asked for: setuptools' distutils shim,
 * matplotlib's namespace helper, and on some hosts certifi with pathlib and zipfile; 8 ms of CPU per start
 * here), sitecustomize (Debian's installs apport's excepthook), user site (-s already). First in the runner and
 * in the probe's one-liner, so both see the same packages.
 */
export const GUEST_SITE = String.raw`import sys, os, site as _site
for _dir in _site.getsitepackages():
    if _dir not in sys.path and os.path.isdir(_dir):
        sys.path.append(_dir)
_site.setquit()
_site.setcopyright()
_site.sethelper()
del _site, _dir
`;

/** The interpreter's flags in every sandbox: -B no .pyc writes, -s no user site, -S no site (GUEST_SITE), -P below. */
export const INTERPRETER_FLAGS = ['-B', '-s', '-S'] as const;
