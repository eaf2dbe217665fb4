import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';

export default tseslint.config(
  {
    // examples/ holds guest programs (run inside the sandbox, not type-checked as modules) besides tools.ts.
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'bench/results/**',
      'scratch/**',
      'examples/**',
      '!examples/tools.ts',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { 'import-x': importX },
    settings: {
      'import-x/resolver': { node: { extensions: ['.ts', '.js'] } },
      // Cycles are ours to find: packages are not parsed (vite's sources broke the resolver).
      'import-x/ignore': ['node_modules'],
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      // The layers of DESIGN.md: errors <- spec (and codec) <- tools | sandbox | store <- durable <- cli.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            {
              target: './src/errors',
              from: ['./src/spec', './src/codec', './src/tools', './src/sandbox', './src/cli'],
            },
            {
              target: './src/spec',
              from: ['./src/codec', './src/tools', './src/sandbox', './src/model', './src/cli'],
            },
            {
              target: './src/codec',
              from: [
                './src/spec',
                './src/tools',
                './src/sandbox',
                './src/durable',
                './src/store',
                './src/cli',
              ],
            },
            { target: './src/tools', from: ['./src/sandbox', './src/durable', './src/store', './src/cli'] },
            { target: './src/sandbox', from: ['./src/tools', './src/durable', './src/store', './src/cli'] },
            { target: './src/store', from: ['./src/tools', './src/sandbox', './src/durable', './src/cli'] },
            // The durable layer runs agents through the TaskAgent hook; it never imports them.
            { target: './src/durable', from: ['./src/cli', './src/agent', './src/service', './src/http'] },
            // The agent sits on the runtime and the model client; the service and the CLI compose it.
            {
              target: './src/agent',
              from: ['./src/store', './src/sandbox', './src/http', './src/service', './src/cli'],
            },
            // The model client speaks HTTP to a provider and knows nothing of tasks, sandboxes or storage.
            {
              target: './src/model',
              from: [
                './src/codec',
                './src/tools',
                './src/sandbox',
                './src/durable',
                './src/store',
                './src/http',
                './src/service',
                './src/cli',
              ],
            },
            // Guest-side code runs inside the sandbox and imports nothing from the host.
            { target: './src/sandbox/quickjs/guest-runtime.ts', from: './src' },
          ],
        },
      ],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
  },
);
