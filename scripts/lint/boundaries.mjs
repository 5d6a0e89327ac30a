// ESLint rule `surf/boundaries`: the repository's layering, checked on every import.
//
// Units: each package's src/ and test/, each example, bench/, scripts/, test-support/.
//  - A relative import stays inside its unit. Exceptions: a package's tests may read their own
//    package's src/ (white-box tests), and test code, bench, scripts and examples may use
//    test-support/ (the shared test library). Anything else is a deep import into someone
//    else's files: use the public entry of the workspace package instead.
//  - `@surf/<name>[/sub]` must name a workspace package and one of its package.json `exports`
//    entries (no `@surf/core/src/...`), as a published package would enforce.
//  - packages/<dir>/src may import only the @surf packages its layer allows (option `layers`),
//    and never a test-only entry (option `testOnly`, e.g. @surf/core/testing).
// The rule reads the workspaces from the root package.json, so new files and new packages are
// covered without editing it.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..', '..');

/** name -> { dir (relative to root), exports (subpath keys such as '.', './testing') } */
function workspacePackages() {
  const rootPkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const dirs = [];
  for (const w of rootPkg.workspaces ?? []) {
    if (w.endsWith('/*')) {
      const parent = w.slice(0, -2);
      for (const d of readdirNames(join(root, parent))) dirs.push(`${parent}/${d}`);
    } else dirs.push(w);
  }
  const out = new Map();
  for (const d of dirs) {
    const f = join(root, d, 'package.json');
    if (!existsSync(f)) continue;
    const pkg = JSON.parse(readFileSync(f, 'utf8'));
    const exp = pkg.exports;
    const keys =
      exp === undefined
        ? null
        : typeof exp === 'string' || !Object.keys(exp).some((k) => k.startsWith('.'))
          ? ['.']
          : Object.keys(exp);
    out.set(pkg.name, { dir: d, exports: keys });
  }
  return out;
}

function readdirNames(dir) {
  return existsSync(dir) ? readdirSync(dir) : [];
}

// One lint run reads the workspace once (package.json files change between runs, not during one).
let cached = null;
const packagesOnce = () => (cached ??= workspacePackages());

/** Whether an `exports` key ('./testing', or a pattern such as './data/*') covers a subpath. */
function exportMatches(pattern, key) {
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === key;
  const [pre, post] = [pattern.slice(0, star), pattern.slice(star + 1)];
  return key.length > pre.length + post.length && key.startsWith(pre) && key.endsWith(post);
}

/** The unit a repository path belongs to, e.g. 'packages/core/src', 'examples/mlp', 'bench'. */
export function unitOf(absPath) {
  const rel = relative(root, absPath).split(sep).join('/');
  if (rel.startsWith('..')) return null;
  const p = rel.split('/');
  if (p[0] === 'packages' && p.length >= 3)
    return `packages/${p[1]}/${p[2] === 'src' || p[2] === 'test' ? p[2] : '(root)'}`;
  if (p[0] === 'examples' && p.length >= 2) return `examples/${p[1]}`;
  if (p.length >= 2) return p[0];
  return '(root)';
}

const isTestUnit = (u) =>
  /^packages\/[^/]+\/test$/.test(u) || u.startsWith('examples/') || u === 'bench' || u === 'scripts';

function relativeProblem(fromUnit, toUnit) {
  if (fromUnit === toUnit || toUnit === null) return null;
  // Root config files (eslint.config.js, jest.config.js) load repository tooling.
  if (fromUnit === '(root)') return null;
  const own = fromUnit.match(/^packages\/([^/]+)\/test$/);
  if (own && toUnit === `packages/${own[1]}/src`) return null;
  if (toUnit === 'test-support' && isTestUnit(fromUnit)) return null;
  return `reaches from ${fromUnit}/ into ${toUnit}/`;
}

export default {
  meta: {
    type: 'problem',
    docs: { description: 'Enforce the layering of the Surf workspace (see scripts/lint/boundaries.mjs).' },
    schema: [
      {
        type: 'object',
        properties: {
          layers: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
          testOnly: { type: 'array', items: { type: 'string' } },
        },
        additionalProperties: false,
      },
    ],
  },
  create(context) {
    const { layers = {}, testOnly = [] } = context.options[0] ?? {};
    const file = context.physicalFilename ?? context.filename;
    const fromUnit = unitOf(resolve(file));
    if (fromUnit === null) return {};
    const pkgs = packagesOnce();
    const srcOf = fromUnit.match(/^packages\/([^/]+)\/src$/);

    function check(node, spec) {
      if (typeof spec !== 'string') return;
      if (spec.startsWith('.')) {
        const target = resolve(dirname(resolve(file)), spec);
        const why = relativeProblem(fromUnit, unitOf(target));
        if (why)
          context.report({
            node,
            message: `import '${spec}' ${why}; import the owning package's public entry (@surf/...) instead`,
          });
        return;
      }
      const m = spec.match(/^(@surf\/[^/]+)(\/.*)?$/);
      if (!m) return;
      const [, name, sub] = m;
      const pkg = pkgs.get(name);
      if (!pkg) {
        context.report({ node, message: `import '${spec}': no workspace package is named ${name}` });
        return;
      }
      const key = sub ? `.${sub}` : '.';
      if (pkg.exports && !pkg.exports.some((e) => exportMatches(e, key))) {
        context.report({
          node,
          message: `import '${spec}': ${name} does not export '${key}' (its exports: ${pkg.exports.join(', ')}); deep imports are not allowed`,
        });
        return;
      }
      if (srcOf) {
        const allowed = layers[srcOf[1]];
        if (!allowed) {
          context.report({
            node,
            message: `packages/${srcOf[1]} has no layer in eslint.config.js (surf/boundaries 'layers'); add it there`,
          });
        } else if (testOnly.includes(spec)) {
          context.report({
            node,
            message: `import '${spec}': a test-only entry cannot be used by packages/${srcOf[1]}/src`,
          });
        } else if (!allowed.includes(name)) {
          context.report({
            node,
            message: `import '${spec}': packages/${srcOf[1]}/src may import only ${allowed.length ? allowed.join(', ') : 'no @surf package'} (layering: see eslint.config.js)`,
          });
        }
      }
    }

    const lit = (n) => (n && n.type === 'Literal' ? n.value : undefined);
    return {
      ImportDeclaration: (n) => check(n, lit(n.source)),
      ExportNamedDeclaration: (n) => n.source && check(n, lit(n.source)),
      ExportAllDeclaration: (n) => check(n, lit(n.source)),
      ImportExpression: (n) => check(n, lit(n.source)),
      TSImportType: (n) => check(n, lit(n.argument?.literal ?? n.argument)),
      TSExternalModuleReference: (n) => check(n, lit(n.expression)),
      CallExpression: (n) => {
        const c = n.callee;
        const isRequire = c.type === 'Identifier' && c.name === 'require';
        const isJestMock =
          c.type === 'MemberExpression' &&
          c.object.type === 'Identifier' &&
          c.object.name === 'jest' &&
          c.property.type === 'Identifier' &&
          ['mock', 'doMock', 'requireActual', 'unmock'].includes(c.property.name);
        if ((isRequire || isJestMock) && n.arguments.length > 0) check(n, lit(n.arguments[0]));
      },
    };
  },
};
