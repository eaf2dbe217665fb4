import tseslint from 'typescript-eslint';
import importX from 'eslint-plugin-import-x';
import { GUEST_FILES, LAYERS } from './layers.js';

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
      // The layer diagram of layers.js (docs/architecture.md): each folder may import only the ones it names.
      'import-x/no-restricted-paths': [
        'error',
        {
          zones: [
            ...Object.entries(LAYERS)
              .map(([layer, allowed]) => ({
                target: `./src/${layer}`,
                from: Object.keys(LAYERS)
                  .filter((other) => other !== layer && !allowed.includes(other))
                  .map((other) => `./src/${other}`),
              }))
              .filter((zone) => zone.from.length > 0),
            // Guest-side code runs inside the sandbox and imports nothing from the host.
            ...GUEST_FILES.map((file) => ({ target: `./${file}`, from: './src' })),
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
