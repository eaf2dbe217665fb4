import { expect } from 'vitest';
import type { SuiteOptions } from './harness.ts';
import { defineGroup, describeResult, expectSucceeded } from './harness.ts';

/** Walks every class (object.__subclasses__ recursively) and returns the one named `name`. */
const WALK = `def find(name):
    seen, todo = set(), [object]
    while todo:
        c = todo.pop()
        if c.__name__ == name:
            return c
        try:
            subs = c.__subclasses__()
        except TypeError:
            subs = type.__subclasses__(c)
        todo.extend(s for s in subs if s not in seen and not seen.add(s))
`;

/**
 * Ways to import a module the policy does not list, other than an import statement: each must raise ImportError
 * with the policy's message (issue 15, class 13). `csv` and `_sha1`/`_md5` are not loaded when the program starts
 * (`sys` is, and is refused too).
 */
const ROUTES: Record<string, { code: string; module: string; allowed?: string[] }> = {
  'print.__self__.__import__': { code: "print.__self__.__import__('csv')", module: 'csv' },
  "__builtins__ from a function's globals": {
    code: "final_answer.__globals__['__builtins__'].__import__('csv')",
    module: 'csv',
  },
  "the real builtins' __import__ through a library function's globals": {
    code: "import math\nimport json\njson.dumps.__globals__['__builtins__']['__import__']('csv')",
    module: 'csv',
  },
  'a loader from __spec__': { code: "import math\nmath.__spec__.loader.load_module('_md5')", module: '_md5' },
  'a loader from __loader__': {
    code: "import math\nmath.__loader__.create_module(type(math.__spec__)('_sha1', math.__loader__))",
    module: '_sha1',
  },
  'importlib.import_module': {
    code: "import importlib\nimportlib.import_module('csv')",
    module: 'csv',
    allowed: ['importlib'],
  },
  'importlib.util and a spec': {
    code: "import importlib.util as u\ns = u.find_spec('csv')\ns.loader.exec_module(u.module_from_spec(s))",
    module: 'csv',
    allowed: ['importlib.*'],
  },
  'sys.modules to the import machinery': {
    code: "final_answer.__globals__['sys'].modules['_frozen_importlib']._gcd_import('csv')",
    module: 'csv',
  },
  '__subclasses__() to BuiltinImporter': {
    code: `${WALK}find('BuiltinImporter').load_module('_sha1')`,
    module: '_sha1',
  },
  '__subclasses__() to BuiltinImporter, for a loaded module': {
    code: `${WALK}find('BuiltinImporter').load_module('sys')`,
    module: 'sys',
  },
  '__subclasses__() to FrozenImporter': {
    code: `${WALK}find('FrozenImporter').load_module('zipimport')`,
    module: 'zipimport',
  },
  '__subclasses__() to SourceFileLoader': {
    code: `${WALK}import json\nfind('SourceFileLoader')('csv', json.__file__.replace('json/__init__.py', 'csv.py')).load_module()`,
    module: 'csv',
  },
  'exec of an import statement': { code: "exec('import csv')", module: 'csv' },
  'code compiled under a library file name': {
    code: "exec(compile('import csv', '/usr/lib/python3/dist-packages/x.py', 'exec'))",
    module: 'csv',
  },
  'code compiled under a frozen module name': {
    code: "exec(compile('import csv', '<frozen os>', 'exec'))",
    module: 'csv',
  },
};

export function registerPythonImportEscapes(options: SuiteOptions): void {
  if (options.language !== 'python') return;
  defineGroup(options, 'escape: python import policy (allowed_libraries)', (g) => {
    for (const [name, route] of Object.entries(ROUTES)) {
      g.program(`${name} meets the policy`, { python: route.code }, async (src) => {
        const allowed = route.allowed ?? ['math', 'json'];
        const r = await g.run(src, { policy: { allowedLibraries: allowed } });
        expect(r.status, describeResult(r)).toBe('failed');
        if (r.status !== 'failed') return;
        expect(r.error.name, describeResult(r)).toBe('ImportError');
        expect(r.error.message).toBe(
          `import of '${route.module}' is not allowed for this task (allowed_libraries: ${[...allowed].sort().join(', ')})`,
        );
      });
    }

    g.program(
      'package.* and submodule entries (ADR 0041): os.path imports os.path (os loads for it); xml.* any xml module',
      {
        python: `import os.path
import xml.dom.minidom, xml.etree.ElementTree
[os.path.join('a', 'b'), xml.dom.minidom.parseString('<a/>').documentElement.tagName]`,
      },
      async (src) => {
        const r = await g.run(src, { policy: { allowedLibraries: ['os.path', 'xml.*'] } });
        expect(expectSucceeded(r)).toEqual(['a/b', 'a']);
        const other = await g.run(
          { ...src, code: 'import xmlrpc' },
          { policy: { allowedLibraries: ['xml.*'] } },
        );
        expect(other.status === 'failed' && other.error.message).toContain(
          "import of 'xmlrpc' is not allowed",
        );
      },
    );

    g.program(
      "what a listed module imports for itself stays allowed, C code's imports too (datetime.strptime loads _strptime)",
      {
        python: `import datetime, json
[str(datetime.datetime.strptime('2020-02-03', '%Y-%m-%d').date()), json.dumps({'a': 1})]`,
      },
      async (src) => {
        const r = await g.run(src, { policy: { allowedLibraries: ['datetime', 'json'] } });
        expect(expectSucceeded(r)).toEqual(['2020-02-03', '{"a": 1}']);
      },
    );
  });
}
