import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { bwrapArgs } from './bwrap-args.ts';
import { GUEST_SITE } from './guest-site.ts';
import { SANDBOX_UID } from './python-process.ts';

export type PythonProbe =
  | {
      readonly ok: true;
      readonly bwrapPath: string;
      readonly pythonPath: string;
      readonly bwrap: string;
      readonly python: string;
      readonly safePathFlag: boolean;
      /** The image's packages (IMAGE_PACKAGES) and their versions, null when one is not installed. */
      readonly packages: Readonly<Record<string, string | null>>;
    }
  | { readonly ok: false; readonly reason: string };

function run(
  file: string,
  args: readonly string[],
  options: { uid?: number; gid?: number; env?: NodeJS.ProcessEnv } = {},
): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: 10_000, ...options }, (error, stdout, stderr) =>
      resolve({ ok: error === null, stdout: String(stdout), stderr: String(stderr) }),
    );
  });
}

/**
 * The libraries the python image offers programs (distribution names), Debian bookworm's python3-numpy,
 * python3-pandas, python3-matplotlib, python3-scipy, python3-sklearn, python3-openpyxl, python3-tabulate and
 * python3-requests (with its python3-urllib3, whose connections guest-requests.ts replaces) (.ci/run installs them). Their versions are part of the engine (pythonEngine): a checkpoint taken with other
 * versions is not resumed on these.
 */
export const IMAGE_PACKAGES = [
  'numpy',
  'pandas',
  'matplotlib',
  'scipy',
  'scikit-learn',
  'openpyxl',
  'tabulate',
  'requests',
  'urllib3',
] as const;

/** The probe's one-liner: the interpreter's version and the image's, read from metadata (nothing imported). */
const PROBE_CODE = [
  GUEST_SITE,
  'import json, sys',
  'from importlib import metadata',
  'def v(name):',
  '    try:',
  '        return metadata.version(name)',
  '    except Exception:',
  '        return None',
  `print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "packages": {n: v(n) for n in ${JSON.stringify(IMAGE_PACKAGES)}}}))`,
].join('\n');

/** What the probe's one-liner printed: the interpreter's version and the image's packages, or null if unreadable. */
export function parseProbeOutput(
  stdout: string,
): { python: string; packages: Record<string, string | null> } | null {
  try {
    const parsed = JSON.parse(stdout.trim()) as { python?: unknown; packages?: unknown };
    if (typeof parsed.python !== 'string') return null;
    const packages: Record<string, string | null> = {};
    const found = (parsed.packages ?? {}) as Record<string, unknown>;
    for (const name of IMAGE_PACKAGES) {
      const version = found[name];
      packages[name] = typeof version === 'string' ? version : null;
    }
    return { python: parsed.python, packages };
  } catch {
    return null;
  }
}

/**
 * The python driver's engine name: `cpython-<version>+bwrap-<version>`, then `+<package>-<version>` for each image
 * package installed (IMAGE_PACKAGES' order). A task's checkpoint is bound to it, so a resumed task notices a
 * changed image as it notices a changed interpreter.
 */
export function pythonEngine(probe: {
  readonly python: string;
  readonly bwrap: string;
  readonly packages?: Readonly<Record<string, string | null>>;
}): string {
  const packages = IMAGE_PACKAGES.flatMap((name) => {
    const version = probe.packages?.[name];
    return version ? [`+${name}-${version}`] : [];
  });
  return `cpython-${probe.python}+bwrap-${probe.bwrap}${packages.join('')}`;
}

const INSTALL = 'install it (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap)';

/** Probes that found a working sandbox, by bwrap and python path: one per process (drivers, doctor, exec). */
const probes = new Map<string, Promise<PythonProbe>>();

/**
 * Whether sandboxed Python can run here, and if not, why and how to fix it. Runs a real sandbox (the layout the
 * driver uses, as the uid it uses) so a kernel without unprivileged user namespaces is found before any task.
 * Cached: a probe that worked is not run again in this process (the image's versions are read once); one that
 * failed is (a machine fixed since is found working).
 */
export function probePython(options: { bwrap?: string; python?: string } = {}): Promise<PythonProbe> {
  const key = `${options.bwrap ?? ''}\0${options.python ?? ''}`;
  const cached = probes.get(key);
  if (cached) return cached;
  const probe = runProbe(options);
  probes.set(key, probe);
  void probe.then((p) => {
    if (!p.ok) probes.delete(key);
  });
  return probe;
}

async function runProbe(options: { bwrap?: string; python?: string }): Promise<PythonProbe> {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `the python driver needs Linux (bubblewrap); this is ${process.platform}` };
  }
  const bwrapPath =
    options.bwrap ?? ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'].find(existsSync);
  if (!bwrapPath || !existsSync(bwrapPath)) {
    return { ok: false, reason: `bubblewrap (bwrap) was not found: ${INSTALL}` };
  }
  const pythonPath = options.python ?? '/usr/bin/python3';
  if (!pythonPath.startsWith('/usr/') || !existsSync(pythonPath)) {
    return {
      ok: false,
      reason: `${pythonPath} was not found (the sandbox sees only /usr of the host): install python3 (apt-get install python3)`,
    };
  }
  const version = await run(bwrapPath, ['--version']);
  if (!version.ok) return { ok: false, reason: `${bwrapPath} --version failed: ${version.stderr.trim()}` };
  const bwrap = version.stdout.trim().split(/\s+/).at(-1) ?? 'unknown';
  {
    const root = process.getuid?.() === 0;
    const args = bwrapArgs({ python: pythonPath, workspaceBytes: 1024 * 1024, safePathFlag: false });
    // The same sandbox, running a one-liner instead of the runner.
    const probeArgs = [...args.slice(0, args.indexOf('-c') + 1), PROBE_CODE];
    // As the driver starts it: as the sandbox's uid, with no environment (see python-process.ts).
    const sandboxed = await run(bwrapPath, probeArgs, {
      env: {},
      ...(root ? { uid: SANDBOX_UID, gid: SANDBOX_UID } : {}),
    });
    if (!sandboxed.ok) {
      const why = sandboxed.stderr.trim() || 'no output';
      const userns = /namespace|permission|Operation not permitted/i.test(why)
        ? '; the kernel must allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; Ubuntu 24.04: kernel.apparmor_restrict_unprivileged_userns=0)'
        : '';
      return { ok: false, reason: `bubblewrap cannot start a sandbox here: ${why}${userns}` };
    }
    const output = parseProbeOutput(sandboxed.stdout);
    if (!output) {
      return {
        ok: false,
        reason: `the sandbox's python printed no version: ${sandboxed.stdout.trim() || 'no output'}`,
      };
    }
    const { python, packages } = output;
    const [major = 0, minor = 0] = python.split('.').map(Number);
    if (major < 3 || (major === 3 && minor < 8)) {
      return { ok: false, reason: `python ${python} is too old: the python driver needs 3.8 or later` };
    }
    // Shared by every caller of this process (probePython's cache).
    return Object.freeze({
      ok: true,
      bwrapPath,
      pythonPath,
      bwrap,
      python,
      safePathFlag: major > 3 || minor >= 11,
      packages: Object.freeze(packages),
    });
  }
}
