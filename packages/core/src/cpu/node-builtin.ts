/**
 * A Node built-in module reached at run time (`process.getBuiltinModule`, or a `require`
 * alias), never by an import statement a bundler would follow: browser bundles pull in no
 * Node module. Undefined outside Node or when the module cannot be had.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const nodeRequire: any = typeof require === 'function' ? require : undefined;

export function nodeBuiltin<T>(name: string): T | undefined {
  const p = (globalThis as { process?: { versions?: { node?: string }; getBuiltinModule?: (n: string) => unknown } })
    .process;
  if (typeof p?.versions?.node !== 'string') return undefined;
  try {
    return (p.getBuiltinModule?.(name) ?? nodeRequire?.(name)) as T | undefined;
  } catch {
    return undefined;
  }
}
