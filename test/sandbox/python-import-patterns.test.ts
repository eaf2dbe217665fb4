// allowed_libraries patterns (ADR 0041): exact names, 'pkg.*', submodule entries, malformed entries; real Python.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPythonDriver, probePython } from '../../src/sandbox/index.ts';
import type { PythonDriver } from '../../src/sandbox/index.ts';
import type { ExecutionResult } from '../../src/spec/index.ts';

const probe = await probePython();

describe.skipIf(!probe.ok)(
  `allowed_libraries patterns${probe.ok ? '' : ` (skipped: ${probe.reason})`}`,
  () => {
    let driver: PythonDriver;
    beforeAll(async () => {
      driver = createPythonDriver({ warm: 2 });
      await driver.ready();
    });
    afterAll(() => driver.close());
    const run = (code: string, allowedLibraries: string[]): Promise<ExecutionResult> =>
      driver.execute({
        code,
        language: 'python',
        tools: [],
        host: { call: () => Promise.resolve({ ok: true, value: null }) },
        policy: { allowedLibraries },
      });
    const value = (r: ExecutionResult) => {
      if (r.status !== 'succeeded') throw new Error(`${r.error.code}: ${r.error.message}`);
      return r.value;
    };
    const refusal = (r: ExecutionResult) => {
      if (r.status !== 'failed') throw new Error(`expected a failure, got ${JSON.stringify(r.value)}`);
      expect(r.error.name).toBe('ImportError');
      return r.error.message;
    };

    it("'pkg.*' allows the package and every module below it, nothing beside it", async () => {
      const code = `import xml
import xml.dom.minidom
from xml.etree import ElementTree
from xml.sax import saxutils
[xml.dom.minidom.parseString('<a/>').documentElement.tagName, ElementTree.fromstring('<b/>').tag]`;
      expect(value(await run(code, ['xml.*']))).toEqual(['a', 'b']);
      expect(refusal(await run('import xmlrpc.client', ['xml.*']))).toBe(
        "import of 'xmlrpc.client' is not allowed for this task (allowed_libraries: xml.*)",
      );
    });

    it('an exact name allows that module only: its submodules need pkg.* (the message says so)', async () => {
      expect(value(await run('import xml\nxml.__name__', ['xml']))).toBe('xml');
      expect(refusal(await run('import xml.dom', ['xml']))).toBe(
        "import of 'xml.dom' is not allowed for this task (allowed_libraries: xml; 'xml.*' would allow its submodules)",
      );
      // from-import of a submodule the package has not loaded is an import of it.
      expect(refusal(await run('from xml import dom', ['xml']))).toContain(
        "import of 'xml.dom' is not allowed",
      );
      expect(refusal(await run('from xml import *', ['xml']))).toContain(
        "import of 'xml.dom' is not allowed",
      );
      // A name the module already has is an attribute, not an import.
      expect(value(await run('from json import dumps, decoder\ndumps([decoder.__name__])', ['json']))).toBe(
        '["json.decoder"]',
      );
    });

    it('a submodule entry allows that submodule (its parent loads for it), not the parent by itself', async () => {
      const ok = `import os.path
from os import path
import os.path as p
[os.path.join('a', 'b'), path.basename('/x/y'), p.sep]`;
      expect(value(await run(ok, ['os.path']))).toEqual(['a/b', 'y', '/']);
      expect(refusal(await run('import os', ['os.path']))).toBe(
        "import of 'os' is not allowed for this task (allowed_libraries: os.path)",
      );
      expect(refusal(await run('from os import system', ['os.path']))).toContain(
        "import of 'os.system' is not allowed",
      );
      expect(refusal(await run('from os import path, environ', ['os.path']))).toContain(
        "import of 'os.environ' is not allowed",
      );
      // A parent the machinery loads on the way to a listed submodule is allowed, whichever way it is asked for.
      const viaImportlib = "import importlib\nimportlib.import_module('xml.dom.minidom').__name__";
      expect(value(await run(viaImportlib, ['importlib', 'xml.dom.minidom']))).toBe('xml.dom.minidom');
      expect(
        refusal(await run("import importlib\nimportlib.import_module('xml')", ['importlib', 'xml.dom'])),
      ).toContain("import of 'xml' is not allowed");
      expect(refusal(await run('import xml.sax', ['xml.dom']))).toContain(
        "import of 'xml.sax' is not allowed",
      );
    });

    it('a malformed entry is INVALID_LIBRARY_PATTERN before anything runs', async () => {
      for (const entry of ['numpy*', '*', 'a..b', '.x', 'os.*.path', 'os.', 'pkg.**', 'a b', '1abc']) {
        const r = await run('1', ['json', entry]);
        expect(r.status === 'failed' && r.error, entry).toMatchObject({ code: 'INVALID_LIBRARY_PATTERN' });
        if (r.status === 'failed') expect(r.error.message).toContain(JSON.stringify(entry));
      }
    });
  },
);
