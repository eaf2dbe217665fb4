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
    settings: { 'import-x/resolver': { node: { extensions: ['.ts', '.js'] } } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'import-x/no-cycle': 'error',
      // The layers of DESIGN.md: errors <- spec <- tools | sandbox <- cli. Drivers never import tools.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            { target: './src/errors', from: ['./src/spec', './src/tools', './src/sandbox', './src/cli'] },
            { target: './src/spec', from: ['./src/tools', './src/sandbox', './src/cli'] },
            { target: './src/tools', from: ['./src/sandbox', './src/cli'] },
            { target: './src/sandbox', from: ['./src/tools', './src/cli'] },
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
