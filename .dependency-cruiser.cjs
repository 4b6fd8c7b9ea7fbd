/**
 * The layering rule, checked by `npm test`: imports only go down.
 *   main, cli, server, app (composition) → http → completions → vendors / usage / auth
 *   → storage, config, observability, errors, tokenizer, local-model
 * The local model's engine sees only the tokenizer and the errors; vendor folders never import
 * one another (the OpenAI preset builds on the OpenAI-compatible adapter), and shared vendor code
 * names no vendor.
 */
const lower = ['storage', 'config', 'observability', 'errors', 'tokenizer', 'local-model'];
const folder = (names) => `^src/(${names.join('|')})/`;
const composition = '^src/(main\\.ts|app\\.ts|cli/|server/)';

const below = (from, forbidden) => ({
  name: `${from}-imports-only-down`,
  comment: `src/${from} must not import ${forbidden.join(', ')}`,
  severity: 'error',
  from: { path: folder([from]) },
  to: { path: [folder(forbidden), composition] },
});

module.exports = {
  forbidden: [
    { name: 'no-circular', severity: 'error', comment: 'import cycles', from: {}, to: { circular: true } },
    below('http', []),
    below('completions', ['http']),
    below('vendors', ['http', 'completions', 'usage', 'auth']),
    below('usage', ['http', 'completions', 'vendors', 'auth']),
    below('auth', ['http', 'completions', 'vendors', 'usage']),
    ...lower.map((name) => below(name, ['http', 'completions', 'vendors', 'usage', 'auth'])),
    {
      name: 'local-model-is-self-contained',
      severity: 'error',
      from: { path: '^src/local-model/' },
      to: { path: '^src/', pathNot: '^src/(local-model|tokenizer|errors)/' },
    },
    {
      name: 'shared-vendor-code-names-no-vendor',
      severity: 'error',
      // create-adapters.ts is the one place that lists the vendors.
      from: { path: '^src/vendors/(shared/|[^/]+\\.ts$)', pathNot: '^src/vendors/create-adapters\\.ts$' },
      to: { path: '^src/vendors/(?!shared/)[^/]+/' },
    },
    {
      name: 'vendor-folders-stay-apart',
      severity: 'error',
      // Every vendor folder, whatever its name; openai/ is a preset of openai-compatible/ and may use it.
      from: { path: '^src/vendors/(?!shared/)([^/]+)/', pathNot: '^src/vendors/openai/' },
      to: { path: '^src/vendors/(?!shared/)[^/]+/', pathNot: '^src/vendors/$1/' },
    },
    {
      name: 'errors-at-the-bottom',
      severity: 'error',
      from: { path: '^src/errors/' },
      to: { path: '^src/', pathNot: '^src/errors/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    exclude: { path: '^(dist|node_modules)/' },
  },
};
