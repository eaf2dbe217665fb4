/**
 * What `site` does at start-up that the sandbox needs, without the rest (the interpreter runs with -S, ADR 0061):
 * the image's package directories on sys.path (with the directories their .pth files name) and the builtins
 * exit/quit/help/copyright. Not done: the import lines of .pth files (they import at every start what no program
 * asked for: setuptools' distutils shim, matplotlib's namespace helper, and on some hosts certifi with pathlib and
 * zipfile; 8 ms of CPU per start on the 2-core machine), sitecustomize (Debian's installs apport's excepthook),
 * user site (-s already). First in the runner and in the probe's one-liner, so both see the same packages.
 */
export const GUEST_SITE = String.raw`import sys, os, site as _site
def _site_dirs():
    for folder in _site.getsitepackages():
        if folder in sys.path or not os.path.isdir(folder):
            continue
        sys.path.append(folder)
        # A .pth file's directory lines are followed as site follows them; its import lines are not run.
        for name in sorted(n for n in os.listdir(folder) if n.endswith('.pth') and not n.startswith('.')):
            try:
                with open(os.path.join(folder, name), encoding='utf-8') as f:
                    lines = f.read().splitlines()
            except (OSError, UnicodeDecodeError):
                continue
            for line in lines:
                line = line.rstrip()
                if not line or line.startswith(('#', 'import ', 'import	')):
                    continue
                path = os.path.join(folder, line)
                if path not in sys.path and os.path.exists(path):
                    sys.path.append(path)
_site_dirs()
_site.setquit()
_site.setcopyright()
_site.sethelper()
del _site, _site_dirs
`;

/** The interpreter's flags in every sandbox: -B no .pyc writes, -s no user site, -S no site (GUEST_SITE), -P below. */
export const INTERPRETER_FLAGS = ['-B', '-s', '-S'] as const;
