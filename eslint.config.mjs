// @ts-check
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', 'cdk.out/', 'coverage/', '.local/', '.venv/', '**/*.js'],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      'no-console': 'off',
    },
  },
  {
    // CDK constructs are instantiated for their side effects.
    files: ['bin/**/*.ts', 'lib/**/*.ts', 'test/infrastructure/**/*.ts'],
    rules: { '@typescript-eslint/no-unused-vars': ['error', { varsIgnorePattern: '^_' }] },
  },
  {
    // Branches per function (if, ?:, case, loops, catch, &&, ||, ??, ?.): past these, split the function.
    files: ['bin/**/*.ts', 'lib/**/*.ts', 'lambda/**/*.ts', 'shared/**/*.ts', 'tools/**/*.ts'],
    rules: { complexity: ['error', 20] },
  },
  { files: ['tools/keys/**/*.ts'], rules: { complexity: ['error', 15] } },
  { files: ['eslint.config.mjs'], ...tseslint.configs.disableTypeChecked },
  prettier,
);
