// Lint rules of the project (run by `npm run lint`, in CI). Formatting is Prettier's (.prettierrc.json).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config({ ignores: ['**/node_modules/', '**/dist/', 'data/'] }, js.configs.recommended, ...tseslint.configs.recommended, {
  rules: {
    // noUncheckedIndexedAccess makes `!` the plain way to say "this index exists".
    '@typescript-eslint/no-non-null-assertion': 'off',
    '@typescript-eslint/no-unused-vars': [
      'error',
      { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
    ],
    // Test files read loosely typed JSON answers.
    '@typescript-eslint/no-explicit-any': 'warn',
    // The type checker knows Node's globals; this rule does not (typescript-eslint's advice).
    'no-undef': 'off',
  },
});
